#!/usr/bin/env bash
# Builds the operator tools the deployment tests run: helm (the chart: lint, template) and
# promtool (the alert rules: check, unit tests), at the versions pinned in test/tools/helm/go.mod
# and test/tools/promtool/go.mod, once, into the cache outside the repository (see
# scripts/lib/go-binary-cache.sh). Prints `export KEA_HELM_BIN=...` and `export
# KEA_PROMTOOL_BIN=...` on stdout, for `eval "$(bash scripts/build-tools.sh)"`; build logs go to
# stderr. Cold, on a 2-core machine: helm about 4 minutes, promtool about 6.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo_root/scripts/lib/go-binary-cache.sh"

helm_dir="$repo_root/test/tools/helm"
helm_version="$(pinned_version build-tools "$helm_dir/go.mod" helm.sh/helm/v4)"
helm="$(build_cached helm "$helm_version" "$helm_dir" helm.sh/helm/v4/cmd/helm \
  "-s -w -X helm.sh/helm/v4/internal/version.version=$helm_version -X helm.sh/helm/v4/internal/version.gitTreeState=clean" | tail -n1)"

promtool_dir="$repo_root/test/tools/promtool"
promtool_version="$(pinned_version build-tools "$promtool_dir/go.mod" github.com/prometheus/prometheus)"
promtool="$(build_cached promtool "$promtool_version" "$promtool_dir" github.com/prometheus/prometheus/cmd/promtool \
  "-s -w -X github.com/prometheus/common/version.Version=$promtool_version" | tail -n1)"

for bin in "$helm" "$promtool"; do
  if [[ ! -x "$bin" ]]; then
    echo "build-tools: $bin is not an executable file" >&2
    exit 1
  fi
done
printf 'export KEA_HELM_BIN=%q\n' "$helm"
printf 'export KEA_PROMTOOL_BIN=%q\n' "$promtool"
