// Reports the node's pressure on the Node object under the agent's own condition types (never
// the kubelet's `MemoryPressure`, which the kubelet owns and would overwrite), and optionally a
// NoSchedule taint of the agent's own key while any pressure condition holds. The conditions
// already include the pressure transition period, so the taint is removed after it too.

import type { Logger } from '../api/logger.js';
import { NODE_CONDITIONS, type NodeConditionType } from '../api/signals.js';
import type { AgentNodeCondition, NodeReporter } from './ports.js';

export interface NodeStatusSettings {
  readonly enabled: boolean;
  readonly dryRun: boolean;
  /** Prefix of the agent's condition types: `kube-eviction-agent.io/` gives `kube-eviction-agent.io/MemoryPressure`. */
  readonly conditionTypePrefix: string;
  readonly taint: { readonly enabled: boolean; readonly key: string };
}

// Wording after the kubelet's node-status setters, naming the agent.
const conditionText: Readonly<Record<NodeConditionType, { readonly true: [string, string]; readonly false: [string, string] }>> = {
  MemoryPressure: { true: ['AgentHasInsufficientMemory', 'kube-eviction-agent: node has insufficient memory available'], false: ['AgentHasSufficientMemory', 'kube-eviction-agent: node has sufficient memory available'] },
  DiskPressure: { true: ['AgentHasDiskPressure', 'kube-eviction-agent: node has disk pressure'], false: ['AgentHasNoDiskPressure', 'kube-eviction-agent: node has no disk pressure'] },
  PIDPressure: { true: ['AgentHasInsufficientPID', 'kube-eviction-agent: node has insufficient PID available'], false: ['AgentHasSufficientPID', 'kube-eviction-agent: node has sufficient PID available'] },
};

// Conditions are re-sent at least this often, so a node object recreated or edited by hand
// gets them back (the kubelet's own status heartbeat is similar).
const HEARTBEAT_MS = 5 * 60_000;

/** The agent's conditions for a set of active pressure conditions. */
export function agentConditions(active: readonly NodeConditionType[], prefix: string): AgentNodeCondition[] {
  return NODE_CONDITIONS.map((condition) => {
    const on = active.includes(condition);
    const [reason, message] = on ? conditionText[condition].true : conditionText[condition].false;
    return { type: `${prefix}${condition}`, status: on ? 'True' : 'False', reason, message };
  });
}

export class NodeStatusReporter {
  private settings: NodeStatusSettings;
  private readonly reporter: NodeReporter;
  private readonly log: Logger;
  private lastSent: string | null = null;
  private lastSentAtMs = 0;
  private taintPresent: boolean | null = null;

  constructor(settings: NodeStatusSettings, reporter: NodeReporter, logger: Logger) {
    this.settings = settings;
    this.reporter = reporter;
    this.log = logger.child({ component: 'node-status' });
  }

  updateSettings(settings: NodeStatusSettings): void {
    this.settings = settings;
    this.lastSent = null;
    this.taintPresent = null;
  }

  /** Sends the conditions when they changed (or the heartbeat is due), and sets or clears the taint. */
  async report(active: readonly NodeConditionType[], nowMs: number): Promise<void> {
    if (!this.settings.enabled || this.settings.dryRun) return;
    const conditions = agentConditions(active, this.settings.conditionTypePrefix);
    const key = JSON.stringify(conditions);
    if (key !== this.lastSent || nowMs - this.lastSentAtMs >= HEARTBEAT_MS) {
      if (await this.reporter.setConditions(conditions)) {
        if (key !== this.lastSent) this.log.info('node conditions set', { active });
        this.lastSent = key;
        this.lastSentAtMs = nowMs;
      }
    }
    if (this.settings.taint.enabled) {
      const want = active.length > 0;
      if (want !== this.taintPresent && (await this.reporter.setTaint({ key: this.settings.taint.key, value: '', effect: 'NoSchedule' }, want))) {
        this.taintPresent = want;
        this.log.info(want ? 'pressure taint added' : 'pressure taint removed', { key: this.settings.taint.key });
      }
    }
  }
}
