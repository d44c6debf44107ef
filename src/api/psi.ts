// Pressure stall information (PSI) vocabulary: what a kernel pressure file holds, and the node
// conditions and taints the agent derives from the pods' cgroup's memory and I/O pressure, named
// after KEP-5394 (`KubepodsMemoryContentionPressure`, `KubepodsDiskContentionPressure`, taints
// `memory-contention-pressure` and `disk-contention-pressure`) under the agent's own prefix.

/** The resources whose pressure can raise a condition. CPU is left out, as in KEP-5394: CFS throttling of a pod at its limit shows as CPU pressure. */
export type PsiResource = 'memory' | 'io';
export const PSI_RESOURCES: readonly PsiResource[] = ['memory', 'io'];

/** `some`: at least one task stalled; `full`: every non-idle task stalled at once. */
export type PsiLine = 'some' | 'full';

/** One line of a pressure file: the kernel's running averages in percent of wall time, and the total stall. */
export interface PsiAverages {
  readonly avg10Percent: number;
  readonly avg60Percent: number;
  readonly avg300Percent: number;
  readonly totalUs: bigint;
}

/** A pressure file (`memory.pressure`, `io.pressure`, /proc/pressure/*): `full` is absent only on old kernels' CPU file. */
export interface PressureFile {
  readonly some: PsiAverages;
  readonly full: PsiAverages | null;
}

/** The condition type each resource raises (after the prefix), as KEP-5394 names the kubepods-level ones. */
export const PSI_CONDITION_TYPES: Readonly<Record<PsiResource, string>> = Object.freeze({
  memory: 'KubepodsMemoryContentionPressure',
  io: 'KubepodsDiskContentionPressure',
});

/** The NoSchedule taint each resource's condition sets (after the prefix), as KEP-5394 names them. */
export const PSI_TAINT_NAMES: Readonly<Record<PsiResource, string>> = Object.freeze({
  memory: 'memory-contention-pressure',
  io: 'disk-contention-pressure',
});

/** The kernel file of each resource in a cgroup directory. */
export const PSI_FILES: Readonly<Record<PsiResource, string>> = Object.freeze({ memory: 'memory.pressure', io: 'io.pressure' });
