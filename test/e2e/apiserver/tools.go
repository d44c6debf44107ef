//go:build tools

// Package tools pins the kube-apiserver main package into this module's
// dependency graph so that `go build k8s.io/kubernetes/cmd/kube-apiserver`
// resolves from go.mod/go.sum alone. It is never compiled.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
