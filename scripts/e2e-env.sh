#!/usr/bin/env bash
# Makes sure the end-to-end tests' binaries exist (building them on first use, which takes
# minutes; later runs reuse the cache) and prints the environment that points the tests at them:
#
#   eval "$(bash scripts/e2e-env.sh)"
#   npm test
#
# Prints on stdout `export` lines for KEA_ETCD_BIN and KEA_APISERVER_BIN (the control plane), for
# KEA_KUBELET_BIN, KEA_KUBECTL_BIN, KEA_CONTAINERD_BIN, KEA_CONTAINERD_SHIM_BIN, KEA_CTR_BIN and
# KEA_RUNC_BIN (the real node of the "real kubelet" suite), for KEA_CONTROLLER_MANAGER_BIN,
# KEA_SCHEDULER_BIN, KEA_KUBE_PROXY_BIN and KEA_CNI_BIN_DIR (the cluster of the deployed-as-shipped
# suite: controllers, kube-proxy and the CNI plugins), and KEA_E2E_REQUIRED=1 (with it set,
# the end-to-end tests fail instead of skipping when something they need is missing). Build logs
# go to stderr. Fails if a build fails or runc is not installed (Debian: apt-get install -y runc).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
etcd="$(bash "$repo_root/scripts/install-etcd.sh" | tail -n1)"
# One `go build` for the six: they share most of their packages.
mapfile -t kubernetes < <(bash "$repo_root/scripts/build-kubernetes.sh" kube-apiserver kubelet kubectl kube-controller-manager kube-scheduler kube-proxy)
mapfile -t containerd < <(bash "$repo_root/scripts/build-containerd.sh")
cni="$(bash "$repo_root/scripts/build-cni.sh" | tail -n1)"
if (( ${#kubernetes[@]} != 6 || ${#containerd[@]} != 3 )); then
  echo "e2e-env: a build script did not print its binaries' paths" >&2
  exit 1
fi
runc="${KEA_RUNC_BIN:-$(command -v runc || true)}"
if [[ -z "$runc" ]]; then
  echo "e2e-env: runc is not installed (apt-get install -y runc)" >&2
  exit 1
fi

declare -A bins=(
  [KEA_ETCD_BIN]="$etcd"
  [KEA_APISERVER_BIN]="${kubernetes[0]}"
  [KEA_KUBELET_BIN]="${kubernetes[1]}"
  [KEA_KUBECTL_BIN]="${kubernetes[2]}"
  [KEA_CONTAINERD_BIN]="${containerd[0]}"
  [KEA_CONTAINERD_SHIM_BIN]="${containerd[1]}"
  [KEA_CTR_BIN]="${containerd[2]}"
  [KEA_RUNC_BIN]="$runc"
  [KEA_CONTROLLER_MANAGER_BIN]="${kubernetes[3]}"
  [KEA_SCHEDULER_BIN]="${kubernetes[4]}"
  [KEA_KUBE_PROXY_BIN]="${kubernetes[5]}"
)
for name in KEA_ETCD_BIN KEA_APISERVER_BIN KEA_KUBELET_BIN KEA_KUBECTL_BIN KEA_CONTAINERD_BIN KEA_CONTAINERD_SHIM_BIN KEA_CTR_BIN KEA_RUNC_BIN KEA_CONTROLLER_MANAGER_BIN KEA_SCHEDULER_BIN KEA_KUBE_PROXY_BIN; do
  if [[ ! -x "${bins[$name]}" ]]; then
    echo "e2e-env: ${bins[$name]} ($name) is not an executable file" >&2
    exit 1
  fi
  printf 'export %s=%q\n' "$name" "${bins[$name]}"
done
printf 'export KEA_CNI_BIN_DIR=%q\n' "$cni"
printf 'export KEA_E2E_REQUIRED=1\n'
