// The cgroup root of a real kubelet under test: one cgroup named `kea-test-<pid>-node-<n>`, created
// at the top of every cgroup v1 hierarchy the machine mounts (the kubelet and runc create pod and
// container cgroups in each), never the machine's own /kubepods. Removal kills what still runs in
// the subtree (only the test's pods can), then removes every cgroup below it deepest first, in
// every hierarchy, the cgroup v2 one included (runc also places containers there on a hybrid host).

import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shellQuote } from './exit-cleanup.js';
import { subtreeDeepestFirst } from './node-sandbox.js';
import { sleep } from './wait.js';

export const CGROUP_MOUNT_ROOT = '/sys/fs/cgroup';

interface CgroupMount {
  readonly path: string;
  readonly version: 1 | 2;
}

// The cgroup hierarchies mounted under /sys/fs/cgroup, from this process's mountinfo.
function cgroupMounts(): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [before, after] = line.split(' - ');
    if (before === undefined || after === undefined) continue;
    const mountPoint = before.split(' ')[4] ?? '';
    const fsType = after.split(' ')[0];
    if (!mountPoint.startsWith(`${CGROUP_MOUNT_ROOT}/`)) continue;
    if (fsType === 'cgroup') mounts.push({ path: mountPoint, version: 1 });
    else if (fsType === 'cgroup2') mounts.push({ path: mountPoint, version: 2 });
  }
  return mounts;
}

let counter = 0;

export class NodeCgroups {
  private constructor(
    /** The cgroup's name: the kubelet's `cgroupRoot` is `/<name>`. */
    readonly name: string,
    private readonly created: readonly string[],
  ) {}

  /** Creates the cgroup in every v1 hierarchy (with the parent's cpus and memory nodes for cpuset). */
  static create(): NodeCgroups {
    const name = `kea-test-${process.pid}-node-${counter++}`;
    const created: string[] = [];
    const cgroups = new NodeCgroups(name, created);
    try {
      for (const mount of cgroupMounts().filter((m) => m.version === 1)) {
        const dir = join(mount.path, name);
        mkdirSync(dir);
        created.push(dir);
        // A new cpuset cgroup has no CPUs or memory nodes; nothing could run in it.
        if (existsSync(join(mount.path, 'cpuset.cpus'))) {
          for (const file of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(dir, file), readFileSync(join(mount.path, file)));
        }
      }
      if (!created.some((dir) => existsSync(join(dir, 'memory.limit_in_bytes')))) throw new Error('no cgroup v1 memory hierarchy under /sys/fs/cgroup');
    } catch (err) {
      cgroups.removeSync();
      throw err;
    }
    return cgroups;
  }

  /** The cgroup in the memory hierarchy. */
  get memoryPath(): string {
    return join(CGROUP_MOUNT_ROOT, 'memory', this.name);
  }

  /** The cgroup's directory in every hierarchy that has it (created here or by runc). */
  private directories(): string[] {
    return cgroupMounts()
      .map((m) => join(m.path, this.name))
      .filter((dir) => existsSync(dir));
  }

  /** The processes still in the subtree, in any hierarchy. */
  processes(): number[] {
    const pids = new Set<number>();
    for (const top of this.directories()) {
      for (const dir of subtreeDeepestFirst(top)) {
        try {
          for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n')) if (pid !== '') pids.add(Number(pid));
        } catch {
          // Removed in between.
        }
      }
    }
    return [...pids];
  }

  /** Kills every process left in the subtree and removes every cgroup of it, waiting for tasks to leave. */
  async remove(timeoutMs = 10_000): Promise<void> {
    const deadlineMs = Date.now() + timeoutMs;
    for (;;) {
      const left = this.removeOnce();
      if (left.length === 0) return;
      if (Date.now() > deadlineMs) throw new Error(`cgroups of ${this.name} not removed: ${left.join(', ')}`);
      await sleep(100);
    }
  }

  /** The same, without waiting (for the process's exit handler): whatever is busy stays. */
  removeSync(): void {
    this.removeOnce();
  }

  // One round: SIGKILL what runs there, rmdir deepest first; returns what could not be removed.
  private removeOnce(): string[] {
    for (const pid of this.processes()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    const left: string[] = [];
    for (const top of [...new Set([...this.directories(), ...this.created.filter((dir) => existsSync(dir))])]) {
      for (const dir of subtreeDeepestFirst(top)) {
        try {
          rmdirSync(dir);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') left.push(dir);
        }
      }
    }
    return left;
  }

  /** Shell lines for a watchdog: the same kill and removal, for a test process killed outright. */
  watchdogScript(): string {
    const tops = `/sys/fs/cgroup/*/${shellQuote(this.name)}`;
    return [
      `for f in $(find ${tops} -name cgroup.procs 2>/dev/null); do for p in $(cat "$f"); do kill -9 "$p" 2>/dev/null; done; done`,
      'sleep 1',
      `for i in 1 2 3 4 5; do find ${tops} -depth -type d -exec rmdir {} \\; 2>/dev/null; ls -d ${tops} >/dev/null 2>&1 || break; sleep 1; done`,
    ].join('\n');
  }
}
