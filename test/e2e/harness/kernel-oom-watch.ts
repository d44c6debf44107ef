// The kernel OOM killer's kills in one cgroup subtree, read from the kernel log as they happen
// (`dmesg --follow-new`). Cgroup v1 counts an OOM kill only in the victim's own cgroup, and the
// kubelet removes a pod's cgroup with its counter, so the kernel's own line is the record that
// survives: `oom-kill:constraint=CONSTRAINT_MEMCG,...,oom_memcg=/<cgroup>,task_memcg=/<cgroup>/...,
// task=<comm>,pid=<pid>,uid=<uid>`. The kernel rate-limits that line (10 per 5 s) but not the
// `Killed process <pid> (<comm>)` line after it, so a kill seen without its summary is kept too, with
// its cgroups unknown: a test asserting that no kill happened must not pass because the kernel was
// quiet about one.

import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';

export interface OomKill {
  readonly atMs: number;
  /** The cgroup whose limit was hit (`oom_memcg`); null where the kernel's rate limit left out the summary. */
  readonly limitCgroup: string | null;
  /** The victim's cgroup (`task_memcg`); null where the kernel's rate limit left out the summary. */
  readonly taskCgroup: string | null;
  readonly task: string;
  readonly pid: number;
}

const KILLED_PROCESS = /Killed process (\d+) \((.*?)\) total-vm/;

export class KernelOomWatch {
  readonly kills: OomKill[] = [];
  private buffered = '';
  /** The PID of the last summary line read, whether or not its kill was in the subtree. */
  private summarizedPid = 0;

  private constructor(
    private readonly child: ChildProcess,
    private readonly cgroupPrefix: string,
  ) {
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      this.buffered += chunk;
      let newline;
      while ((newline = this.buffered.indexOf('\n')) >= 0) {
        this.parse(this.buffered.slice(0, newline));
        this.buffered = this.buffered.slice(newline + 1);
      }
    });
    child.once('error', () => undefined);
  }

  /** Watches for kills charged to cgroups under `/<cgroupName>` (the kubelet's cgroup root). */
  static start(cgroupName: string): KernelOomWatch {
    const child = spawn('dmesg', ['--follow-new', '--nopager'], { stdio: ['ignore', 'pipe', 'ignore'] });
    return new KernelOomWatch(child, `/${cgroupName}`);
  }

  private parse(line: string): void {
    const killed = KILLED_PROCESS.exec(line);
    if (killed !== null) {
      const pid = Number(killed[1]);
      if (pid !== this.summarizedPid) this.kills.push({ atMs: performance.timeOrigin + performance.now(), limitCgroup: null, taskCgroup: null, task: killed[2] ?? '', pid });
      return;
    }
    const at = line.indexOf('oom-kill:');
    if (at < 0) return;
    const fields = new Map(
      line
        .slice(at + 'oom-kill:'.length)
        .split(',')
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const),
    );
    this.summarizedPid = Number(fields.get('pid') ?? 0);
    const limitCgroup = fields.get('oom_memcg') ?? '';
    const taskCgroup = fields.get('task_memcg') ?? '';
    if (!limitCgroup.startsWith(this.cgroupPrefix) && !taskCgroup.startsWith(this.cgroupPrefix)) return;
    this.kills.push({ atMs: performance.timeOrigin + performance.now(), limitCgroup, taskCgroup, task: fields.get('task') ?? '', pid: Number(fields.get('pid') ?? 0) });
  }

  /** Kills seen since `sinceMs` (all by default). */
  since(sinceMs = 0): OomKill[] {
    return this.kills.filter((k) => k.atMs >= sinceMs);
  }

  stop(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  get pid(): number | undefined {
    return this.child.pid;
  }
}
