// A long-running child process of the harness (etcd, kube-apiserver) with its output in a log
// file: started with a clean environment, watched for an early exit, and stopped by its own PID
// with a signal and a deadline, never by name (other API servers may run on the same machine).

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export class ManagedProcess {
  readonly pid: number;
  /** Resolves when the process has exited and been reaped. */
  readonly exited: Promise<ProcessExit>;
  private exit: ProcessExit | null = null;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    readonly logFile: string,
  ) {
    if (child.pid === undefined) throw new Error(`${name} did not start`);
    this.pid = child.pid;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
  }

  /** Starts `command` with stdout and stderr appended to `logFile`. */
  static start(name: string, command: string, args: readonly string[], options: { env: NodeJS.ProcessEnv; logFile: string; cwd?: string }): ManagedProcess {
    const fd = openSync(options.logFile, 'a');
    try {
      const child = spawn(command, args, { env: options.env, cwd: options.cwd, stdio: ['ignore', fd, fd] });
      child.once('error', () => undefined);
      return new ManagedProcess(name, child, options.logFile);
    } finally {
      closeSync(fd);
    }
  }

  /** The exit status once it has exited, else null. */
  get exitStatus(): ProcessExit | null {
    return this.exit;
  }

  get running(): boolean {
    return this.exit === null;
  }

  /** Sends a signal if it still runs. */
  signal(signal: NodeJS.Signals): void {
    if (!this.running) return;
    try {
      process.kill(this.pid, signal);
    } catch {
      // It exited in between.
    }
  }

  /** Sends `signal`, waits up to `timeoutMs` for the exit, then SIGKILLs and waits for good. */
  async stop(signal: NodeJS.Signals, timeoutMs: number): Promise<ProcessExit> {
    if (!this.running) return this.exit as ProcessExit;
    this.signal(signal);
    if (signal !== 'SIGKILL') {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
      const outcome = await Promise.race([this.exited, deadline]);
      clearTimeout(timer);
      if (outcome === 'timeout') this.signal('SIGKILL');
    }
    return this.exited;
  }

  /** The last lines of its log, for a failure message. */
  logTail(lines = 30): string {
    try {
      return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  describeExit(): string {
    const exit = this.exit;
    if (exit === null) return `${this.name} (pid ${this.pid}) is running`;
    return `${this.name} (pid ${this.pid}) exited with ${exit.signal !== null ? `signal ${exit.signal}` : `code ${exit.code}`}`;
  }
}
