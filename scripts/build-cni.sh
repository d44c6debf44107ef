#!/usr/bin/env bash
# Builds the CNI reference plugins of the end-to-end tests' pod network (test/e2e, the deployed-as-
# shipped suite: a bridge in the cluster's own network namespace) — bridge, host-local, loopback and
# portmap — at the version pinned in test/e2e/cni/go.mod, once, statically, into a cache outside
# the repository (see scripts/lib/go-binary-cache.sh).
#
# Prints the directory holding the four plugins (containerd's CNI bin_dir) as its last line.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo_root/scripts/lib/go-binary-cache.sh"

mod_dir="$repo_root/test/e2e/cni"
module=github.com/containernetworking/plugins
version="$(pinned_version build-cni "$mod_dir/go.mod" "$module")"
ldflags="-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$version"

mapfile -t plugins < <(build_cached_set "$version" "$mod_dir" "$ldflags" \
  "bridge=$module/plugins/main/bridge" \
  "host-local=$module/plugins/ipam/host-local" \
  "loopback=$module/plugins/main/loopback" \
  "portmap=$module/plugins/meta/portmap")
# The process substitution hides build_cached_set's exit status: a failed build prints no paths.
if (( ${#plugins[@]} != 4 )); then
  echo "build-cni: the CNI plugins did not build (see the go build output above)" >&2
  exit 1
fi

# containerd looks plugins up by their CNI type name in one directory of their own: link the cached
# binaries (named <plugin>-<version>, as every cached binary is) there under those names.
cache_dir="${KEA_CACHE_DIR:-${HOME:-/root}/.cache/kube-eviction-agent}"
bin_dir="$cache_dir/cni-bin-$version"
mkdir -p "$bin_dir"
for path in "${plugins[@]}"; do
  name="$(basename "$path")"
  ln -sfn "$path" "$bin_dir/${name%-"$version"}"
done
echo "$bin_dir"
