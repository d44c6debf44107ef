// A sandbox in the real cgroup v1 memory hierarchy for tests that need the kernel: it creates
// cgroups only under one unique top cgroup (/sys/fs/cgroup/memory/kea-test-<pid>-<n>), starts
// child processes inside them that allocate and touch a known amount of memory (or just idle),
// ends only the processes it started, and removes every cgroup below its top, deepest first,
// even when the test failed.
//
// Typical use:
//
//   const reason = cgroupV1Unavailable();
//   const sandbox = reason === null ? await CgroupSandbox.create({ limitBytes: 4n << 30n }) : undefined;
//   afterAll(() => sandbox?.cleanup());
//   test('... (root, cgroup v1)', async () => {
//     if (sandbox === undefined) return void console.log(`skipped: ${reason}`);
//     const pod = sandbox.mkdir('kubepods/burstable/pod123/abc');
//     const child = await sandbox.startAllocator('kubepods/burstable/pod123/abc', 64 << 20);
//     ... read `${pod}/memory.usage_in_bytes` ...
//     await sandbox.kill(child);
//   });
//
// Cleanup order matters: a cgroup that still holds a task cannot be removed, so every child is
// killed and reaped before any rmdir, and rmdir goes from the deepest cgroup up.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The cgroup v1 memory hierarchy on the test machines. */
export const CGROUP_V1_MEMORY_ROOT = '/sys/fs/cgroup/memory';

/** Why real cgroup v1 tests cannot run here (not root, no v1 memory hierarchy), or null when they can. */
export function cgroupV1Unavailable(memoryRoot = CGROUP_V1_MEMORY_ROOT): string | null {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'not running as root';
  if (!existsSync(join(memoryRoot, 'cgroup.event_control'))) return `no cgroup v1 memory hierarchy at ${memoryRoot} (no cgroup.event_control)`;
  return null;
}

/** A process the sandbox started inside one of its cgroups. */
export interface SandboxProcess {
  readonly pid: number;
  /** The absolute path of the cgroup it runs in. */
  readonly cgroup: string;
  /** Bytes it allocated and touched (0 for an idle process). */
  readonly allocatedBytes: number;
  /** Resolves when the process has exited and been reaped. */
  readonly exited: Promise<void>;
}

export interface CgroupSandboxOptions {
  /** The memory hierarchy to create the sandbox in; /sys/fs/cgroup/memory by default. */
  readonly memoryRoot?: string;
  /** A memory limit for the sandbox's top cgroup (memory.limit_in_bytes). */
  readonly limitBytes?: bigint;
  /** How long a child may take to start and touch its memory; 30 s by default. */
  readonly startTimeoutMs?: number;
}

let sandboxCounter = 0;
const liveSandboxes = new Set<CgroupSandbox>();

// Last resort when the test process exits without running afterAll: kill what was started and
// try to remove the cgroups. Synchronous, so it runs inside the 'exit' event.
process.on('exit', () => {
  for (const sandbox of liveSandboxes) sandbox.cleanupSync();
});

// The allocating child: allocate in 16 MiB chunks, write to every byte so each page is really
// charged to the cgroup (untouched allocations are not), report, then idle holding the memory.
const ALLOCATOR_SCRIPT = `
const totalBytes = Number(process.argv[1]);
const chunkBytes = 16 * 1024 * 1024;
const held = [];
for (let left = totalBytes; left > 0; left -= chunkBytes) {
  const chunk = Buffer.allocUnsafeSlow(Math.min(chunkBytes, left));
  chunk.fill(0x5a);
  held.push(chunk);
}
globalThis.held = held;
process.stdout.write('ready\\n');
setInterval(() => {}, 1 << 30);
`;

export class CgroupSandbox {
  /** The top cgroup's name, `kea-test-<pid>-<n>`. */
  readonly name: string;
  /** The top cgroup's absolute path. */
  readonly path: string;
  private readonly children = new Map<number, { child: ChildProcess; exited: Promise<void> }>();
  private readonly startTimeoutMs: number;
  private cleaned = false;

  private constructor(memoryRoot: string, startTimeoutMs: number) {
    this.name = `kea-test-${process.pid}-${sandboxCounter++}`;
    this.path = join(memoryRoot, this.name);
    this.startTimeoutMs = startTimeoutMs;
  }

  /** Creates the top cgroup (with a limit if asked). Check {@link cgroupV1Unavailable} first. */
  static async create(options: CgroupSandboxOptions = {}): Promise<CgroupSandbox> {
    const sandbox = new CgroupSandbox(options.memoryRoot ?? CGROUP_V1_MEMORY_ROOT, options.startTimeoutMs ?? 30_000);
    mkdirSync(sandbox.path);
    liveSandboxes.add(sandbox);
    if (options.limitBytes !== undefined) sandbox.setLimit('', options.limitBytes);
    return sandbox;
  }

