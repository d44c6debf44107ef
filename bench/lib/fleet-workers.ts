// The fleet benchmark's worker processes (bench/workers/fleet-worker.ts), from the driver's side:
// each runs a few hundred agents and answers commands over IPC. A worker that dies fails every
// command waiting on it instead of leaving the run waiting for ever.

import { fork, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import { trackChild } from './cleanup.js';

export interface WorkerStats {
  readonly agents: number;
  readonly rssBytes: number;
  readonly cpuMicros: number;
  /** How many times each pod (by UID) was ended locally. */
  readonly terminations: Record<string, number>;
  readonly apiErrors: number;
  readonly stormReports: number;
}

export class FleetWorker {
  private readonly waiting = new Map<string, { resolve: (message: Record<string, unknown>) => void; reject: (err: Error) => void }>();
  private exited: string | null = null;

  private constructor(
    readonly child: ChildProcess,
    private readonly say: (line: string) => void,
  ) {
    child.on('message', (message: Record<string, unknown>) => {
      if (message.type === 'error') {
        say(`worker ${child.pid}: ${String(message.message)}`);
        return;
      }
      const waiter = this.waiting.get(String(message.type));
      this.waiting.delete(String(message.type));
      waiter?.resolve(message);
    });
    child.once('exit', (code, signal) => {
      this.exited = `worker ${child.pid} exited (${signal ?? code})`;
      for (const waiter of this.waiting.values()) waiter.reject(new Error(this.exited));
      this.waiting.clear();
    });
  }

  /**
   * Forks a worker at the lowest CPU priority: on a cluster the agents run on their own nodes, so
   * here the API server and etcd are served first and the agents take the CPU left over (what they
   * use is measured apart).
   */
  static start(script: string, say: (line: string) => void): FleetWorker {
    const child = trackChild(fork(script, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: ['--max-old-space-size=4096'] }));
    if (child.pid !== undefined) setProcessPriority(child.pid, 19);
    return new FleetWorker(child, say);
  }

  /** Sends `command` and resolves with the worker's answer of type `reply`. */
  ask(command: Record<string, unknown>, reply: string): Promise<Record<string, unknown>> {
    if (this.exited !== null) return Promise.reject(new Error(this.exited));
    return new Promise((resolve, reject) => {
      this.waiting.set(reply, { resolve, reject });
      this.child.send(command);
    });
  }

  /** Stops the agents (their clean-up included) and the process; never rejects. */
  async stop(): Promise<void> {
    await this.ask({ type: 'stop' }, 'stopped').catch(() => undefined);
    this.child.kill('SIGKILL');
  }
}

/** Sets the nice value of every thread of `pid` (setpriority on a PID sets its main thread's alone). */
export function setProcessPriority(pid: number, nice: number): void {
  let threads: string[] = [];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return;
  }
  for (const tid of threads) {
    try {
      setPriority(Number(tid), nice);
    } catch {
      // The thread has ended.
    }
  }
}

export async function allStats(workers: readonly FleetWorker[]): Promise<WorkerStats[]> {
  return (await Promise.all(workers.map((w) => w.ask({ type: 'stats' }, 'stats')))) as unknown as WorkerStats[];
}

/** Sums a numeric field over the workers. */
export function total(stats: readonly WorkerStats[], field: 'rssBytes' | 'cpuMicros' | 'apiErrors' | 'stormReports' | 'agents'): number {
  return stats.reduce((sum, s) => sum + s[field], 0);
}

/** How many times each pod was ended locally, over every worker. */
export function terminations(stats: readonly WorkerStats[]): Map<string, number> {
  const all = new Map<string, number>();
  for (const s of stats) for (const [uid, times] of Object.entries(s.terminations)) all.set(uid, (all.get(uid) ?? 0) + times);
  return all;
}
