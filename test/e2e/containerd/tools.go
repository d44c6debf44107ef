//go:build tools

// Package tools pins containerd's daemon, its runc shim and its ctr client
// into this module's dependency graph so that `go build` of each resolves from
// go.mod/go.sum alone. It is never compiled.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
