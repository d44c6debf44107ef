// A Logger that keeps every line the agent logs in memory: the tests assert on them (no request
// was refused with 403, local termination happened) and print the tail when a test fails.
// KEA_E2E_LOG=1 also writes them to stderr as they come.

import type { LogFields, Logger } from '../../../src/api/logger.js';

export interface LogEntry {
  readonly atMs: number;
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly msg: string;
  /** The child bindings and the line's own fields, merged. */
  readonly fields: LogFields;
}

export class MemoryLogger implements Logger {
  private constructor(
    private readonly entries: LogEntry[],
    private readonly bindings: LogFields,
    private readonly echo: boolean,
  ) {}

  static create(echo = process.env.KEA_E2E_LOG === '1'): MemoryLogger {
    return new MemoryLogger([], {}, echo);
  }

  debug(msg: string, fields?: LogFields): void {
    this.add('debug', msg, fields);
  }

  info(msg: string, fields?: LogFields): void {
    this.add('info', msg, fields);
  }

  warn(msg: string, fields?: LogFields): void {
    this.add('warn', msg, fields);
  }

  error(msg: string, fields?: LogFields): void {
    this.add('error', msg, fields);
  }

  child(bindings: LogFields): Logger {
    return new MemoryLogger(this.entries, { ...this.bindings, ...bindings }, this.echo);
  }

  /** Every line so far. */
  lines(): readonly LogEntry[] {
    return this.entries;
  }

  /** Lines whose message is `msg` (and whose fields include `fields`, if given). */
  find(msg: string, fields: LogFields = {}): LogEntry[] {
    return this.entries.filter((e) => e.msg === msg && Object.entries(fields).every(([k, v]) => e.fields[k] === v));
  }

  /**
   * Lines that report a request refused with 401 or 403: a right missing from the ClusterRole, or
   * a token the API server does not accept.
   */
  refusals(): LogEntry[] {
    return this.entries.filter((e) => [401, 403].includes(Number(e.fields.status)) || /\bforbidden\b|\bUnauthorized\b/i.test(`${e.msg} ${String(e.fields.error ?? e.fields.err ?? e.fields.message ?? '')}`));
  }

  /** The last lines as JSON, for a failure message. */
  tail(count = 60): string {
    return this.entries
      .slice(-count)
      .map((e) => `${new Date(e.atMs).toISOString()} ${e.level} ${e.msg} ${JSON.stringify(e.fields)}`)
      .join('\n');
  }

  private add(level: LogEntry['level'], msg: string, fields?: LogFields): void {
    const entry: LogEntry = { atMs: Date.now(), level, msg, fields: { ...this.bindings, ...fields } };
    this.entries.push(entry);
    if (this.echo) process.stderr.write(`${new Date(entry.atMs).toISOString()} ${level} ${msg} ${JSON.stringify(entry.fields)}\n`);
  }
}
