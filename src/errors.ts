// The one catalog of coded errors. Every error the agent reports to an operator carries a stable
// `EVA_ERR_*` code (listed in docs/errors.md, which a test keeps in step with this file).
// Messages start with a capital letter or the kubelet's own wording, and have no trailing period.

export const ERROR_CODES = {
  EVA_ERR_CONFIG_INVALID: 'The configuration is invalid',
  EVA_ERR_CONFIG_YAML: 'The configuration file is not valid YAML',
  EVA_ERR_CONFIG_READ: 'The configuration file cannot be read',
  EVA_ERR_CONFIG_HELD: 'A reloaded configuration was held back: its thresholds would evict on the node as it stands',
  EVA_ERR_THRESHOLD_NEAR_WHOLE: 'A percentage threshold is within 0.1 % of the whole capacity: it is met on (nearly) every pass',
  EVA_ERR_REPLAY_INPUT: 'A replay input line is invalid',
  EVA_ERR_NATIVE: 'A system call failed',
  EVA_ERR_OBSERVE: 'The node cannot be observed',
  EVA_ERR_CAPABILITY: 'The agent lacks a Linux capability that a feature needs',
  EVA_ERR_KUBE_API: 'A Kubernetes API call failed',
  EVA_ERR_USAGE: 'The command line is invalid',
  EVA_ERR_SHUTDOWN: 'The agent is shutting down',
  EVA_ERR_START: 'The agent cannot start',
  EVA_ERR_NODE_LOCK: 'The node lock cannot be used',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Base class: a message, a stable code and an optional cause. */
export class AgentError extends Error {
  override name = 'AgentError';
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** One problem in a configuration: the field path (`evictionHard["memory.available"]`) and its raw value. */
export interface ConfigProblem {
  readonly field: string;
  readonly value: unknown;
  readonly message: string;
  /** 1-based line in the file, when known. */
  readonly line?: number;
}

/** Every problem found in a configuration, reported together. */
export class ConfigError extends AgentError {
  override name = 'ConfigError';
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[], code: ErrorCode = 'EVA_ERR_CONFIG_INVALID', options?: { cause?: unknown }) {
    super(code, problems.map(formatConfigProblem).join('\n'), options);
    this.problems = problems;
  }
}

export function formatConfigProblem(problem: ConfigProblem): string {
  const where = problem.line === undefined ? problem.field : `${problem.field} (line ${problem.line})`;
  return problem.field === '' ? problem.message : `${where}: ${problem.message}`;
}

/** A bad replay input line: the 1-based line number and the field path inside it. */
export class ReplayInputError extends AgentError {
  override name = 'ReplayInputError';
  readonly line: number;
  readonly field: string;

  constructor(line: number, field: string, message: string, options?: { cause?: unknown }) {
    super('EVA_ERR_REPLAY_INPUT', `line ${line}: ${field === '' ? '' : `${field}: `}${message}`, options);
    this.line = line;
    this.field = field;
  }
}

/** A failed system call through the FFI boundary. */
export class NativeError extends AgentError {
  override name = 'NativeError';
  readonly syscall: string;
  readonly errno: number;

  constructor(syscall: string, errno: number, detail = '') {
    super('EVA_ERR_NATIVE', `${syscall} failed with errno ${errno}${detail === '' ? '' : `: ${detail}`}`);
    this.syscall = syscall;
    this.errno = errno;
  }
}

/** A failed Kubernetes API call, with its HTTP status (0 when the server was not reached). */
export class KubeApiError extends AgentError {
  override name = 'KubeApiError';
  readonly status: number;

  constructor(status: number, message: string, options?: { cause?: unknown }) {
    super('EVA_ERR_KUBE_API', message, options);
    this.status = status;
  }
}

/** What a thrown (or rejected) value says: an Error's message, a string as it is, anything else as JSON when it can be. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
