//go:build tools

// Package tools pins the helm command into this module's dependency graph so that
// `go build helm.sh/helm/v4/cmd/helm` resolves from go.mod/go.sum alone. It is never compiled.
package tools

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
