// The kubelet Summary API (`/stats/summary`), reduced to the fields the eviction logic reads.
// It is the one observation model: the cgroupfs observer, the kubelet client and the replay
// format all produce it. Field names and spellings are the kubelet's JSON names
// (`ephemeral-storage`, `process_stats.process_count`, `rlimit.curproc`, singular `volume`).
// Numbers are as JSON carries them; every stat is optional, and an absent one means "no observation".

export interface MemoryStats {
  time?: string;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
  rssBytes?: number;
}

export interface FsStats {
  time?: string;
  availableBytes?: number;
  capacityBytes?: number;
  usedBytes?: number;
  inodesFree?: number;
  inodes?: number;
  inodesUsed?: number;
}

export interface RuntimeStats {
  imageFs?: FsStats;
  containerFs?: FsStats;
}

export interface RlimitStats {
  time?: string;
  maxpid?: number;
  curproc?: number;
}

export interface ContainerStats {
  name: string;
  memory?: MemoryStats;
  rootfs?: FsStats;
  logs?: FsStats;
}

export interface VolumeStats extends FsStats {
  name: string;
}

export interface PodReference {
  name: string;
  namespace: string;
  uid: string;
}

export interface PodStats {
  podRef: PodReference;
  memory?: MemoryStats;
  containers?: ContainerStats[];
  volume?: VolumeStats[];
  'ephemeral-storage'?: FsStats;
  process_stats?: { process_count?: number };
}

export interface SystemContainerStats {
  name: string;
  memory?: MemoryStats;
}

export interface NodeStats {
  nodeName?: string;
  memory?: MemoryStats;
  systemContainers?: SystemContainerStats[];
  fs?: FsStats;
  runtime?: RuntimeStats;
  rlimit?: RlimitStats;
}

export interface Summary {
  node: NodeStats;
  pods?: PodStats[];
}

/** The name of the system container whose memory is the kubepods cgroup (kubelet `SystemContainerPods`). */
export const SYSTEM_CONTAINER_PODS = 'pods';

/**
 * Which per-pod parts of a Summary one observation reads afresh from the pods' cgroups: their memory
 * (the pod's and its containers'), and their process counts. What is not read is carried from the
 * last reading, with the time it was read; the node's own figures and the pods' disk figures are
 * never part of this choice.
 */
export interface PodStatsReads {
  readonly memory: boolean;
  readonly processes: boolean;
}
