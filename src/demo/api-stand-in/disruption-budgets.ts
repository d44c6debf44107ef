// PodDisruptionBudgets and the budget check of the Eviction subresource: which budget covers a
// pod, how many healthy pods it wants (percentages round up, as the disruption controller does),
// and whether one more disruption fits.

import { clone, isObject, str, type JsonObject } from './json.js';
import { labelsOf, metaOf, phaseOf } from './object-meta.js';
import type { ObjectStore } from './object-store.js';
import { StatusError } from './status-error.js';

/** A PodDisruptionBudget as the stand-in stores it (policy/v1, integer or percentage budgets). */
export interface StandInPdb {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec: {
    readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> };
    readonly minAvailable?: number | string;
    readonly maxUnavailable?: number | string;
  };
}

export class DisruptionBudgets {
  private readonly pdbs = new Map<string, StandInPdb>();

  constructor(private readonly store: ObjectStore) {}

  add(pdb: StandInPdb): void {
    const namespace = pdb.metadata.namespace ?? 'default';
    this.pdbs.set(`${namespace}/${pdb.metadata.name}`, clone({ ...pdb, metadata: { ...pdb.metadata, namespace } }));
  }

  /** Refuses (429) when the pod's PodDisruptionBudget has no disruption left, as the eviction REST does. */
  check(pod: JsonObject, namespace: string): void {
    const labels = labelsOf(pod);
    const budgets = [...this.pdbs.values()].filter((pdb) => pdb.metadata.namespace === namespace && selects(pdb, labels));
    if (budgets.length === 0) return;
    if (budgets.length > 1) throw new StatusError(500, undefined, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
    const pdb = budgets[0] as StandInPdb;
    const covered = this.store.values('pods').filter((p) => str(metaOf(p).namespace) === namespace && selects(pdb, labelsOf(p)));
    const expected = covered.length;
    const healthy = covered.filter((p) => metaOf(p).deletionTimestamp === undefined && isReady(p)).length;
    const desiredHealthy = desiredHealthyPods(pdb, expected);
    // An unready pod may go whenever the budget is met without it (the IfHealthyBudget policy).
    if (!isReady(pod) && healthy >= desiredHealthy) return;
    if (healthy - desiredHealthy > 0) return;
    throw new StatusError(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", {
      causes: [{ reason: 'DisruptionBudget', message: `The disruption budget ${pdb.metadata.name} needs ${desiredHealthy} healthy pods and has ${healthy} currently` }],
    });
  }
}

/** A pod that is not running, or already going, is evicted without consulting its budget. */
export function canIgnorePdb(pod: JsonObject): boolean {
  const phase = phaseOf(pod);
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || metaOf(pod).deletionTimestamp !== undefined;
}

function isReady(pod: JsonObject): boolean {
  const conditions = isObject(pod.status) && Array.isArray(pod.status.conditions) ? pod.status.conditions : [];
  return conditions.some((c) => isObject(c) && c.type === 'Ready' && c.status === 'True');
}

function selects(pdb: StandInPdb, labels: JsonObject): boolean {
  const wanted = pdb.spec.selector?.matchLabels ?? {};
  return Object.entries(wanted).every(([key, value]) => labels[key] === value);
}

/** The disruption controller's desiredHealthy: percentages of the expected count round up. */
function desiredHealthyPods(pdb: StandInPdb, expected: number): number {
  const scaled = (value: number | string): number => (typeof value === 'number' ? value : Math.ceil((expected * Number.parseFloat(value)) / 100));
  if (pdb.spec.minAvailable !== undefined) return scaled(pdb.spec.minAvailable);
  if (pdb.spec.maxUnavailable !== undefined) return Math.max(0, expected - scaled(pdb.spec.maxUnavailable));
  return expected;
}
