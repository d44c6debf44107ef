// A sandbox in a real memory cgroup hierarchy for tests that need the kernel: it creates cgroups
// only under one unique top cgroup (/sys/fs/cgroup/memory/kea-test-<pid>-<tag>-<n> on cgroup v1,
// /sys/fs/cgroup/kea-test-<pid>-<tag>-<n> on cgroup v2), starts child processes inside them that
// allocate and touch a known amount of memory (or just idle, or run a given command), ends only the
// processes it started (on v2: everything inside its top cgroup, through cgroup.kill), and removes
// every cgroup below its top, deepest first, even when the test failed.
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
// killed and reaped before any rmdir, and rmdir goes from the deepest cgroup up. On cgroup v2 a
// cgroup's memory files exist only when its parent enables the controller, and a cgroup that
// enables controllers for children may hold no process itself: mkdir() enables memory and pids
// down the path, so processes belong in leaves (container cgroups), as the kubelet places them.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scaledTimeoutMs } from './timeout-scale.js';

/** The cgroup v1 memory hierarchy on the test machines. */
export const CGROUP_V1_MEMORY_ROOT = '/sys/fs/cgroup/memory';
/** The cgroup v2 mount (in the cgroup v2 guest). */
export const CGROUP_V2_ROOT = '/sys/fs/cgroup';
/** What a v2 sandbox enables for its children, level by level. */
const V2_CONTROLLERS = ['memory', 'pids'];

/** Why real cgroup v1 tests cannot run here (not root, no v1 memory hierarchy), or null when they can. */
export function cgroupV1Unavailable(memoryRoot = CGROUP_V1_MEMORY_ROOT): string | null {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'not running as root';
  if (!existsSync(join(memoryRoot, 'cgroup.event_control'))) return `no cgroup v1 memory hierarchy at ${memoryRoot} (no cgroup.event_control)`;
  return null;
}

/** Why real cgroup v2 tests cannot run here (not root, no v2 hierarchy with memory for children), or null when they can. */
export function cgroupV2Unavailable(root = CGROUP_V2_ROOT): string | null {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'not running as root';
  let enabled: string;
  try {
    enabled = readFileSync(join(root, 'cgroup.subtree_control'), 'utf8');
  } catch {
    return `no cgroup v2 hierarchy at ${root} (no cgroup.subtree_control)`;
  }
  const missing = V2_CONTROLLERS.filter((controller) => !enabled.split(/\s+/).includes(controller));
  return missing.length === 0 ? null : `the cgroup v2 hierarchy at ${root} does not enable ${missing.join(', ')} for its children`;
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
  /** Everything it printed on stdout so far. */
  output(): string;
  /** The signal that ended it, once it has exited (null while it runs, or when it exited by itself). */
  exitSignal(): NodeJS.Signals | null;
}

export interface CgroupSandboxOptions {
  /** cgroup v1 (the memory hierarchy) or v2 (the unified one); v1 by default. */
  readonly version?: 'v1' | 'v2';
  /** The hierarchy to create the sandbox in; /sys/fs/cgroup/memory (v1) or /sys/fs/cgroup (v2) by default. */
  readonly memoryRoot?: string;
  /** A memory limit for the sandbox's top cgroup (memory.limit_in_bytes, or memory.max on v2). */
  readonly limitBytes?: bigint;
  /**
   * How long a child may take to start and touch its memory: 120 s by default, times
   * KEA_TEST_TIMEOUT_SCALE (a bound on a hang: on a loaded machine, and in the emulated guest, a
   * process start alone can take tens of seconds).
   */
  readonly startTimeoutMs?: number;
}

