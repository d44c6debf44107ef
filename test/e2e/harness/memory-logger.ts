// A Logger that keeps every line the agent logs in memory (the tests' RecordingLogger): the tests
// assert on them (no request was refused with 403, local termination happened) and print the tail
// when a test fails. KEA_E2E_LOG=1 also writes them to stderr as they come.

import { formatLogLine, RecordingLogger, type LogLine } from '../../fakes/recording-logger.js';

export type { LogLine as LogEntry } from '../../fakes/recording-logger.js';

export class MemoryLogger extends RecordingLogger {
  static create(echo = process.env.KEA_E2E_LOG === '1'): MemoryLogger {
    return new MemoryLogger([], {}, echo ? (line) => process.stderr.write(`${formatLogLine(line)}\n`) : null);
  }

  /**
   * Lines that report a request refused with 401 or 403: a right missing from the ClusterRole, or
   * a token the API server does not accept.
   */
  refusals(): LogLine[] {
    return this.lines.filter((e) => [401, 403].includes(Number(e.fields.status)) || /\bforbidden\b|\bUnauthorized\b/i.test(`${e.msg} ${String(e.fields.error ?? e.fields.err ?? e.fields.message ?? '')}`));
  }
}
