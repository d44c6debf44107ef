//go:build tools

// Package tools pins the CNI reference plugins the deployed-as-shipped suite's pod network uses
// (bridge, host-local, loopback, portmap) into this module's dependency graph so that `go build`
// of each resolves from go.mod/go.sum alone. It is never compiled.
package tools

import (
	_ "github.com/containernetworking/plugins/plugins/ipam/host-local"
	_ "github.com/containernetworking/plugins/plugins/main/bridge"
	_ "github.com/containernetworking/plugins/plugins/main/loopback"
	_ "github.com/containernetworking/plugins/plugins/meta/portmap"
)
