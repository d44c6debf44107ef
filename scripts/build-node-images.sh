#!/usr/bin/env bash
# Builds the container images of the end-to-end tests' real kubelet (the "real kubelet" suite),
# without a container engine or a registry: test/e2e/node-image/workload.c compiled with
# `cc -static`, put alone in one layer, and two images over it in one docker-archive tarball
# (the format `docker save` writes and `ctr images import` reads):
#
#   localhost/kea-e2e/pause:1      the pod sandbox (entrypoint `kea-workload pause`)
#   localhost/kea-e2e/workload:1   the test workloads (entrypoint `kea-workload`, args from the pod)
#
# The tarball is built once into ${KEA_CACHE_DIR:-$HOME/.cache/kube-eviction-agent}, named after a
# hash of the source and this script, so an edit rebuilds it; the last line on stdout is its path.
# Needs a C compiler with a static libc (Debian: gcc, libc6-dev), tar and sha256sum.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source_file="$repo_root/test/e2e/node-image/workload.c"
cache_dir="${KEA_CACHE_DIR:-${HOME:-/root}/.cache/kube-eviction-agent}"

export PAUSE_IMAGE=localhost/kea-e2e/pause:1
export WORKLOAD_IMAGE=localhost/kea-e2e/workload:1

hash="$(cat "$source_file" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)"
out="$cache_dir/node-images-$hash.tar"
if [[ -f "$out" && "${KEA_REBUILD:-0}" != "1" ]]; then
  echo "$out"
  exit 0
fi

case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  *) echo "build-node-images: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac
cc_cmd="${CC:-cc}"
mkdir -p "$cache_dir"
work="$(mktemp -d "$cache_dir/.node-images.XXXXXX")"
# shellcheck disable=SC2064 # the path is fixed now, on purpose
trap "rm -rf '$work'" EXIT

mkdir -p "$work/rootfs" "$work/archive"
"$cc_cmd" -static -O2 -Wall -Wextra -Werror -o "$work/rootfs/kea-workload" "$source_file"
# One reproducible layer: fixed owner, mode and time, sorted names.
tar --create --file="$work/layer.tar" --directory="$work/rootfs" --sort=name --owner=0 --group=0 \
  --numeric-owner --mtime=@0 --mode=0755 --format=gnu kea-workload
layer_sha="$(sha256sum "$work/layer.tar" | cut -d' ' -f1)"
mv "$work/layer.tar" "$work/archive/$layer_sha.tar"

# config FILE ENTRYPOINT_JSON CMD_JSON: an image configuration over the one layer; prints its digest.
config() {
  local file="$work/archive/$1"
  printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":%s,"Cmd":%s,"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created_by":"scripts/build-node-images.sh"}]}' \
    "$arch" "$2" "$3" "$layer_sha" >"$file"
  local sha
  sha="$(sha256sum "$file" | cut -d' ' -f1)"
  mv "$file" "$work/archive/$sha.json"
  echo "$sha"
}
pause_config="$(config pause.json '["/kea-workload","pause"]' 'null')"
workload_config="$(config workload.json '["/kea-workload"]' '["pause"]')"
printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s.tar"]},{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s.tar"]}]\n' \
  "$pause_config" "$PAUSE_IMAGE" "$layer_sha" "$workload_config" "$WORKLOAD_IMAGE" "$layer_sha" >"$work/archive/manifest.json"

tar --create --file="$work/images.tar" --directory="$work/archive" --sort=name --owner=0 --group=0 \
  --numeric-owner --mtime=@0 --format=gnu -- $(cd "$work/archive" && ls)
mv -f "$work/images.tar" "$out"
echo "build-node-images: built $out ($PAUSE_IMAGE, $WORKLOAD_IMAGE)" >&2
echo "$out"
