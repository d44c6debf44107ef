// The C reference killer (bench/reference-killer.c): the same threshold registration, the same
// epoll wait and the same kill through cgroup.procs as the agent's memory path, with no JavaScript.
// Built with `cc -O2` at bench time; one long-lived process per sandbox node, as the agent is, armed
// before each run and reporting when the kernel's event reached it and when its kill went out, on
// CLOCK_MONOTONIC (the clock of process.hrtime and of the stepping and allocating children).

import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { trackChild } from './cleanup.js';

/** One kill, as the reference reported it. */
export interface ReferenceKill {
  readonly notifiedNs: bigint;
  readonly killIssuedNs: bigint;
  /** memory.usage_in_bytes as its confirming read saw it, just before the kill. */
  readonly usageAtKillBytes: number;
  readonly processesKilled: number;
}

/** Builds the killer into `scratchDir`; `benchDir` is the compiled bench directory (dist/bench). */
export function buildReferenceKiller(benchDir: string, scratchDir: string): string {
  const source = resolve(benchDir, '..', '..', 'bench', 'reference-killer.c');
  if (!existsSync(source)) throw new Error(`${source} is missing`);
  const binary = join(scratchDir, 'reference-killer');
  execFileSync('cc', ['-O2', '-Wall', '-o', binary, source], { stdio: ['ignore', 'ignore', 'pipe'] });
  return binary;
}

/** Parses a "killed <notified ns> <issued ns> <usage bytes> <processes>" line; null for any other. */
export function parseKillLine(line: string): ReferenceKill | null {
  const match = /^killed (\d+) (\d+) (\d+) (\d+)$/.exec(line);
  if (match === null) return null;
  return { notifiedNs: BigInt(match[1] as string), killIssuedNs: BigInt(match[2] as string), usageAtKillBytes: Number(match[3]), processesKilled: Number(match[4]) };
}

export class ReferenceKiller {
  private readonly waiters: ((line: string) => void)[] = [];
  private readonly early: string[] = [];
  private readonly exited: Promise<void>;
  private stderr = '';

  private constructor(private readonly child: ReturnType<typeof spawn>) {
    const stdout = child.stdout;
    if (stdout === null) throw new Error('the reference killer has no stdout');
    createInterface({ input: stdout }).on('line', (line) => {
      const waiter = this.waiters.shift();
      if (waiter === undefined) this.early.push(line);
      else waiter(line);
    });
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  /** Starts the killer on the node whose memory cgroup directory is `nodeCgroupPath`. */
  static start(binary: string, nodeCgroupPath: string): ReferenceKiller {
    return new ReferenceKiller(trackChild(spawn(binary, [nodeCgroupPath], { stdio: ['pipe', 'pipe', 'pipe'] })));
  }

  private next(timeoutMs: number): Promise<string | null> {
    const line = this.early.shift();
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        resolve(null);
      }, timeoutMs);
      const waiter = (text: string): void => {
        clearTimeout(timer);
        resolve(text);
      };
      this.waiters.push(waiter);
      void this.exited.then(() => {
        clearTimeout(timer);
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        resolve(null);
      });
    });
  }

  private send(command: string): void {
    this.child.stdin?.write(`${command}\n`);
  }

  /** Registers the threshold at `usageBytes` on the node, the victim being `victimCgroupPath`; resolves once the kernel holds it. */
  async arm(usageBytes: number | bigint, victimCgroupPath: string): Promise<void> {
    this.send(`arm ${usageBytes} ${victimCgroupPath}`);
    const reply = await this.next(5000);
    if (reply === null || !reply.startsWith('armed ')) throw new Error(`the reference killer did not arm (${reply ?? 'no reply'}${this.stderr === '' ? '' : `: ${this.stderr.trim()}`})`);
  }

  /** The kill of the armed threshold, or null when none came within `timeoutMs`. */
  async killed(timeoutMs: number): Promise<ReferenceKill | null> {
    const line = await this.next(timeoutMs);
    return line === null ? null : parseKillLine(line);
  }

  /** Drops the armed threshold (a run that ended without its kill); a kill that raced it is returned. */
  async disarm(): Promise<ReferenceKill | null> {
    this.send('disarm');
    let raced: ReferenceKill | null = null;
    for (;;) {
      const line = await this.next(5000);
      if (line === null || line === 'disarmed') return raced;
      raced = parseKillLine(line) ?? raced;
    }
  }

  async stop(): Promise<void> {
    this.child.stdin?.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 2000);
    await this.exited;
    clearTimeout(timer);
  }
}
