#!/usr/bin/env bash
# The fleet benchmark from a fresh clone, in one command:
#
#   bash scripts/fleet-bench.sh --nodes 100
#
# Installs the npm dependencies if they are missing, builds (once, into the cache outside the
# repository) the control plane, the real kubelet's binaries and helm, then runs
# `npm run bench:fleet` with the arguments given (docs/scale.md lists them). The first build takes
# about half an hour on 2 cores; later runs start at once. The machine's benchmark lock
# (KEA_FLEET_LOCK, /tmp/kea-heavy.lock unless set; empty: none) is held shared for the set-up and
# exclusively for the measured phases.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
if [[ ! -d node_modules ]]; then
  npm ci --no-audit --no-fund
fi
eval "$(bash scripts/e2e-env.sh)"
eval "$(bash scripts/build-tools.sh)"
export KEA_FLEET_LOCK="${KEA_FLEET_LOCK-/tmp/kea-heavy.lock}"
if [[ -z "$KEA_FLEET_LOCK" ]]; then
  unset KEA_FLEET_LOCK
fi
exec npm run bench:fleet -- "$@"
