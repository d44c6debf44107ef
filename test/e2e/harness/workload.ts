// The process a fake pod runs: Node.js started inside the pod's container cgroup (it joins the
// cgroup before exec, so all its memory is charged there) that allocates and touches a given
// amount of memory, then holds it. On request it grows further, all at once or as a leak (a step
// every interval), up to a target. SIGTERM ends it at once, as a container's main process would.

import { spawn, type ChildProcess } from 'node:child_process';

// Commands arrive as JSON lines on stdin: {"targetBytes", "stepBytes", "intervalMs"}. Every byte is
// written so the pages are really charged. It reports "ready" once the first target is held, and
// "held <bytes>" whenever it reaches a target.
const WORKLOAD_SCRIPT = `
const held = [];
let heldBytes = 0;
let plan = { targetBytes: Number(process.argv[1]), stepBytes: 16 * 1024 * 1024, intervalMs: 0 };
let timer = null;
let ready = false;
function allocate(bytes) {
  const chunk = Buffer.allocUnsafeSlow(bytes);
  chunk.fill(0x5a);
  held.push(chunk);
  heldBytes += bytes;
}
function grow() {
  timer = null;
  while (heldBytes < plan.targetBytes) {
    allocate(Math.min(plan.stepBytes, plan.targetBytes - heldBytes));
    if (plan.intervalMs > 0 && heldBytes < plan.targetBytes) {
      timer = setTimeout(grow, plan.intervalMs);
      return;
    }
  }
  process.stdout.write(ready ? 'held ' + heldBytes + '\\n' : 'ready\\n');
  ready = true;
}
let input = '';
process.stdin.on('data', (chunk) => {
  input += chunk;
  let newline;
  while ((newline = input.indexOf('\\n')) >= 0) {
    const line = input.slice(0, newline);
    input = input.slice(newline + 1);
    if (line.trim() === '') continue;
    plan = { ...plan, ...JSON.parse(line) };
    if (timer !== null) clearTimeout(timer);
    grow();
  }
});
process.stdin.on('end', () => {});
process.on('SIGTERM', () => process.exit(143));
setInterval(() => {}, 1 << 30);
grow();
`;

export interface LeakPlan {
  /** Hold this much in total (bytes allocated by the workload, beyond Node's own footprint). */
  readonly targetBytes: number;
  /** Allocate this much at a time (default 16 MiB). */
  readonly stepBytes?: number;
  /** Wait this long between steps; 0 allocates the rest at once (default 0). */
  readonly intervalMs?: number;
}

export interface WorkloadExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export class Workload {
  readonly pid: number;
  readonly exited: Promise<WorkloadExit>;
  private exitStatus: WorkloadExit | null = null;
  private stdout = '';
  private stderr = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly cgroup: string,
  ) {
    if (child.pid === undefined) throw new Error(`cannot start a workload in ${cgroup}`);
    this.pid = child.pid;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitStatus = { code, signal };
        resolve(this.exitStatus);
      });
    });
    child.stdout?.on('data', (chunk: Buffer) => (this.stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    // A workload killed while a command is being written must not fail the test process.
    child.stdin?.on('error', () => undefined);
  }

  /** Starts the workload in `cgroup` (an absolute path) and resolves once it holds `initialBytes`. */
  static async start(cgroup: string, initialBytes: number, timeoutMs = 30_000): Promise<Workload> {
    // The shell moves itself into the cgroup and becomes Node (same PID).
    const script = 'echo $$ > "$0/cgroup.procs" || exit 1; exec "$@"';
    const child = spawn('/bin/sh', ['-c', script, cgroup, process.execPath, '--max-old-space-size=64', '-e', WORKLOAD_SCRIPT, String(initialBytes)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const workload = new Workload(child, cgroup);
    await workload.waitForOutput('ready\n', timeoutMs);
    return workload;
  }

  get running(): boolean {
    return this.exitStatus === null;
  }

  /** Grows to the plan's target (a leak when it has an interval); resolves at once. */
  leak(plan: LeakPlan): void {
    if (!this.running) throw new Error(`the workload in ${this.cgroup} has exited`);
    this.child.stdin?.write(`${JSON.stringify(plan)}\n`);
  }

  /** Grows to `targetBytes` and resolves once it holds them. */
  async grow(targetBytes: number, timeoutMs = 30_000): Promise<void> {
    const marker = `held ${targetBytes}\n`;
    this.leak({ targetBytes });
    await this.waitForOutput(marker, timeoutMs);
  }

  /** Sends a signal if it still runs. */
  signal(signal: NodeJS.Signals): void {
    if (!this.running) return;
    try {
      process.kill(this.pid, signal);
    } catch {
      // Exited meanwhile.
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  async stop(graceMs: number): Promise<WorkloadExit> {
    if (!this.running) return this.exitStatus as WorkloadExit;
    this.signal(graceMs <= 0 ? 'SIGKILL' : 'SIGTERM');
    if (graceMs > 0) {
      const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(timer);
    }
    return this.exited;
  }

  private async waitForOutput(marker: string, timeoutMs: number): Promise<void> {
    const deadlineMs = Date.now() + timeoutMs;
    while (!this.stdout.includes(marker)) {
      if (!this.running) throw new Error(`the workload in ${this.cgroup} exited (${JSON.stringify(this.exitStatus)}) before "${marker.trim()}": ${this.stderr.trim()}`);
      if (Date.now() > deadlineMs) throw new Error(`the workload in ${this.cgroup} did not report "${marker.trim()}" within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
