#!/usr/bin/env bash
# Builds the Kubernetes binaries used by the end-to-end tests (test/e2e) — kube-apiserver, and for
# the real-kubelet suite kubelet and kubectl; kube-controller-manager, kube-scheduler and kube-proxy
# for a cluster whose DaemonSet controller, scheduler and Services run as in any other — at the
# version pinned in test/e2e/kubernetes/go.mod,
# once, into a cache outside the repository (see scripts/lib/go-binary-cache.sh). Needs Go (>= the
# go directive there) and the Go module proxy on a cold module cache.
#
# Usage: scripts/build-kubernetes.sh [kube-apiserver|kube-controller-manager|kube-scheduler|kube-proxy|kubelet|kubectl]...
#   With no argument, kube-apiserver, kubelet and kubectl. Prints each binary's path, one a line, in the order asked.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo_root/scripts/lib/go-binary-cache.sh"

mod_dir="$repo_root/test/e2e/kubernetes"
version="$(pinned_version build-kubernetes "$mod_dir/go.mod" k8s.io/kubernetes)"
[[ "$version" =~ ^v([0-9]+)\.([0-9]+)\. ]]
major="${BASH_REMATCH[1]}"
minor="${BASH_REMATCH[2]}"

wanted=("$@")
(( ${#wanted[@]} > 0 )) || wanted=(kube-apiserver kubelet kubectl)
pairs=()
for name in "${wanted[@]}"; do
  case "$name" in
    kube-apiserver | kube-controller-manager | kube-scheduler | kube-proxy | kubelet | kubectl) pairs+=("$name=k8s.io/kubernetes/cmd/$name") ;;
    *)
      echo "build-kubernetes: unknown binary '$name' (kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, kubelet or kubectl)" >&2
      exit 2
      ;;
  esac
done

# Stamp the version the way the upstream release build does, so /version, `kubelet --version`
# and the Node's kubeletVersion report the real release instead of v0.0.0-master.
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done

build_cached_set "$version" "$mod_dir" "$ldflags" "${pairs[@]}"
