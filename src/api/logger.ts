// The logging port: a fixed phrase plus key/values (the kubelet's InfoS style). Adapters wrap
// pino; tests pass a recording logger. Pure code never logs, it returns what to report.

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(bindings: LogFields): Logger;
}

/** A logger that drops everything (for commands that print their own output). */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentLogger,
};
