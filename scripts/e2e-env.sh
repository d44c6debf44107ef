#!/usr/bin/env bash
# Makes sure the end-to-end tests' binaries exist (building them on first use, which takes
# minutes; later runs reuse the cache) and prints the environment that points the tests at them:
#
#   eval "$(bash scripts/e2e-env.sh)"
#   npm test
#
# Prints `export KEA_APISERVER_BIN=...`, `export KEA_ETCD_BIN=...` and `export KEA_E2E_REQUIRED=1`
# on stdout (with KEA_E2E_REQUIRED set, the end-to-end tests fail instead of skipping when
# something they need is missing). Build logs go to stderr. Fails if either build fails.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
etcd="$(bash "$repo_root/scripts/install-etcd.sh" | tail -n1)"
apiserver="$(bash "$repo_root/scripts/build-apiserver.sh" | tail -n1)"
for bin in "$etcd" "$apiserver"; do
  if [[ ! -x "$bin" ]]; then
    echo "e2e-env: $bin is not an executable file" >&2
    exit 1
  fi
done
printf 'export KEA_ETCD_BIN=%q\n' "$etcd"
printf 'export KEA_APISERVER_BIN=%q\n' "$apiserver"
printf 'export KEA_E2E_REQUIRED=1\n'
