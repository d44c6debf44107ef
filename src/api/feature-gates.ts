// The kubelet feature gates that change an eviction decision, and the kubelet release whose
// behaviour (gate names, defaults, validation) the agent follows. The names are the kubelet's own;
// src/config reads them from `featureGates` and compiles them into one record, with the defaults of
// that release for every gate the file does not set.

/** The kubelet release the agent's decisions follow: its eviction manager, summary provider and gate defaults. */
export const KUBELET_VERSION_FOLLOWED = 'v1.37.2';

/**
 * Gates the pinned kubelet's eviction manager, eviction helpers or summary provider consult in a
 * way that changes which pod is evicted, when, or what the eviction says (see docs/feature-gates.md).
 */
export const DECISION_GATES = ['HugepageAwareEviction', 'InPlacePodVerticalScalingMemoryBackedVolumes', 'KubeletSeparateDiskGC', 'PodLevelResources'] as const;

export type DecisionGate = (typeof DECISION_GATES)[number];

/** Whether each decision gate is on, as the kubelet would have it with the same `featureGates`. */
export type DecisionFeatureGates = Readonly<Record<DecisionGate, boolean>>;

/**
 * The decision gates' defaults in the kubelet followed (each the default of its stage there; a
 * test checks them against the kubelet's generated registry, src/config/kubelet-feature-gates.ts).
 */
export const DECISION_GATE_DEFAULTS: DecisionFeatureGates = Object.freeze({
  HugepageAwareEviction: true,
  InPlacePodVerticalScalingMemoryBackedVolumes: false,
  KubeletSeparateDiskGC: true,
  PodLevelResources: true,
});
