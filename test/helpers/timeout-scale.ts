// One factor for the timeouts of tests that wait on real processes and the emulated cgroup v2
// guest: KEA_TEST_TIMEOUT_SCALE (1 by default, e.g. 3 on a heavily loaded CI machine). The
// timeouts only bound a hang (a wait that succeeds returns as soon as it can), so a larger factor
// costs nothing when all goes well. The guest runner passes the variable on to the guest.

const raw = process.env.KEA_TEST_TIMEOUT_SCALE;
const parsed = raw === undefined || raw === '' ? 1 : Number(raw);
if (!Number.isFinite(parsed) || parsed < 1 || parsed > 100) {
  throw new Error(`KEA_TEST_TIMEOUT_SCALE must be a number from 1 to 100: ${JSON.stringify(raw)}`);
}

/** The factor in force. */
export const TIMEOUT_SCALE: number = parsed;

/** `timeoutMs` times the factor, in whole milliseconds. */
export function scaledTimeoutMs(timeoutMs: number): number {
  return Math.ceil(timeoutMs * TIMEOUT_SCALE);
}
