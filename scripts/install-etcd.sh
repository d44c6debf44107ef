#!/usr/bin/env bash
# Builds the etcd binary used by the end-to-end tests (test/e2e), at the version pinned in
# test/e2e/etcd/go.mod (the etcd release the pinned kube-apiserver is built and tested against),
# once, into a cache outside the repository (see scripts/lib/go-binary-cache.sh). Nothing is
# installed system-wide and no service is started. The last line on stdout is the binary's path.
#
# Debian's etcd-server package is not used: bookworm ships etcd 3.4.23, older than the oldest etcd
# current kube-apiserver releases support, and with it the apiserver disables RequestWatchProgress
# and answers watch-list requests with a 500 (see test/e2e/README.md).
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo_root/scripts/lib/go-binary-cache.sh"

mod_dir="$repo_root/test/e2e/etcd"
version="$(pinned_version install-etcd "$mod_dir/go.mod" go.etcd.io/etcd/server/v3)"
build_cached etcd "$version" "$mod_dir" go.etcd.io/etcd/server/v3 "-s -w"
