#!/bin/busybox sh
# PID 1 of the cgroup v2 guest (busybox, inside the initramfs that scripts/cgroup-v2-guest.sh
# builds). It loads the virtio and 9p modules, mounts the host's / read-only over 9p as the new
# root, mounts the guest's own /proc, /sys, /dev, /tmp and a cgroup2 hierarchy (memory, pids and cpu
# enabled for children) over the host's, mounts each read-write share at its host path, runs the
# host's control script with the command's output on two virtio serial ports, writes the exit
# status into the control share and powers off. Whatever goes wrong, the machine powers off: the
# host sees no exit status and prints the console log.
#
# The kernel command line carries `kea_ctl=<control dir>`, one `kea_share=<tag>:<path>` per
# read-write share (the control directory is one of them), and one `kea_keep=<path>` per directory
# under the host's /tmp that must stay visible over the guest's own /tmp (the checkout), and
# `kea_net=<address/prefix>` when the guest has a network for forwarded ports.

export PATH=/bin

fail() {
  echo "cgroup-v2-guest init: $*" >&2
  poweroff -f
  sleep 10
  exit 1
}

/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec 2>/dev/ttyS0

for module in $(cat /modules/order); do
  insmod "/modules/$module" || fail "cannot load $module"
done

ctl=''
shares=''
keeps=''
net=''
for word in $(cat /proc/cmdline); do
  case "$word" in
    kea_ctl=*) ctl="${word#kea_ctl=}" ;;
    kea_share=*) shares="$shares ${word#kea_share=}" ;;
    kea_keep=*) keeps="$keeps ${word#kea_keep=}" ;;
    kea_net=*) net="${word#kea_net=}" ;;
  esac
done
[ -n "$ctl" ] || fail 'no kea_ctl= on the kernel command line'

root=/newroot
mkdir -p "$root"
# The host's files do not change under a run: cache them (first reads cross 9p, later ones do not).
mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose hostroot "$root" || fail 'cannot mount the host root over 9p'
mount -t proc proc "$root/proc" || fail 'cannot mount /proc'
mount -t sysfs sysfs "$root/sys" || fail 'cannot mount /sys'
mount -t devtmpfs devtmpfs "$root/dev" || fail 'cannot mount /dev'
mount -t devpts devpts "$root/dev/pts" 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm" 2>/dev/null
# The guest's /tmp is its own, but a checkout (or the command's directory) that lives under the
# host's /tmp must stay visible at its own path: the host's /tmp is kept aside before the tmpfs
# covers it, and each kept path is bound back from there, read-only like the rest of the root.
if [ -n "$keeps" ]; then
  mkdir -p /host-tmp
  mount -o bind "$root/tmp" /host-tmp || fail 'cannot keep the host /tmp aside'
fi
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp" || fail 'cannot mount /tmp'
for keep in $keeps; do
  mkdir -p "$root$keep" || fail "cannot make the mount point of $keep"
  mount -o bind "/host-tmp${keep#/tmp}" "$root$keep" || fail "cannot keep $keep visible"
done
mount -t tmpfs -o mode=755 tmpfs "$root/run" 2>/dev/null
mount -t cgroup2 cgroup2 "$root/sys/fs/cgroup" || fail 'cannot mount cgroup2 at /sys/fs/cgroup'
echo '+cpu +memory +pids' >"$root/sys/fs/cgroup/cgroup.subtree_control" || fail 'cannot enable +cpu +memory +pids'

for share in $shares; do
  tag="${share%%:*}"
  path="${share#*:}"
  # A share under /tmp needs its mount point in the guest's own /tmp.
  mkdir -p "$root$path" 2>/dev/null
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 "$tag" "$root$path" || fail "cannot mount share $tag at $path"
done

ip link set lo up || fail 'cannot bring up the loopback interface'
# The forwarded ports' network (scripts/cgroup-v2-guest.sh --forward-port): one address, no route.
if [ -n "$net" ]; then
  ip addr add "$net" dev eth0 || fail "cannot give eth0 the address $net"
  ip link set eth0 up || fail 'cannot bring up eth0'
fi

port() {
  for dir in /sys/class/virtio-ports/*; do
    [ "$(cat "$dir/name" 2>/dev/null)" = "$1" ] && { echo "/dev/${dir##*/}"; return 0; }
  done
  return 1
}
stdout="$(port kea.stdout)" || fail 'no stdout port'
stderr="$(port kea.stderr)" || fail 'no stderr port'

# Created through the share, so its mtime is the host's clock: the moment the command starts.
: >"$root$ctl/started"
chroot "$root" /bin/bash "$ctl/command.sh" <"$root/dev/null" >"$stdout" 2>"$stderr"
echo "$?" >"$root$ctl/exit-status"
sync
poweroff -f
sleep 10
