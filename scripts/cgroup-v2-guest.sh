#!/usr/bin/env bash
# Runs one command in a fresh, throwaway cgroup v2 guest (QEMU, TCG: no KVM needed) and returns
# its exit status and output. The guest boots the host's Debian kernel with a small busybox
# initramfs, mounts the host's / read-only over 9p as its root (so it runs the host's own node and
# this checkout in place), mounts its own cgroup2 hierarchy at /sys/fs/cgroup with +cpu +memory
# +pids enabled for children, and mounts each --share directory read-write at its host path. The
# host's own cgroups are never touched: the guest has its own kernel, and the host's files are
# shared read-only.
#
#   scripts/cgroup-v2-guest.sh [options] [--] COMMAND [ARG...]
#
#   --share DIR        share DIR read-write at the same path in the guest (repeatable)
#   --env NAME[=VALUE] pass NAME (from this environment, or VALUE) to the command (repeatable);
#                      PATH is passed, HOME is /root, KEA_CGROUP_V2_GUEST=1 is set
#   --timeout SECONDS  kill the guest after this long (default 600, or $KEA_GUEST_TIMEOUT_S): exit 124
#   --memory MIB       guest memory (default 2048)
#   --cpus N           virtual CPUs (default 2)
#   --timing-file FILE write {"bootMs","commandMs","totalMs"} there after the run
#   --forward-port PORT give the guest a network (QEMU user mode, restricted: no route out) whose
#                      only reachable address is 10.0.2.100:PORT, carried to this machine's
#                      127.0.0.1:PORT (repeatable); the guest's own address is 10.0.2.15
#   --console-log FILE keep the guest's kernel console there (printed anyway when the guest fails)
#   --check            print why a guest cannot run here and exit 1, or print "ok" and exit 0
#
# The command runs as root in the guest's root cgroup, in the current directory (a checkout or
# directory under /tmp stays visible at its own path over the guest's own /tmp), with stdin from
# /dev/null; its stdout and stderr arrive here on this script's stdout and stderr as it runs.
# Exit status: the command's own; 124 after --timeout; 125 when the guest could not run it (the
# kernel console is printed on stderr); 130/143 when interrupted. Whatever happens (timeout,
# Ctrl-C, a hung or crashed guest), QEMU is killed and the temporary files are removed; QEMU
# also dies with this script if it is killed outright.
#
# Cost, measured on the shared 2-core development machine (TCG, load 4 to 12): 7 to 14 s from
# starting QEMU to the command starting (11 to 13 s end to end for `true`), and 4 to 6 s more for the
# first `node` start in a guest (cold 9p cache). The first run also unpacks the kernel and builds
# the initramfs (about 2 s), cached per kernel in
# ${KEA_CACHE_DIR:-$HOME/.cache/kube-eviction-agent}/cgroup-v2-guest/. See docs/cgroup-v2.md.
#
# Environment: KEA_GUEST_KERNEL (a vmlinuz; default the newest /boot/vmlinuz-*-amd64 with its
# modules in /lib/modules), KEA_GUEST_TIMEOUT_S, KEA_CACHE_DIR, KEA_GUEST_QEMU
# (default qemu-system-x86_64), KEA_GUEST_APPEND (more kernel arguments, e.g. `loglevel=7` to see
# the whole boot in --console-log).
#
# Needs the Debian packages qemu-system-x86, linux-image-amd64 and busybox-static.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
init_script="$script_dir/lib/cgroup-v2-guest-init.sh"
qemu="${KEA_GUEST_QEMU:-qemu-system-x86_64}"
cache_dir="${KEA_CACHE_DIR:-$HOME/.cache/kube-eviction-agent}/cgroup-v2-guest"
# The modules the guest needs to reach its root and its output ports, with their dependencies.
guest_modules=(virtio_pci virtio_console 9pnet_virtio 9p virtio_net)

die() {
  echo "cgroup-v2-guest: $*" >&2
  exit 125
}

