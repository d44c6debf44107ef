// The switches of the NoExecute taint logic. Every default is upstream's behaviour; each switch
// is a documented deviation an operator opts into (docs/taints.md).

export interface TaintOptions {
  /**
   * Honour the `Gt`/`Lt` toleration operators (the `TaintTolerationComparisonOperators` gate,
   * alpha in v1.35). Off, a Gt/Lt toleration never matches, so a pod relying on one is deleted.
   */
  readonly comparisonOperators: boolean;
  /** Leave pods that already have a deletionTimestamp alone, both when deciding and when a timer fires. */
  readonly skipTerminatingPods: boolean;
  /**
   * Count `tolerationSeconds` from each taint's `timeAdded` (when set) instead of from when the
   * taint was observed (quirk Q3), so a restart does not grant tolerating pods a fresh period.
   */
  readonly countFromTimeAdded: boolean;
}

/** Every switch, for comparing two sets. */
export const TAINT_OPTION_NAMES: readonly (keyof TaintOptions)[] = ['comparisonOperators', 'skipTerminatingPods', 'countFromTimeAdded'];

export const DEFAULT_TAINT_OPTIONS: TaintOptions = {
  comparisonOperators: false,
  skipTerminatingPods: false,
  countFromTimeAdded: false,
};

/** The switches alone, out of anything that carries them (the agent's `taintEviction` settings). */
export function pickTaintOptions(source: TaintOptions): TaintOptions {
  return { comparisonOperators: source.comparisonOperators, skipTerminatingPods: source.skipTerminatingPods, countFromTimeAdded: source.countFromTimeAdded };
}

export function resolveTaintOptions(options: Partial<TaintOptions> | undefined): TaintOptions {
  return { ...DEFAULT_TAINT_OPTIONS, ...options };
}
