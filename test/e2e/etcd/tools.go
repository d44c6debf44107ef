//go:build tools

// Package tools pins the etcd main package into this module's dependency graph
// so that `go build go.etcd.io/etcd/server/v3` resolves from go.mod/go.sum
// alone. It is never compiled.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
)
