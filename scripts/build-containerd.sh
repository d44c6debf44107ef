#!/usr/bin/env bash
# Builds the container runtime of the end-to-end tests' real kubelet (test/e2e, the "real kubelet"
# suite) — containerd, its runc shim containerd-shim-runc-v2, and the ctr client — at the version
# pinned in test/e2e/containerd/go.mod, once, statically, into a cache outside the repository (see
# scripts/lib/go-binary-cache.sh). runc itself comes from Debian's `runc` package.
#
# Debian's containerd package is not used: bookworm ships containerd 1.6, whose CRI is too old for
# kubelet 1.37 (see test/e2e/README.md).
#
# Prints the paths of containerd, containerd-shim-runc-v2 and ctr, one a line, in that order.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo_root/scripts/lib/go-binary-cache.sh"

mod_dir="$repo_root/test/e2e/containerd"
module=github.com/containerd/containerd/v2
version="$(pinned_version build-containerd "$mod_dir/go.mod" "$module")"

# The snapshotters the tests do not use are left out (btrfs would need cgo anyway); the tests use
# overlayfs or native snapshots.
export GO_BUILD_FLAGS="-tags=no_btrfs,no_devmapper,no_zfs"
ldflags="-s -w -X $module/version.Version=$version -X $module/version.Package=$module"

build_cached_set "$version" "$mod_dir" "$ldflags" \
  "containerd=$module/cmd/containerd" \
  "containerd-shim-runc-v2=$module/cmd/containerd-shim-runc-v2" \
  "ctr=$module/cmd/ctr"
