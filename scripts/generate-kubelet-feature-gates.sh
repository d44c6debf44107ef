#!/usr/bin/env bash
# Regenerates src/config/kubelet-feature-gates.ts: every feature gate the kubelet of the Kubernetes
# version pinned in test/e2e/kubernetes/go.mod knows, with its stage and default at that version,
# whether it is locked, and what it depends on, read from the kubelet's own registry by
# scripts/feature-gates/main.go. Needs Go and the module cache the e2e builds use.
#
# Usage: scripts/generate-kubelet-feature-gates.sh   (writes the file; prints its path)
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod_dir="$repo_root/test/e2e/kubernetes"
version="$(sed -n 's/^require k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$mod_dir/go.mod")"
[[ "$version" =~ ^v([0-9]+)\.([0-9]+)\. ]] || { echo "generate-kubelet-feature-gates: no k8s.io/kubernetes version in $mod_dir/go.mod" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$mod_dir/go.mod" "$mod_dir/go.sum" "$work/"
sed -i 's#^module .*#module kubelet-feature-gates#' "$work/go.mod"
cp "$repo_root/scripts/feature-gates/main.go" "$work/main.go"
(cd "$work" && GOFLAGS=-mod=mod go run . >"$work/gates.json")
out="$repo_root/src/config/kubelet-feature-gates.ts"
node "$repo_root/scripts/feature-gates/to-typescript.mjs" "$work/gates.json" "$version" >"$out"
echo "$out"
