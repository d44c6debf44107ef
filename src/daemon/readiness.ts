// Readiness as a list of named checks. Each part of the agent that can make it unfit to act (the
// watches not synced, the node not observed, the Node not this machine, ...) registers one check
// under its own name; /readyz, the `ready` metric and the `not_ready` metric read them all. A check
// answers null when fine, else one short sentence saying why not.

import type { Gauge } from 'prom-client';

export type ReadinessCheck = () => string | null;

/** One failing check: its name and why it fails. */
export interface NotReady {
  readonly check: string;
  readonly reason: string;
}

export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();

  constructor(private readonly gauges?: { readonly ready: Gauge; readonly notReady: Gauge<'check'> }) {}

  /** Registers a check under a name of its own; returns a function that removes it. */
  add(name: string, check: ReadinessCheck): () => void {
    if (this.checks.has(name)) throw new Error(`readiness check ${name} is already registered`);
    this.checks.set(name, check);
    return () => {
      if (this.checks.get(name) === check) this.checks.delete(name);
      this.gauges?.notReady.remove({ check: name });
    };
  }

  /** The failing checks, in the order they were registered; empty when ready. Updates the gauges. */
  failing(): NotReady[] {
    const failing: NotReady[] = [];
    for (const [check, run] of this.checks) {
      let reason: string | null;
      try {
        reason = run();
      } catch (err) {
        // A check that throws cannot vouch for anything.
        reason = `the ${check} check failed: ${err instanceof Error ? err.message : String(err)}`;
      }
      this.gauges?.notReady.set({ check }, reason === null ? 0 : 1);
      if (reason !== null) failing.push({ check, reason });
    }
    this.gauges?.ready.set(failing.length === 0 ? 1 : 0);
    return failing;
  }

  /** Null when ready, else the reasons joined into one line (the /readyz body). */
  reason(): string | null {
    const failing = this.failing();
    return failing.length === 0 ? null : failing.map((f) => f.reason).join('; ');
  }
}
