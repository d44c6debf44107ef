// Polling with a deadline, for conditions the tests cannot be told about (a pod gone, a
// condition written, a server ready). Timeouts are generous: the machine running the tests may be
// loaded; the bounds that matter for a behaviour are asserted separately.

export interface WaitOptions {
  readonly timeoutMs: number;
  /** Between two checks (default 100 ms). */
  readonly intervalMs?: number;
  /** Names the condition in the timeout error. */
  readonly what: string;
  /** A reason to stop waiting at once (a process exited); its text goes into the error. */
  readonly abortIf?: () => string | null;
  /** Extra detail for the timeout error (the last state seen). */
  readonly detail?: () => string;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with the first non-undefined, non-false value of `check`; rejects at the deadline. */
export async function waitFor<T>(check: () => T | undefined | false | Promise<T | undefined | false>, options: WaitOptions): Promise<T> {
  const deadlineMs = Date.now() + options.timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    const aborted = options.abortIf?.() ?? null;
    if (aborted !== null) throw new Error(`gave up waiting for ${options.what}: ${aborted}`);
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
      lastError = null;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadlineMs) {
      const detail = options.detail?.() ?? '';
      const cause = lastError === null ? '' : ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.what}${cause}${detail === '' ? '' : `\n${detail}`}`);
    }
    await sleep(options.intervalMs ?? 100);
  }
}
