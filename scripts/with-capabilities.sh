#!/usr/bin/env bash
# Runs a command as root with exactly the given Linux capabilities, as the DaemonSet's container runs
# the agent: every other capability is dropped from the bounding set (capsh --drop), so neither the
# command nor anything it starts can hold one, and no-new-privs is set (allowPrivilegeEscalation:
# false). Needs root and capsh (Debian package libcap2-bin).
#
# Usage: scripts/with-capabilities.sh CAPS COMMAND [ARG...]
#   CAPS  comma-separated names (cap_kill,cap_dac_read_search), `none`, or `daemonset`: the
#         capabilities.add list of the agent's container in deploy/daemonset.yaml
#
# The command sees KEA_CAPABILITY_SET=<the set> in its environment.
#
# Test fixtures need two things the agent neither has nor needs, and this script does them for the
# command:
# - creating a cgroup right below a hierarchy's root (mode 0555) needs CAP_DAC_OVERRIDE: it creates
#   /sys/fs/cgroup/memory/kea-test-caps-<pid> (KEA_TEST_CGROUP_PARENT) for the tests' sandboxes, and
#   removes it afterwards;
# - mounting a tmpfs needs CAP_SYS_ADMIN: it mounts and unmounts tmpfs filesystems on request, only
#   below $TMPDIR and only at paths containing `/kea-statfs-`. KEA_TEST_MOUNT_HELPER names a
#   directory whose `requests` FIFO takes one line per request,
#     <reply-fifo> mount <size-MiB> <inodes> <dir>    or    <reply-fifo> umount <dir>
#   and each answer (`ok`, or `error <message>`) is written to <reply-fifo>.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 CAPS COMMAND [ARG...]" >&2
  exit 2
fi
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
wanted="$1"
shift

if [[ "$(id -u)" != 0 ]]; then
  echo "with-capabilities: must run as root" >&2
  exit 1
fi
if ! command -v capsh >/dev/null 2>&1; then
  echo "with-capabilities: capsh not found (apt-get install -y libcap2-bin)" >&2
  exit 1
fi

if [[ "$wanted" == daemonset ]]; then
  wanted="$(cd "$repo_root" && node --input-type=module -e "
    import { readFileSync } from 'node:fs';
    import { parseAllDocuments } from 'yaml';
    const ds = parseAllDocuments(readFileSync('deploy/daemonset.yaml', 'utf8')).map((d) => d.toJS()).find((o) => o?.kind === 'DaemonSet');
    const agent = ds.spec.template.spec.containers.find((c) => c.name === 'agent');
    console.log(agent.securityContext.capabilities.add.map((c) => 'cap_' + c.toLowerCase()).join(','));
  ")"
fi
[[ "$wanted" == none ]] && wanted=""

# Everything in the current bounding set that is not wanted is dropped; a wanted capability this
# process does not hold cannot be granted, which is an error.
bounding="$(capsh --print | sed -n 's/^Bounding set =//p' | tr ',' '\n' | sed '/^$/d')"
for cap in ${wanted//,/ }; do
  if ! grep -qxF "$cap" <<<"$bounding"; then
    echo "with-capabilities: $cap is not in this process's bounding set, so it cannot be granted" >&2
    exit 1
  fi
done
drop="$(grep -vxF -f <(tr ',' '\n' <<<"$wanted" | sed '/^$/d'; echo '-') <<<"$bounding" | paste -sd, || true)"

helper_dir="$(mktemp -d "${TMPDIR:-/tmp}/kea-mount-helper-XXXXXX")"
mkfifo -m 0600 "$helper_dir/requests"
tmp_root="$(cd "${TMPDIR:-/tmp}" && pwd -P)"

answer() {
  local reply="$1"
  shift
  [[ -p "$reply" ]] && printf '%s\n' "$*" >"$reply"
}

serve_mounts() {
  local reply op a b dir
  exec 3<>"$helper_dir/requests"
  while read -r reply op a b dir <&3; do
    case "$op" in
      mount) ;;
      umount) dir="$a" ;;
      *) answer "$reply" "error unknown request $op"; continue ;;
    esac
    if [[ "$dir" != "$tmp_root"/* || "$dir" != */kea-statfs-* || "$dir" == *..* ]]; then
      answer "$reply" "error refused: $dir is not a kea-statfs- directory below $tmp_root"
      continue
    fi
    if [[ "$op" == mount ]]; then
      if [[ ! "$a" =~ ^[0-9]+$ || ! "$b" =~ ^[0-9]+$ ]]; then
        answer "$reply" "error bad size or inode count"
        continue
      fi
      if out="$(mount -t tmpfs -o "size=${a}m,nr_inodes=$b" tmpfs "$dir" 2>&1)"; then answer "$reply" ok; else answer "$reply" "error $out"; fi
    else
      if out="$(umount "$dir" 2>&1 || umount -l "$dir" 2>&1)"; then answer "$reply" ok; else answer "$reply" "error $out"; fi
    fi
  done
}

# Creating a cgroup right below a hierarchy's root (mode 0555) needs CAP_DAC_OVERRIDE, which the
# agent neither has nor needs (it creates no cgroups): the tests' cgroup sandboxes go below this one.
cgroup_parent="kea-test-caps-$$"
memory_root=/sys/fs/cgroup/memory
[[ -d "$memory_root" ]] && mkdir "$memory_root/$cgroup_parent"

serve_mounts &
server=$!
cleanup() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  if [[ -d "$memory_root/$cgroup_parent" ]]; then
    find "$memory_root/$cgroup_parent" -depth -type d -exec rmdir {} \; 2>/dev/null || echo "with-capabilities: $memory_root/$cgroup_parent could not be removed" >&2
  fi
  # Whatever the command left mounted (a test that died before its cleanup).
  { grep -F " $tmp_root/" /proc/self/mounts || true; } | awk '$1 == "tmpfs" && $2 ~ /kea-statfs-/ { print $2 }' | sort -r | while read -r dir; do umount -l "$dir" || true; done
  rm -rf "$helper_dir"
}
trap cleanup EXIT

echo "with-capabilities: running with ${wanted:-no capabilities}" >&2
status=0
KEA_CAPABILITY_SET="${wanted:-none}" KEA_TEST_MOUNT_HELPER="$helper_dir" KEA_TEST_CGROUP_PARENT="$cgroup_parent" \
  capsh --drop="$drop" --no-new-privs -- -c 'exec "$@"' with-capabilities "$@" || status=$?
exit "$status"
