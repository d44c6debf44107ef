#!/usr/bin/env bash
# Renders deploy/daemonset.yaml from the Helm chart (deploy/chart), its one source: the chart with
# its default values, released as kube-eviction-agent in the kube-eviction-agent namespace, which
# the manifest creates (namespace.create). Needs KEA_HELM_BIN (scripts/build-tools.sh) or helm on
# PATH. `--check` compares instead of writing (test/deploy/chart.test.ts does the same).
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
helm="${KEA_HELM_BIN:-helm}"
out="$repo_root/deploy/daemonset.yaml"

render() {
  cat <<'HEADER'
# kube-eviction-agent: everything needed to run the agent on every node of a cluster.
#
#   kubectl apply -f deploy/
#
# This file: a Namespace, a NetworkPolicy (the metrics port for the scrapers, the probe port for the
# node), a ServiceAccount with least-privilege RBAC, the configuration (a ConfigMap holding an
# AgentConfiguration), and the DaemonSet. node-restriction.yaml beside it holds every
# agent to its own node (Kubernetes 1.32 or later). docs/deployment.md explains every permission,
# mount and setting below; docs/configuration.md is the configuration reference.
#
# Rendered from the Helm chart in deploy/chart with its default values, by
# scripts/render-manifest.sh: edit the chart, not this file. With Helm:
#
#   helm install kube-eviction-agent deploy/chart -n kube-eviction-agent --set namespace.create=true
HEADER
  "$helm" template kube-eviction-agent "$repo_root/deploy/chart" --namespace kube-eviction-agent --set namespace.create=true
}

if [[ "${1:-}" == "--check" ]]; then
  diff -u "$out" <(render) && echo "render-manifest: $out is up to date"
else
  render > "$out"
  echo "render-manifest: wrote $out"
fi
