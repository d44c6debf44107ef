// Counts this process's open descriptors of the kinds the notifier opens (eventfds, epoll sets,
// cgroup and pressure files), so a leak check is exact without counting descriptors that the
// test runner or Node open and close on their own meanwhile.

import { readdirSync, readlinkSync } from 'node:fs';

const NOTIFIER_KINDS = [/^anon_inode:\[eventfd\]$/, /^anon_inode:\[eventpoll\]$/, /^\/sys\/fs\/cgroup\//, /^\/proc\/pressure\//, /\/memory\.pressure$/];

export function openFds(): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed meanwhile (the directory listing's own descriptor, for one)
    }
    if (NOTIFIER_KINDS.some((kind) => kind.test(target))) count++;
  }
  return count;
}