const DEFAULT_START_TIMEOUT_MS = 120_000;
let sandboxCounter = 0;
// Jest loads this module afresh for each test file, and with --runInBand every file runs in the
// same process: without a tag of the module's own, the next file's first sandbox would reuse the
// previous file's name, and what the previous file left running (a pod terminator's restart sweep,
// still watching the pods it ended) would act on the new file's processes.
const moduleTag = randomBytes(3).toString('hex');
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
  /** The top cgroup's path relative to the hierarchy's root, `kea-test-<pid>-<tag>-<n>` (below KEA_TEST_CGROUP_PARENT when set). */
  readonly name: string;
  /** The top cgroup's absolute path. */
  readonly path: string;
  private readonly children = new Map<number, { child: ChildProcess; exited: Promise<void> }>();
  readonly version: 'v1' | 'v2';
  private readonly startTimeoutMs: number;
  private cleaned = false;

  private constructor(version: 'v1' | 'v2', memoryRoot: string, startTimeoutMs: number) {
    this.version = version;
    // The v1 hierarchy's root directory is mode 0555: creating a cgroup right below it needs
    // CAP_DAC_OVERRIDE. A run with the agent's own capabilities (scripts/with-capabilities.sh)
    // gets a parent cgroup of its own instead, named here.
    const parent = version === 'v1' ? (process.env.KEA_TEST_CGROUP_PARENT ?? '') : '';
    this.name = `${parent === '' ? '' : `${parent}/`}kea-test-${process.pid}-${moduleTag}-${sandboxCounter++}`;
    this.path = join(memoryRoot, this.name);
    this.startTimeoutMs = startTimeoutMs;
  }

  /** Creates the top cgroup (with a limit if asked). Check {@link cgroupV1Unavailable} (or {@link cgroupV2Unavailable}) first. */
  static async create(options: CgroupSandboxOptions = {}): Promise<CgroupSandbox> {
    const version = options.version ?? 'v1';
    const sandbox = new CgroupSandbox(version, options.memoryRoot ?? (version === 'v1' ? CGROUP_V1_MEMORY_ROOT : CGROUP_V2_ROOT), options.startTimeoutMs ?? scaledTimeoutMs(DEFAULT_START_TIMEOUT_MS));
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
    if (this.version === 'v1') {
      mkdirSync(path, { recursive: true });
      return path;
    }
    // v2: each level enables the controllers for the next before the next is created.
    let dir = this.path;
    for (const part of relative.split('/').filter((p) => p !== '')) {
      this.enableControllers(dir);
      dir = join(dir, part);
      if (!existsSync(dir)) mkdirSync(dir);
    }
    return path;
  }

  private enableControllers(dir: string): void {
    const enabled = readFileSync(join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/);
    const missing = V2_CONTROLLERS.filter((controller) => !enabled.includes(controller));
    if (missing.length > 0) writeFileSync(join(dir, 'cgroup.subtree_control'), missing.map((c) => `+${c}`).join(' '));
  }

  /** Sets the hard memory limit of a cgroup below the sandbox (memory.limit_in_bytes, memory.max on v2). */
  setLimit(relative: string, limitBytes: bigint): void {
    this.write(relative, this.version === 'v1' ? 'memory.limit_in_bytes' : 'memory.max', `${limitBytes}\n`);
  }

  /** Writes a control file of a cgroup below the sandbox. */
  write(relative: string, file: string, text: string): void {
    writeFileSync(join(this.resolve(relative), file), text);
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

  /**
   * Starts `command` in the cgroup (what it starts is born there too); resolves once it prints
   * `ready` on its own line.
   */
  startCommand(relative: string, command: readonly string[]): Promise<SandboxProcess> {
    return this.start(relative, 0, command);
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
    let stdout = '';
    const output = (): string => stdout;
    const exitSignal = (): NodeJS.Signals | null => child.signalCode;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${command[0]} in ${cgroup} not ready after ${this.startTimeoutMs} ms`)), this.startTimeoutMs);
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('ready\n')) {
          clearTimeout(timer);
          resolve({ pid, cgroup, allocatedBytes, exited, output, exitSignal });
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

  // v2: what the started processes forked lives in the sandbox too; cgroup.kill ends it all.
  private killEverythingInside(): void {
    if (this.version !== 'v2') return;
    try {
      writeFileSync(join(this.path, 'cgroup.kill'), '1');
    } catch {
      // Already removed, or a kernel before 5.14: the started processes are killed one by one.
    }
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
    this.killEverythingInside();
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
    this.killEverythingInside();
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
