// Mounting and unmounting the small tmpfs filesystems real-filesystem tests measure. Mounting needs
// CAP_SYS_ADMIN, which the agent neither has nor needs: when the tests run with the agent's own
// capabilities (scripts/with-capabilities.sh), that script mounts for them on request
// (KEA_TEST_MOUNT_HELPER); otherwise mount(8) is run directly.

import { execFileSync } from 'node:child_process';

// One request to the helper: a reply FIFO, the request line, the answer read back.
const CLIENT = 'reply="$(mktemp -u "$1/reply-XXXXXX")" && mkfifo -m 0600 "$reply" && printf "%s\\n" "$reply $2" > "$1/requests" && cat "$reply"; status=$?; rm -f "$reply"; exit $status';

function ask(helperDir: string, request: string): void {
  const answer = execFileSync('sh', ['-c', CLIENT, 'tmpfs-mount', helperDir, request], { encoding: 'utf8', timeout: 30_000 }).trim();
  if (answer !== 'ok') throw new Error(`mount helper: ${request}: ${answer}`);
}

export function mountTmpfs(dir: string, sizeMiB: number, inodes: number): void {
  const helper = process.env.KEA_TEST_MOUNT_HELPER;
  if (helper !== undefined && helper !== '') ask(helper, `mount ${sizeMiB} ${inodes} ${dir}`);
  else execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,nr_inodes=${inodes}`, 'tmpfs', dir]);
}

export function unmountTmpfs(dir: string): void {
  const helper = process.env.KEA_TEST_MOUNT_HELPER;
  if (helper !== undefined && helper !== '') {
    ask(helper, `umount ${dir}`);
    return;
  }
  try {
    execFileSync('umount', [dir]);
  } catch {
    execFileSync('umount', ['-l', dir]);
  }
}
