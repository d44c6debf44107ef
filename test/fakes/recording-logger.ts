// The one logger for tests: it keeps every line (child bindings merged in, stamped with the wall
// clock), so a test can assert what was logged and how often, and print the tail when it fails.

import type { LogFields, Logger } from '../../src/api/logger.js';

export interface LogLine {
  readonly atMs: number;
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly msg: string;
  /** The child bindings and the line's own fields, merged. */
  readonly fields: LogFields;
}

export class RecordingLogger implements Logger {
  /**
   * @param lines where the lines go (a child shares its parent's)
   * @param echo also called with each line as it comes (the end-to-end tests' KEA_E2E_LOG)
   */
  constructor(
    readonly lines: LogLine[] = [],
    private readonly bindings: LogFields = {},
    private readonly echo: ((line: LogLine) => void) | null = null,
  ) {}

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
    return new RecordingLogger(this.lines, { ...this.bindings, ...bindings }, this.echo);
  }

  /** The lines at one level. */
  at(level: LogLine['level']): LogLine[] {
    return this.lines.filter((l) => l.level === level);
  }

  /** Lines whose message is `msg` (and whose fields include `fields`, if given). */
  find(msg: string, fields: LogFields = {}): LogLine[] {
    return this.lines.filter((l) => l.msg === msg && Object.entries(fields).every(([k, v]) => l.fields[k] === v));
  }

  /** The last lines, one per line, for a failure message. */
  tail(count = 60): string {
    return this.lines.slice(-count).map(formatLogLine).join('\n');
  }

  private add(level: LogLine['level'], msg: string, fields?: LogFields): void {
    const line: LogLine = { atMs: Date.now(), level, msg, fields: { ...this.bindings, ...fields } };
    this.lines.push(line);
    this.echo?.(line);
  }
}

export function formatLogLine(line: LogLine): string {
  return `${new Date(line.atMs).toISOString()} ${line.level} ${line.msg} ${JSON.stringify(line.fields)}`;
}
