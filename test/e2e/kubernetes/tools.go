//go:build tools

// Package tools pins the kube-apiserver, kube-controller-manager,
// kube-scheduler, kube-proxy, kubelet and kubectl main packages into this
// module's dependency graph so that `go build` of each resolves from
// go.mod/go.sum alone. It is never compiled.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
