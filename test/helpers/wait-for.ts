// Polling with a deadline, for in-process tests whose condition nothing announces (a request the
// stand-in received, a reload applied). The default is generous: a loaded machine delays timers.

/** Resolves once `condition` holds; rejects, naming `what`, after `timeoutMs`. */
export async function waitFor(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadlineMs = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadlineMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
