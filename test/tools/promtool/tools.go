//go:build tools

// Package tools pins the promtool command into this module's dependency graph so that
// `go build github.com/prometheus/prometheus/cmd/promtool` resolves from go.mod/go.sum alone.
// It is never compiled.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
