#!/usr/bin/env bash
# Builds the kube-apiserver binary used by the end-to-end tests (test/e2e).
#
# The Kubernetes version is the one pinned in test/e2e/apiserver/go.mod. The
# binary is built once into a cache outside the repository and reused:
#   ${KEA_CACHE_DIR:-$HOME/.cache/kube-eviction-agent}/kube-apiserver-<version>
# Changing the pin in go.mod changes the file name, so the next run rebuilds.
#
# Needs Go (>= the go directive in test/e2e/apiserver/go.mod) and access to the
# Go module proxy on a cold module cache. Build output goes to stderr; the last
# line on stdout is the absolute path of the binary.
#
# Environment:
#   KEA_CACHE_DIR   cache directory (default $HOME/.cache/kube-eviction-agent)
#   GO              go command to use (default: `go` on PATH, else /usr/local/go/bin/go)
#   KEA_REBUILD=1   build even if the cached binary exists
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod_dir="$repo_root/test/e2e/apiserver"
cache_dir="${KEA_CACHE_DIR:-${HOME:-/root}/.cache/kube-eviction-agent}"

if [[ -n "${GO:-}" ]]; then
  go_cmd="$GO"
elif command -v go >/dev/null 2>&1; then
  go_cmd="go"
elif [[ -x /usr/local/go/bin/go ]]; then
  go_cmd="/usr/local/go/bin/go"
else
  echo "build-apiserver: no Go toolchain found (set GO=/path/to/go)" >&2
  exit 1
fi

version="$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v[0-9]/ { print $2; exit } $1 == "require" && $2 == "k8s.io/kubernetes" { print $3; exit }' "$mod_dir/go.mod")"
if [[ ! "$version" =~ ^v([0-9]+)\.([0-9]+)\.[0-9]+$ ]]; then
  echo "build-apiserver: cannot read the k8s.io/kubernetes version from $mod_dir/go.mod (got '$version')" >&2
  exit 1
fi
major="${BASH_REMATCH[1]}"
minor="${BASH_REMATCH[2]}"

out="$cache_dir/kube-apiserver-$version"
if [[ -x "$out" && "${KEA_REBUILD:-0}" != "1" ]]; then
  echo "$out"
  exit 0
fi

mkdir -p "$cache_dir"
tmp="$(mktemp "$cache_dir/.kube-apiserver-$version.XXXXXX")"
trap 'rm -f "$tmp"' EXIT

# Stamp the version the way the upstream release build does, so /version and
# the startup log report the real release instead of v0.0.0-master.
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done

echo "build-apiserver: building kube-apiserver $version with $("$go_cmd" version) (a cold build takes several minutes)" >&2
start=$(date +%s)
(
  cd "$mod_dir"
  # Never fetch a different Go toolchain behind the caller's back; fail instead.
  export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
  export CGO_ENABLED=0
  "$go_cmd" build -trimpath -ldflags="$ldflags" -o "$tmp" k8s.io/kubernetes/cmd/kube-apiserver
)
chmod 0755 "$tmp"
mv -f "$tmp" "$out"
trap - EXIT
echo "build-apiserver: built $out in $(( $(date +%s) - start ))s" >&2
echo "$out"