shares=()
envs=()
timeout_s="${KEA_GUEST_TIMEOUT_S:-600}"
memory_mib=2048
cpus=2
timing_file=''
forward_ports=()
console_keep=''
check_only=0
while (($# > 0)); do
  case "$1" in
    --share) shares+=("$(cd "${2:?--share needs a directory}" && pwd)"); shift 2 ;;
    --env) envs+=("${2:?--env needs NAME or NAME=VALUE}"); shift 2 ;;
    --timeout) timeout_s="${2:?--timeout needs seconds}"; shift 2 ;;
    --memory) memory_mib="${2:?--memory needs MiB}"; shift 2 ;;
    --cpus) cpus="${2:?--cpus needs a count}"; shift 2 ;;
    --timing-file) timing_file="${2:?--timing-file needs a path}"; shift 2 ;;
    --forward-port) forward_ports+=("${2:?--forward-port needs a port}"); shift 2 ;;
    --console-log) console_keep="${2:?--console-log needs a path}"; shift 2 ;;
    --check) check_only=1; shift ;;
    --) shift; break ;;
    -*) die "unknown option $1 (see the header of $0)" ;;
    *) break ;;
  esac
done
[[ "$timeout_s" =~ ^[0-9]+$ && "$memory_mib" =~ ^[0-9]+$ && "$cpus" =~ ^[0-9]+$ ]] || die '--timeout, --memory and --cpus take whole numbers'
for port in "${forward_ports[@]}"; do [[ "$port" =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) || die "--forward-port takes a TCP port, not $port"; done

# The kernel to boot: KEA_GUEST_KERNEL, else the newest Debian amd64 kernel with its modules.
find_kernel() {
  if [[ -n "${KEA_GUEST_KERNEL:-}" ]]; then
    echo "$KEA_GUEST_KERNEL"
    return
  fi
  local found='' candidate
  for candidate in /boot/vmlinuz-*-amd64; do
    [[ -e "$candidate" && -d "/lib/modules/${candidate#/boot/vmlinuz-}" ]] && found="$(printf '%s\n%s\n' "$found" "$candidate" | sort -V | tail -n1)"
  done
  echo "$found"
}

# Why a guest cannot run here, or nothing.
unavailable_reason() {
  command -v "$qemu" >/dev/null 2>&1 || { echo "$qemu not found (apt-get install qemu-system-x86)"; return; }
  command -v busybox >/dev/null 2>&1 || { echo 'busybox not found (apt-get install busybox-static)'; return; }
  [[ "$(ldd "$(command -v busybox)" 2>&1 || true)" == *'not a dynamic executable'* ]] || { echo "$(command -v busybox) is not statically linked (apt-get install busybox-static)"; return; }
  command -v setpriv >/dev/null 2>&1 || { echo 'setpriv not found (util-linux)'; return; }
  local kernel
  kernel="$(find_kernel)"
  [[ -n "$kernel" && -r "$kernel" ]] || { echo 'no readable /boot/vmlinuz-*-amd64 with modules in /lib/modules (apt-get install linux-image-amd64)'; return; }
  local version="${kernel#/boot/vmlinuz-}"
  [[ -f "/lib/modules/$version/modules.dep" ]] || { echo "no /lib/modules/$version/modules.dep for $kernel"; return; }
  grep -q '^CONFIG_PSI=y' "/boot/config-$version" 2>/dev/null || { echo "$kernel has no CONFIG_PSI=y in /boot/config-$version"; return; }
}

reason="$(unavailable_reason)"
if ((check_only)); then
  if [[ -n "$reason" ]]; then
    echo "$reason"
    exit 1
  fi
  echo ok
  exit 0
fi
[[ -z "$reason" ]] || die "$reason"
(($# > 0)) || die 'no command given'

kernel="$(find_kernel)"
kernel_version="${kernel#/boot/vmlinuz-}"
modules_dir="/lib/modules/$kernel_version"

# Every temporary file lives under one directory named after this process, so a run killed
# outright (SIGKILL: no trap runs) leaves a directory the next run recognises and removes.
tmp_parent="${TMPDIR:-/tmp}"
for stale in "$tmp_parent"/kea-guest-*-*; do
  [[ -d "$stale" ]] || continue
  owner="${stale#"$tmp_parent"/kea-guest-}"
  owner="${owner%%-*}"
  [[ "$owner" =~ ^[0-9]+$ ]] && ! kill -0 "$owner" 2>/dev/null && rm -rf "$stale"
done
tmp="$(mktemp -d "$tmp_parent/kea-guest-$$-XXXXXX")"
ctl="$tmp/ctl"
mkdir "$ctl"
qemu_pid=''
readers=()

# QEMU first (TERM, then KILL after 2 s), then the output readers, then the files.
cleanup() {
  local status=$?
  trap - EXIT INT TERM HUP
  set +e
  if [[ -n "$qemu_pid" ]] && kill -0 "$qemu_pid" 2>/dev/null; then
    kill -TERM "$qemu_pid"
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$qemu_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$qemu_pid" 2>/dev/null
  fi
  for reader in "${readers[@]}"; do kill "$reader" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The modules to load, dependencies first, from the kernel's own modules.dep (each line lists a
# module's dependencies, transitively, in the reverse of their load order).
module_paths() {
  awk -v wanted="$*" '
    BEGIN { n = split(wanted, w, " "); for (i = 1; i <= n; i++) want[w[i]] = 1 }
    {
      path = $1; sub(/:$/, "", path)
      name = path; sub(/.*\//, "", name); sub(/\.ko(\.[a-z]+)?$/, "", name); gsub(/-/, "_", name)
      if (!(name in want)) next
      for (i = NF; i >= 2; i--) if (!seen[$i]++) print $i
      if (!seen[path]++) print path
    }' "$modules_dir/modules.dep"
}

# The kernel as an uncompressed ELF (vmlinux), which QEMU starts at its PVH entry point: a
# compressed bzImage spends most of the boot (some 15 s of the 25) decompressing itself under TCG.
# Found the way the kernel's scripts/extract-vmlinux does it: the first compressed stream in the
# bzImage that unpacks to an ELF file. Cached per kernel; without one the bzImage boots as it is.
extract_vmlinux() {
  local magic tool offset
  for pair in $'\xfd7zXZ:xz -dcq' $'\x28\xb5\x2f\xfd:zstd -dcq' $'\x1f\x8b\x08:gzip -dcq'; do
    magic="${pair%%:*}"
    tool="${pair#*:}"
    command -v "${tool%% *}" >/dev/null 2>&1 || continue
    for offset in $(LC_ALL=C grep -obUa "$magic" "$kernel" | cut -d: -f1 | head -n 5); do
      tail -c +$((offset + 1)) "$kernel" | $tool >"$1" 2>/dev/null || true
      if [[ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" == '177ELF' ]]; then return 0; fi
    done
  done
  rm -f "$1"
  return 1
}
vmlinux="$cache_dir/vmlinux-$kernel_version"
if [[ ! -s "$vmlinux" && ! -e "$vmlinux.none" ]]; then
  mkdir -p "$cache_dir"
  if extract_vmlinux "$vmlinux.$$"; then mv "$vmlinux.$$" "$vmlinux"; else : >"$vmlinux.none"; fi
fi
boot_kernel="$kernel"
[[ -s "$vmlinux" ]] && boot_kernel="$vmlinux"
# qboot (shipped with QEMU) starts a -kernel in a fraction of SeaBIOS's time.
firmware=()
[[ -f /usr/share/qemu/qboot.rom ]] && firmware=(-bios /usr/share/qemu/qboot.rom)

# The initramfs: busybox, the init script and the modules; built once per kernel and init script.
initramfs_key="$(cat "$init_script" <(module_paths "${guest_modules[@]}") | sha256sum | cut -c1-16)"
initramfs="$cache_dir/initramfs-$kernel_version-$initramfs_key.cpio.gz"
if [[ ! -s "$initramfs" ]]; then
  build="$tmp/initramfs"
  mkdir -p "$build/bin" "$build/dev" "$build/proc" "$build/sys" "$build/modules" "$build/newroot" "$cache_dir"
  cp "$(command -v busybox)" "$build/bin/busybox"
  cp "$init_script" "$build/init"
  chmod 755 "$build/init"
  count=0
  while read -r module; do
    [[ -n "$module" ]] || continue
    base="$(basename "$module")"
    target="$(printf '%02d-%s' "$count" "${base%%.ko*}.ko")"
    case "$module" in
      *.ko) cp "$modules_dir/$module" "$build/modules/$target" ;;
      *.ko.xz) xz -dc "$modules_dir/$module" >"$build/modules/$target" ;;
      *.ko.zst) zstd -qdc "$modules_dir/$module" >"$build/modules/$target" ;;
      *.ko.gz) gzip -dc "$modules_dir/$module" >"$build/modules/$target" ;;
      *) die "cannot unpack module $module" ;;
    esac
    echo "$target" >>"$build/modules/order"
    count=$((count + 1))
  done < <(module_paths "${guest_modules[@]}")
  ((count >= ${#guest_modules[@]})) || die "missing kernel modules in $modules_dir (wanted ${guest_modules[*]})"
  (cd "$build" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$initramfs.$$"
  # One initramfs per kernel: an older one (another init script) goes.
  rm -f "$cache_dir/initramfs-$kernel_version-"*.cpio.gz
  mv "$initramfs.$$" "$initramfs"
  rm -rf "$build"
fi

# The command, in the guest's bash (the host's own, from the shared root).
{
  printf 'cd %q || exit 125\n' "$PWD"
  printf 'export PATH=%q HOME=/root LANG=C.UTF-8 KEA_CGROUP_V2_GUEST=1\n' "$PATH"
  for entry in "${envs[@]}"; do
    if [[ "$entry" == *=* ]]; then
      printf 'export %s=%q\n' "${entry%%=*}" "${entry#*=}"
    elif [[ -n "${!entry+set}" ]]; then
      printf 'export %s=%q\n' "$entry" "${!entry}"
    fi
  done
  printf 'exec'
  printf ' %q' "$@"
  printf '\n'
} >"$ctl/command.sh"

# no_timer_check: under TCG on a loaded host the kernel's early check that the IO-APIC timer ticks
# can see too few ticks and panic ("IO-APIC + timer doesn't work"); the emulated timer is fine.
append="console=ttyS0 quiet loglevel=3 panic=-1 no_timer_check rdinit=/init ${KEA_GUEST_APPEND:-} kea_ctl=$ctl kea_share=kea0:$ctl"
share_args=(-fsdev "local,id=kea0,path=$ctl,security_model=none" -device "virtio-9p-pci,fsdev=kea0,mount_tag=kea0")
index=1
for share in "${shares[@]}"; do
  [[ "$share" != *[[:space:]]* ]] || die "cannot share a path with spaces: $share"
  append+=" kea_share=kea$index:$share"
  share_args+=(-fsdev "local,id=kea$index,path=$share,security_model=none,multidevs=remap" -device "virtio-9p-pci,fsdev=kea$index,mount_tag=kea$index")
  index=$((index + 1))
done
[[ "$ctl$PWD" != *[[:space:]]* ]] || die 'the current directory and TMPDIR must not contain spaces'
# A network only when a port is forwarded. restrict=on: the guest reaches nothing through QEMU but
# the forwarded ports; each connection to 10.0.2.100:PORT starts the relay (a small node program
# on this machine, its stdin and stdout the connection) that carries it to 127.0.0.1:PORT.
net_args=()
if ((${#forward_ports[@]} > 0)); then
  relay="$script_dir/lib/guest-port-relay.mjs"
  node_bin="$(command -v node)" || die '--forward-port needs node on PATH (the relay)'
  [[ "$relay$node_bin" != *[,[:space:]]* ]] || die "the relay's path must not contain commas or spaces: $node_bin $relay"
  netdev='user,id=net0,restrict=on,ipv6=off,net=10.0.2.0/24,host=10.0.2.2'
  for port in "${forward_ports[@]}"; do netdev+=",guestfwd=tcp:10.0.2.100:$port-cmd:$node_bin $relay $port"; done
  net_args=(-netdev "$netdev" -device virtio-net-pci,netdev=net0)
  append+=' kea_net=10.0.2.15/24'
fi
# The guest mounts its own /tmp: a checkout there (or the command's directory) is kept visible.
repo_root="$(cd "$script_dir/.." && pwd)"
kept=''
for keep in "$repo_root" "$PWD"; do
  [[ "$keep" == /tmp/* ]] || continue
  [[ -n "$kept" && ( "$keep" == "$kept" || "$keep" == "$kept"/* ) ]] && continue
  [[ "$keep" != *[[:space:]]* ]] || die "cannot keep a path with spaces: $keep"
  append+=" kea_keep=$keep"
  kept="$keep"
done

for stream in stdout stderr; do mkfifo "$tmp/$stream.in" "$tmp/$stream.out"; done
cat "$tmp/stdout.out" &
readers+=($!)
cat "$tmp/stderr.out" >&2 &
readers+=($!)

started_s="$(date +%s.%N)"
# setpriv (which then becomes QEMU, same PID): QEMU dies with this script even when it is killed outright.
setpriv --pdeathsig KILL "$qemu" \
  -nodefaults -no-user-config -display none -no-reboot \
  -machine pc -accel tcg -cpu max -smp "$cpus" -m "$memory_mib" "${firmware[@]}" \
  -kernel "$boot_kernel" -initrd "$initramfs" -append "$append" \
  -serial "file:$tmp/console.log" \
  -device virtio-serial-pci,id=ports \
  -chardev "pipe,id=stdout,path=$tmp/stdout" -device virtserialport,bus=ports.0,chardev=stdout,name=kea.stdout \
  -chardev "pipe,id=stderr,path=$tmp/stderr" -device virtserialport,bus=ports.0,chardev=stderr,name=kea.stderr \
  -fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
  "${share_args[@]}" "${net_args[@]}" </dev/null >>"$tmp/qemu.log" 2>&1 &
qemu_pid=$!

# Wait for QEMU, or the timeout; a signal interrupts the wait and the trap cleans up.
timed_out=0
deadline=$(($(date +%s) + timeout_s))
while kill -0 "$qemu_pid" 2>/dev/null; do
  if (($(date +%s) >= deadline)); then
    timed_out=1
    break
  fi
  sleep 0.1 &
  wait $! || true
done
((timed_out)) && kill -KILL "$qemu_pid" 2>/dev/null
wait "$qemu_pid" 2>/dev/null || true
qemu_pid=''

ended_s="$(date +%s.%N)"
# QEMU is gone, so the readers see the end of their FIFOs.
for reader in "${readers[@]}"; do wait "$reader" 2>/dev/null || true; done
readers=()

[[ -n "$console_keep" ]] && cp "$tmp/console.log" "$console_keep"
if [[ -f "$ctl/started" ]]; then
  command_started_s="$(stat -c %.9Y "$ctl/started")"
  if [[ -n "$timing_file" ]]; then
    awk -v s="$started_s" -v c="$command_started_s" -v e="$ended_s" \
      'BEGIN { printf "{\"bootMs\":%d,\"commandMs\":%d,\"totalMs\":%d}\n", (c - s) * 1000, (e - c) * 1000, (e - s) * 1000 }' >"$timing_file"
  fi
fi

if ((timed_out)); then
  echo "cgroup-v2-guest: timed out after ${timeout_s} s; the guest was killed. Kernel console:" >&2
  tail -n 40 "$tmp/console.log" >&2 || true
  exit 124
fi
status="$(cat "$ctl/exit-status" 2>/dev/null || true)"
if [[ ! "$status" =~ ^[0-9]+$ ]]; then
  echo "cgroup-v2-guest: the guest ended without running the command to its end. QEMU said:" >&2
  cat "$tmp/qemu.log" >&2 || true
  echo 'Kernel console:' >&2
  tail -n 60 "$tmp/console.log" >&2 || true
  exit 125
fi
exit "$status"
