// Reports the node's pressure on the Node object under the agent's own condition types (never
// the kubelet's `MemoryPressure`, which the kubelet owns and would overwrite), and optionally a
// NoSchedule taint of the agent's own key while any pressure condition holds. The conditions
// already include the pressure transition period, so the taint is removed after it too.
//
// What the agent puts on its Node it takes off when it stops maintaining it: whenever it is not
// the one keeping them current (reporting turned off, the condition prefix or taint key changed,
// dry run, shutting down) its conditions become `Unknown` and its taint goes, so no stale `True`
// or cordon outlives its reason. Nothing is written while the agent may not act on its Node.

import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { Node } from '../api/pod.js';
import { NODE_CONDITIONS, type NodeConditionType } from '../api/signals.js';
import type { AgentNodeCondition, ClusterView, NodeReporter } from './ports.js';

export interface NodeStatusSettings {
  readonly enabled: boolean;
  readonly dryRun: boolean;
  /** Prefix of the agent's condition types: `kube-eviction-agent.io/` gives `kube-eviction-agent.io/MemoryPressure`. */
  readonly conditionTypePrefix: string;
  readonly taint: { readonly enabled: boolean; readonly key: string };
}

export interface NodeStatusDeps {
  readonly reporter: NodeReporter;
  /** The Node as the watch holds it: what is on it now, so cleaning up costs no request when there is nothing to clean. */
  readonly cluster: ClusterView;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Null while the agent may act on its Node; else why not (then nothing is written). */
  readonly refusal?: () => string | null;
  /** Added to every condition's message (which agent keeps the conditions: the node lock holder). */
  readonly note?: () => string | null;
}

// Wording after the kubelet's node-status setters, naming the agent.
const conditionText: Readonly<Record<NodeConditionType, { readonly true: [string, string]; readonly false: [string, string] }>> = {
  MemoryPressure: { true: ['AgentHasInsufficientMemory', 'kube-eviction-agent: node has insufficient memory available'], false: ['AgentHasSufficientMemory', 'kube-eviction-agent: node has sufficient memory available'] },
  DiskPressure: { true: ['AgentHasDiskPressure', 'kube-eviction-agent: node has disk pressure'], false: ['AgentHasNoDiskPressure', 'kube-eviction-agent: node has no disk pressure'] },
  PIDPressure: { true: ['AgentHasInsufficientPID', 'kube-eviction-agent: node has insufficient PID available'], false: ['AgentHasSufficientPID', 'kube-eviction-agent: node has sufficient PID available'] },
};

/** Why the agent is not keeping some of its conditions current: the `Unknown` reason and message it leaves. */
export type NotReporting = 'stopped' | 'dry-run' | 'off' | 'renamed';

const unknownText: Readonly<Record<NotReporting, readonly [string, string]>> = {
  stopped: ['AgentStopped', 'kube-eviction-agent stopped; this condition is no longer kept up to date'],
  'dry-run': ['AgentDryRun', 'kube-eviction-agent runs in dry run and does not report this condition'],
  off: ['AgentConditionsOff', 'kube-eviction-agent does not report this condition (reporting.nodeConditions is off)'],
  renamed: ['AgentConditionTypeChanged', 'kube-eviction-agent reports this condition under another type now (reporting.conditionTypePrefix changed)'],
};

// Conditions are re-sent when the Node as watched no longer shows them (recreated, or edited by
// hand), never on a timer: a periodic write per node is what a large cluster pays N times. A
// watch that has not yet delivered the last write is given this long before the Node counts as
// differing, so a slow watch never turns into a write every pass.
const RESEND_MIN_INTERVAL_MS = 30_000;
// A clean-up that failed (the API server down, a permission missing) is tried again this often.
const CLEANUP_RETRY_MS = 30_000;

/** The agent's conditions for a set of active pressure conditions. */
export function agentConditions(active: readonly NodeConditionType[], prefix: string): AgentNodeCondition[] {
  return NODE_CONDITIONS.map((condition) => {
    const on = active.includes(condition);
    const [reason, message] = on ? conditionText[condition].true : conditionText[condition].false;
    return { type: `${prefix}${condition}`, status: on ? 'True' : 'False', reason, message };
  });
}

/** The agent's conditions (under `prefixes`) that `node` carries with a status other than `Unknown`, turned `Unknown`. */
export function conditionsToRetire(node: Node | null, prefixes: Iterable<string>, why: NotReporting): AgentNodeCondition[] {
  const types = new Set([...prefixes].flatMap((prefix) => NODE_CONDITIONS.map((condition) => `${prefix}${condition}`)));
  const [reason, message] = unknownText[why];
  return (node?.status?.conditions ?? []).filter((c) => types.has(c.type) && c.status !== 'Unknown').map((c) => ({ type: c.type, status: 'Unknown', reason, message }));
}

/** Whether `node` (as watched; null: not seen, which proves nothing) lacks any of `conditions` as written. */
export function nodeLacks(node: Node | null, conditions: readonly AgentNodeCondition[]): boolean {
  if (node === null) return false;
  const present = node.status?.conditions ?? [];
  return conditions.some((want) => !present.some((c) => c.type === want.type && c.status === want.status && c.reason === want.reason && c.message === want.message));
}

/** Which of the agent's taint keys `node` carries (as a NoSchedule taint). */
export function taintsToRemove(node: Node | null, keys: Iterable<string>): string[] {
  const wanted = new Set(keys);
  return [...new Set((node?.spec?.taints ?? []).filter((t) => t.effect === 'NoSchedule' && wanted.has(t.key)).map((t) => t.key))];
}

