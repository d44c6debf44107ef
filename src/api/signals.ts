// The eviction signals, spelled exactly as the kubelet's configuration spells them, and the
// kubelet's tables that map each one to the resource it starves and the node condition it raises.

/** The nine valid eviction signals (kubelet `signalToResource` keys), in the engine's fixed order. */
export const SIGNALS = [
  'memory.available',
  'allocatableMemory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'containerfs.available',
  'containerfs.inodesFree',
  'pid.available',
] as const;

export type Signal = (typeof SIGNALS)[number];

export type ResourceName = 'memory' | 'ephemeral-storage' | 'inodes' | 'pids';

export type NodeConditionType = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/** The order node conditions are reported in (the kubelet's order is map order, i.e. random). */
export const NODE_CONDITIONS: readonly NodeConditionType[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];

export const signalToResource: Readonly<Record<Signal, ResourceName>> = Object.freeze({
  'memory.available': 'memory',
  'allocatableMemory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'containerfs.available': 'ephemeral-storage',
  'containerfs.inodesFree': 'inodes',
  'pid.available': 'pids',
});

export const signalToNodeCondition: Readonly<Record<Signal, NodeConditionType>> = Object.freeze({
  'memory.available': 'MemoryPressure',
  'allocatableMemory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'containerfs.available': 'DiskPressure',
  'containerfs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
});

export function isSignal(value: string): value is Signal {
  return (SIGNALS as readonly string[]).includes(value);
}

/** Memory-class signals are acted on first (kubelet `byEvictionPriority`). */
export function isMemorySignal(signal: Signal): boolean {
  return signal === 'memory.available' || signal === 'allocatableMemory.available';
}
