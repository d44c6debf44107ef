#!/usr/bin/env bash
# Builds the kube-apiserver binary used by the end-to-end tests (test/e2e), at the Kubernetes
# version pinned in test/e2e/apiserver/go.mod, once, into a cache outside the repository (see
# scripts/lib/go-binary-cache.sh). Needs Go (>= the go directive there) and the Go module proxy on
# a cold module cache. The last line on stdout is the binary's path.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo_root/scripts/lib/go-binary-cache.sh"

mod_dir="$repo_root/test/e2e/apiserver"
version="$(pinned_version build-apiserver "$mod_dir/go.mod" k8s.io/kubernetes)"
[[ "$version" =~ ^v([0-9]+)\.([0-9]+)\. ]]
major="${BASH_REMATCH[1]}"
minor="${BASH_REMATCH[2]}"

# Stamp the version the way the upstream release build does, so /version and the startup log
# report the real release instead of v0.0.0-master.
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done

build_cached kube-apiserver "$version" "$mod_dir" k8s.io/kubernetes/cmd/kube-apiserver "$ldflags"