export class NodeStatusReporter {
  private settings: NodeStatusSettings;
  private readonly log: Logger;
  private lastSent: string | null = null;
  private lastSentAtMs = 0;
  private taintPresent: boolean | null = null;
  private stopping = false;
  // Every prefix and taint key this agent has used: what it must take off when it stops using them.
  private readonly prefixes = new Set<string>();
  private readonly taintKeys = new Set<string>();
  private lastCleanup: { key: string; atMs: number } | null = null;

  constructor(
    settings: NodeStatusSettings,
    private readonly deps: NodeStatusDeps,
  ) {
    this.settings = settings;
    this.log = deps.logger.child({ component: 'node-status' });
    this.remember(settings);
  }

  updateSettings(settings: NodeStatusSettings): void {
    this.settings = settings;
    this.remember(settings);
    this.lastSent = null;
    this.taintPresent = null;
    this.lastCleanup = null;
  }

  /**
   * After a pass: sends the conditions when they changed (or the watched Node lost them) and sets or
   * clears the taint (kept while `holdTaint`: an eviction storm's cool-down); or, when the agent
   * does not maintain them, retires what it left on the Node.
   */
  async report(active: readonly NodeConditionType[], nowMs: number, holdTaint = false): Promise<void> {
    if (this.stopping || this.refused()) return;
    const { enabled, dryRun, conditionTypePrefix, taint } = this.settings;
    const why: NotReporting | null = dryRun ? 'dry-run' : enabled ? null : 'off';
    if (why !== null) {
      await this.cleanUp(why, [...this.prefixes], [...this.taintKeys], nowMs);
      return;
    }
    // Still in force, but no longer this agent's: earlier prefixes and taint keys.
    const oldPrefixes = [...this.prefixes].filter((p) => p !== conditionTypePrefix);
    const oldKeys = [...this.taintKeys].filter((k) => !taint.enabled || k !== taint.key);
    if (oldPrefixes.length > 0 || oldKeys.length > 0) await this.cleanUp('renamed', oldPrefixes, oldKeys, nowMs);

    // The taint first: its write is conditional on the Node's resourceVersion as watched, which the
    // conditions' write would change (a conflict, a read and a second try, on every node at once in
    // a fleet-wide storm); the conditions' strategic merge patch is conditional on nothing.
    if (taint.enabled) {
      const want = active.length > 0 || holdTaint;
      if (want !== this.taintPresent && (await this.deps.reporter.setTaint({ key: taint.key, value: '', effect: 'NoSchedule' }, want))) {
        this.taintPresent = want;
        this.log.info(want ? 'pressure taint added' : 'pressure taint removed', { key: taint.key, ...(holdTaint && active.length === 0 ? { coolDown: true } : {}) });
      }
    }
    const note = this.deps.note?.() ?? null;
    const conditions = agentConditions(active, conditionTypePrefix).map((c) => (note === null ? c : { ...c, message: `${c.message} (${note})` }));
    const key = JSON.stringify(conditions);
    if (key !== this.lastSent || (nowMs - this.lastSentAtMs >= RESEND_MIN_INTERVAL_MS && nodeLacks(this.deps.cluster.node(), conditions))) {
      if (await this.deps.reporter.setConditions(conditions)) {
        if (key !== this.lastSent) this.log.info('node conditions set', { active });
        this.lastSent = key;
        this.lastSentAtMs = nowMs;
      }
    }
  }

  /** At shutdown: the agent's conditions become `Unknown` and its taint goes. Resolves when written (or refused). */
  async shutdown(): Promise<void> {
    this.stopping = true;
    if (this.refused()) return;
    this.lastCleanup = null;
    await this.cleanUp('stopped', [...this.prefixes], [...this.taintKeys], this.deps.clock.nowMs());
  }

  private remember(settings: NodeStatusSettings): void {
    this.prefixes.add(settings.conditionTypePrefix);
    this.taintKeys.add(settings.taint.key);
  }

  private refused(): boolean {
    return (this.deps.refusal?.() ?? null) !== null;
  }

  // Writes only what the Node (as watched) still shows; a failed clean-up is retried later.
  private async cleanUp(why: NotReporting, prefixes: readonly string[], keys: readonly string[], nowMs: number): Promise<void> {
    const node = this.deps.cluster.node();
    const conditions = conditionsToRetire(node, prefixes, why);
    const taints = taintsToRemove(node, keys);
    if (conditions.length === 0 && taints.length === 0) return;
    const key = JSON.stringify([conditions, taints]);
    if (this.lastCleanup !== null && this.lastCleanup.key === key && nowMs - this.lastCleanup.atMs < CLEANUP_RETRY_MS) return;
    this.lastCleanup = { key, atMs: nowMs };
    const { reporter } = this.deps;
    if (conditions.length > 0 && (await reporter.setConditions(conditions))) {
      this.log.info('node conditions no longer reported: set Unknown', { types: conditions.map((c) => c.type), reason: conditions[0]?.reason });
      this.lastSent = null;
    }
    for (const taintKey of taints) {
      if (await reporter.setTaint({ key: taintKey, value: '', effect: 'NoSchedule' }, false)) {
        this.log.info('pressure taint removed: the agent no longer maintains it', { key: taintKey, why });
        if (taintKey === this.settings.taint.key) this.taintPresent = false;
      }
    }
  }
}