  /** The absolute path of a cgroup below the sandbox (`''` is the top). */
  resolve(relative: string): string {
    return relative === '' ? this.path : join(this.path, relative);
  }

  /** Creates a cgroup below the sandbox, and its parents; returns its absolute path. */
  mkdir(relative: string): string {
    const path = this.resolve(relative);
    mkdirSync(path, { recursive: true });
    return path;
  }

  /** Sets memory.limit_in_bytes of a cgroup below the sandbox. */
  setLimit(relative: string, limitBytes: bigint): void {
    writeFileSync(join(this.resolve(relative), 'memory.limit_in_bytes'), `${limitBytes}\n`);
  }

  /** Reads a control file of a cgroup below the sandbox. */
  read(relative: string, file: string): string {
    return readFileSync(join(this.resolve(relative), file), 'utf8');
  }

  /**
   * Starts a process in the cgroup that allocates and touches `bytes`, then idles holding them.
   * Resolves once the memory is touched. The process joins the cgroup before it execs Node, so all
   * of its memory (Node's own ~40 MiB included) is charged there.
   */
  startAllocator(relative: string, bytes: number): Promise<SandboxProcess> {
    return this.start(relative, bytes, [process.execPath, '-e', ALLOCATOR_SCRIPT, String(bytes)]);
  }

  /** Starts a process in the cgroup that only sleeps (a stand-in for a pause container). */
  startIdle(relative: string): Promise<SandboxProcess> {
    return this.start(relative, 0, ['sleep', '1000000']);
  }

  private start(relative: string, allocatedBytes: number, command: readonly string[]): Promise<SandboxProcess> {
    const cgroup = this.mkdir(relative);
    // The shell moves itself into the cgroup, says so, and becomes the command (same PID).
    const script = 'echo $$ > "$0/cgroup.procs" || exit 1; [ "$1" = sleep ] && echo ready; exec "$@"';
    const child = spawn('/bin/sh', ['-c', script, cgroup, ...command], { stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = child.pid;
    if (pid === undefined) return Promise.reject(new Error(`cannot start ${command[0]} in ${cgroup}`));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.children.set(pid, { child, exited });
    exited.then(() => this.children.delete(pid), () => undefined);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${command[0]} in ${cgroup} not ready after ${this.startTimeoutMs} ms`)), this.startTimeoutMs);
      let stdout = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('ready\n')) {
          clearTimeout(timer);
          resolve({ pid, cgroup, allocatedBytes, exited });
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${command[0]} in ${cgroup} exited early (code ${code}, signal ${signal}): ${stderr.trim()}`));
      });
    });
  }

  /** Kills one process the sandbox started and waits until it is reaped. */
  async kill(started: SandboxProcess): Promise<void> {
    const entry = this.children.get(started.pid);
    if (entry === undefined) return;
    entry.child.kill('SIGKILL');
    await entry.exited;
  }

  /** The cgroups below the sandbox's top, deepest first, the top last. */
  private cgroupsDeepestFirst(): string[] {
    const found: string[] = [];
    const visit = (dir: string): void => {
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) if (entry.isDirectory()) visit(join(dir, entry.name));
      found.push(dir);
    };
    visit(this.path);
    return found;
  }

  /**
   * Kills every process the sandbox started, waits for them, then removes every cgroup below the
   * top and the top itself, deepest first. Idempotent. Throws after trying everything if a cgroup
   * could not be removed (a process the sandbox did not start still runs in it).
   */
  async cleanup(): Promise<void> {
    if (this.cleaned) return;
    for (const { child } of this.children.values()) child.kill('SIGKILL');
    await Promise.all([...this.children.values()].map(({ exited }) => exited));
    const failures: string[] = [];
    for (const dir of this.cgroupsDeepestFirst()) {
      for (let attempt = 0; ; attempt++) {
        try {
          rmdirSync(dir);
          break;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') break;
          // A just-reaped task can take a moment to leave the cgroup.
          if (code === 'EBUSY' && attempt < 50) {
            await new Promise((resolve) => setTimeout(resolve, 20));
            continue;
          }
          failures.push(`${dir}: ${code ?? String(error)}`);
          break;
        }
      }
    }
    this.cleaned = true;
    liveSandboxes.delete(this);
    if (failures.length > 0) throw new Error(`cgroup sandbox ${this.name} not fully removed: ${failures.join(', ')}`);
  }

  /** The synchronous best effort used at process exit: kill, then try each rmdir once. */
  cleanupSync(): void {
    if (this.cleaned) return;
    for (const { child } of this.children.values()) child.kill('SIGKILL');
    for (const dir of this.cgroupsDeepestFirst()) {
      try {
        rmdirSync(dir);
      } catch {
        // Nothing more can be done synchronously; the cgroup stays for the next run to see.
      }
    }
    this.cleaned = true;
    liveSandboxes.delete(this);
  }
}
