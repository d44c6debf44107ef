// A logger that keeps every line, for asserting what the notifiers report (and how often).

import type { LogFields, Logger } from '../../../src/api/logger.js';

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly msg: string;
  readonly fields: LogFields;
}

export class RecordingLogger implements Logger {
  readonly lines: LogLine[];
  private readonly bindings: LogFields;

  constructor(lines: LogLine[] = [], bindings: LogFields = {}) {
    this.lines = lines;
    this.bindings = bindings;
  }

  debug(msg: string, fields: LogFields = {}): void {
    this.lines.push({ level: 'debug', msg, fields: { ...this.bindings, ...fields } });
  }
  info(msg: string, fields: LogFields = {}): void {
    this.lines.push({ level: 'info', msg, fields: { ...this.bindings, ...fields } });
  }
  warn(msg: string, fields: LogFields = {}): void {
    this.lines.push({ level: 'warn', msg, fields: { ...this.bindings, ...fields } });
  }
  error(msg: string, fields: LogFields = {}): void {
    this.lines.push({ level: 'error', msg, fields: { ...this.bindings, ...fields } });
  }
  child(bindings: LogFields): Logger {
    return new RecordingLogger(this.lines, { ...this.bindings, ...bindings });
  }

  at(level: LogLine['level']): LogLine[] {
    return this.lines.filter((l) => l.level === level);
  }
}
