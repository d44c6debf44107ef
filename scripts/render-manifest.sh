#!/usr/bin/env bash
# Renders deploy/daemonset.yaml and deploy/node-restriction.yaml from the Helm chart (deploy/chart),
# their one source: the chart with its default values, released as kube-eviction-agent in the
# kube-eviction-agent namespace. daemonset.yaml holds every object but the node restriction, and the
# Namespace (labelled for Pod Security Admission, as the README's install commands label it: the
# chart does not create its namespace, since Helm stores the release there first);
# node-restriction.yaml holds the chart's templates/node-restriction.yaml. Needs KEA_HELM_BIN
# (scripts/build-tools.sh) or helm on PATH. `--check` compares instead of writing
# (test/deploy/chart.test.ts does the same).
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
helm="${KEA_HELM_BIN:-helm}"
out="$repo_root/deploy/daemonset.yaml"
restriction_out="$repo_root/deploy/node-restriction.yaml"
chart=(kube-eviction-agent "$repo_root/deploy/chart" --namespace kube-eviction-agent)

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
# scripts/render-manifest.sh: edit the chart, not this file. With Helm, the README's install
# commands (which also install node-restriction.yaml's policies, from the chart).
---
apiVersion: v1
kind: Namespace
metadata:
  name: kube-eviction-agent
  labels:
    app.kubernetes.io/name: kube-eviction-agent
    # The agent's pod is not privileged, but it shares the host's PID namespace, mounts host
    # directories and adds CAP_DAC_READ_SEARCH: the baseline level forbids all three, so Pod
    # Security Admission must admit the privileged level in this namespace, and only here.
    pod-security.kubernetes.io/enforce: privileged
    pod-security.kubernetes.io/audit: privileged
    pod-security.kubernetes.io/warn: privileged

HEADER
  # --skip-tests: the helm test pod is for `helm test`, not for kubectl apply.
  "$helm" template "${chart[@]}" --skip-tests --set nodeRestriction.enabled=false
}

render_restriction() {
  cat <<'HEADER'
# kube-eviction-agent: the API server holds every agent to its own node.
#
#   kubectl apply -f deploy/
#
# Rendered from the Helm chart in deploy/chart (templates/node-restriction.yaml) with its default
# values, by scripts/render-manifest.sh: edit the chart, not this file. It matches the
# ServiceAccount kube-eviction-agent/kube-eviction-agent and the prefix kube-eviction-agent.io/ of
# daemonset.yaml; with other names or another prefix, install the chart (which binds the policies
# to the release's) or render it with your values.
HEADER
  "$helm" template "${chart[@]}" --show-only templates/node-restriction.yaml
}

if [[ "${1:-}" == "--check" ]]; then
  diff -u "$out" <(render) && diff -u "$restriction_out" <(render_restriction) && echo "render-manifest: $out and $restriction_out are up to date"
else
  render > "$out"
  render_restriction > "$restriction_out"
  echo "render-manifest: wrote $out and $restriction_out"
fi
