#!/usr/bin/env bash
# Builds the etcd binary used by the end-to-end tests (test/e2e).
#
# The etcd version is the one pinned in test/e2e/etcd/go.mod; it follows the
# etcd release that the pinned kube-apiserver (test/e2e/apiserver/go.mod) is
# built and tested against. Debian's etcd-server package is not used: bookworm
# ships etcd 3.4.23, older than the oldest etcd that current kube-apiserver
# releases support, and with it the apiserver disables RequestWatchProgress and
# answers watch-list requests with a 500 (see test/e2e/README.md).
#
# The binary is built once into a cache outside the repository and reused:
#   ${KEA_CACHE_DIR:-$HOME/.cache/kube-eviction-agent}/etcd-<version>
# Changing the pin in go.mod changes the file name, so the next run rebuilds.
# Nothing is installed system-wide and no service is started. Build output
# goes to stderr; the last line on stdout is the absolute path of the binary.
#
# Environment:
#   KEA_CACHE_DIR   cache directory (default $HOME/.cache/kube-eviction-agent)
#   GO              go command to use (default: `go` on PATH, else /usr/local/go/bin/go)
#   KEA_REBUILD=1   build even if the cached binary exists
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod_dir="$repo_root/test/e2e/etcd"
cache_dir="${KEA_CACHE_DIR:-${HOME:-/root}/.cache/kube-eviction-agent}"

if [[ -n "${GO:-}" ]]; then
  go_cmd="$GO"
elif command -v go >/dev/null 2>&1; then
  go_cmd="go"
elif [[ -x /usr/local/go/bin/go ]]; then
  go_cmd="/usr/local/go/bin/go"
else
  echo "install-etcd: no Go toolchain found (set GO=/path/to/go)" >&2
  exit 1
fi

version="$(awk '$1 == "go.etcd.io/etcd/server/v3" && $2 ~ /^v[0-9]/ { print $2; exit } $1 == "require" && $2 == "go.etcd.io/etcd/server/v3" { print $3; exit }' "$mod_dir/go.mod")"
if [[ ! "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "install-etcd: cannot read the go.etcd.io/etcd/server/v3 version from $mod_dir/go.mod (got '$version')" >&2
  exit 1
fi

out="$cache_dir/etcd-$version"
if [[ -x "$out" && "${KEA_REBUILD:-0}" != "1" ]]; then
  echo "$out"
  exit 0
fi

mkdir -p "$cache_dir"
tmp="$(mktemp "$cache_dir/.etcd-$version.XXXXXX")"
trap 'rm -f "$tmp"' EXIT

echo "install-etcd: building etcd $version with $("$go_cmd" version)" >&2
start=$(date +%s)
(
  cd "$mod_dir"
  # Never fetch a different Go toolchain behind the caller's back; fail instead.
  export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
  export CGO_ENABLED=0
  "$go_cmd" build -trimpath -ldflags="-s -w" -o "$tmp" go.etcd.io/etcd/server/v3
)
chmod 0755 "$tmp"
mv -f "$tmp" "$out"
trap - EXIT
echo "install-etcd: built $out in $(( $(date +%s) - start ))s" >&2
echo "$out"
