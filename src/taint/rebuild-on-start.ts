// What a freshly started agent schedules for its node: the node handled as an informer add, on
// an empty queue. Nothing is persisted, so this is the whole of restart recovery, and what
// `tolerationSeconds` counts from then is the `countFromTimeAdded` switch (docs/taints.md).

import { podKey, type Node, type Pod, type Taint } from '../api/pod.js';
import { decideTaintEviction } from './taint-decision.js';
import { resolveTaintOptions, type TaintOptions } from './taint-options.js';
import { getNoExecuteTaints } from './tolerations.js';

/** One deletion the rebuilt queue holds; `fireAtMs === createdAtMs` means at once. */
export interface RebuiltEviction {
  readonly podKey: string;
  readonly pod: Pod;
  readonly createdAtMs: number;
  readonly fireAtMs: number;
}

export interface RebuildResult {
  /** The taint state after the node add: null when the node has no NoExecute taint. */
  readonly noExecuteTaints: readonly Taint[] | null;
  /** In pod-list order; a key listed twice keeps its first decision, as the queue would. */
  readonly evictions: readonly RebuiltEviction[];
}

/** The schedule a handler builds from `nodeUpdated(null, node)` at `nowMs`, computed without one. */
export function rebuildOnStart(node: Node | null, pods: readonly Pod[], nowMs: number, options?: Partial<TaintOptions>): RebuildResult {
  if (node === null) return { noExecuteTaints: null, evictions: [] };
  const taints = getNoExecuteTaints(node.spec?.taints);
  if (taints.length === 0) return { noExecuteTaints: null, evictions: [] };
  const resolved = resolveTaintOptions(options);
  const nodeName = node.metadata.name ?? '';
  const evictions: RebuiltEviction[] = [];
  const seen = new Set<string>();
  for (const pod of pods) {
    if ((pod.spec.nodeName ?? '') !== nodeName) continue;
    const key = podKey(pod);
    if (seen.has(key)) continue;
    const decision = decideTaintEviction(pod, taints, nowMs, resolved);
    if (decision.kind === 'untolerated') {
      evictions.push({ podKey: key, pod, createdAtMs: nowMs, fireAtMs: nowMs });
      seen.add(key);
    } else if (decision.kind === 'timed') {
      evictions.push({ podKey: key, pod, createdAtMs: nowMs, fireAtMs: decision.fireAtMs });
      seen.add(key);
    }
  }
  return { noExecuteTaints: taints, evictions };
}
