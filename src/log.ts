// The logger behind the Logger port: pino, JSON lines on standard error, one child logger per
// component (`{"component":"eviction-loop", ...}`).

import { pino, type Logger as PinoLogger } from 'pino';
import type { LogFields, Logger } from './api/logger.js';

function wrap(p: PinoLogger): Logger {
  return {
    debug: (msg: string, fields?: LogFields) => p.debug(fields ?? {}, msg),
    info: (msg: string, fields?: LogFields) => p.info(fields ?? {}, msg),
    warn: (msg: string, fields?: LogFields) => p.warn(fields ?? {}, msg),
    error: (msg: string, fields?: LogFields) => p.error(fields ?? {}, msg),
    child: (bindings: LogFields) => wrap(p.child(bindings)),
  };
}

/** A JSON-lines logger at `level`, writing to `destination` (standard error by default). */
export function createLogger(level: string, destination: NodeJS.WritableStream = process.stderr): Logger {
  return wrap(pino({ level, base: { name: 'kube-eviction-agent' }, timestamp: pino.stdTimeFunctions.isoTime }, destination));
}
