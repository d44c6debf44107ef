// Per-pod ephemeral-storage usage for disk-pressure ranking and local-storage limits: container
// logs (<podLogsDir>/<namespace>_<name>_<uid>/<container>/), the pod's own log files, local volumes
// (<kubeletRootDir>/pods/<uid>/volumes/<plugin>/<name>), the pod's etc-hosts file and, where the
// runtime makes them findable, container writable layers. Walking those trees is slow, so it runs
// in the background at most once per interval and the memory sync only reads the cached result,
// as the kubelet's own volume stats are cached and recomputed periodically.

import { isPodUid, podIdentityProblem, type Pod } from '../api/pod.js';
import type { HostFs } from '../host/host-fs.js';
import { describeError, isNotFound } from '../host/read-result.js';
import { containerNamesById } from '../api/container-id.js';
import { describePodFileError } from '../host/capabilities.js';
import { addDiskUsage, diskUsage, filesUsage, NO_DISK_USAGE, WalkBudget, type DiskUsage } from './disk-usage.js';
import { parseMountInfo, writableLayerDirs, type MountInfoEntry } from './mountinfo.js';
import type { NodePod } from './node-pod-uids.js';

/** Volume plugins whose data lives on the node (walked); network and persistent volumes are not. */
export const LOCAL_VOLUME_PLUGINS: readonly string[] = Object.freeze([
  'kubernetes.io~empty-dir',
  'kubernetes.io~configmap',
  'kubernetes.io~secret',
  'kubernetes.io~projected',
  'kubernetes.io~downward-api',
  'kubernetes.io~git-repo',
]);

export interface PodDiskUsage {
  /** When this pod's measurement finished (ms since the epoch). */
  readonly timeMs: number;
  /** By container name. */
  readonly containerLogs: ReadonlyMap<string, DiskUsage>;
  /** By container name; only containers whose writable layer was found. */
  readonly rootfs: ReadonlyMap<string, DiskUsage>;
  /** By volume name, every local volume found on disk. */
  readonly volumes: ReadonlyMap<string, DiskUsage>;
  /** Files directly in the pod's log directory (not in a container's). */
  readonly podLogs: DiskUsage | undefined;
  readonly etcHosts: DiskUsage | undefined;
}

export interface DiskUsagePaths {
  /** Host-resolved paths. */
  readonly kubeletRootDir: string;
  readonly podLogsDir: string;
  /** mountinfo of a process in the host's mount namespace (`<procRoot>/1/mountinfo`). */
  readonly mountInfoPath: string;
  /** Prefixes a host path (an overlay upperdir) with the host root. */
  readonly resolveHostPath: (hostPath: string) => string;
}

/**
 * A volume the kubelet counts in the pod's `ephemeral-storage` (`IsLocalEphemeralVolume`): gitRepo,
 * an emptyDir on disk (not `Memory`), or a configMap. Other local volumes are reported in `volume`
 * but not summed.
 */
export function isLocalEphemeralVolume(pod: Pod, volumeName: string): boolean {
  const volume = pod.spec.volumes?.find((v) => v.name === volumeName);
  if (volume === undefined) return false;
  const emptyDirOnDisk = volume.emptyDir !== undefined && volume.emptyDir !== null && (volume.emptyDir.medium ?? '') === '';
  return (volume.gitRepo !== undefined && volume.gitRepo !== null) || emptyDirOnDisk || (volume.configMap !== undefined && volume.configMap !== null);
}

/**
 * The pod's `ephemeral-storage` (kubelet `calcEphemeralStorage`): every container's writable layer
 * and logs, the local ephemeral volumes, the pod's log files and etc-hosts. The kubelet adds a
 * container's logs only when its writable layer has a stat; here logs always count, since a missing
 * writable layer means it could not be found, not that the container has none.
 */
export function ephemeralStorageUsage(pod: Pod, usage: PodDiskUsage): DiskUsage {
  let total = NO_DISK_USAGE;
  for (const layer of usage.rootfs.values()) total = addDiskUsage(total, layer);
  for (const logs of usage.containerLogs.values()) total = addDiskUsage(total, logs);
  for (const [name, volume] of usage.volumes) if (isLocalEphemeralVolume(pod, name)) total = addDiskUsage(total, volume);
  if (usage.podLogs !== undefined) total = addDiskUsage(total, usage.podLogs);
  if (usage.etcHosts !== undefined) total = addDiskUsage(total, usage.etcHosts);
  return total;
}

/** Cached per-pod disk usage, refreshed in the background at most once per interval. */
export class PodDiskUsageCache {
  private readonly byUid = new Map<string, PodDiskUsage>();
  private running: Promise<void> | undefined;
  private lastStartMs: number | undefined;
  private walkProblems: readonly string[] = [];
  private lastBudget: WalkBudget | undefined;

  constructor(
    private readonly fs: HostFs,
    private readonly paths: DiskUsagePaths,
    private readonly intervalMs: number,
    private readonly entriesPerBatch: number,
    private readonly nowMs: () => number,
  ) {}

  get(uid: string): PodDiskUsage | undefined {
    return this.byUid.get(uid);
  }

  /** Problems met by the latest completed refresh. */
  problems(): readonly string[] {
    return this.walkProblems;
  }

  /** Entries the latest refresh examined (for tests and diagnostics). */
  entriesExamined(): number {
    return this.lastBudget?.entriesExamined ?? 0;
  }

  /** Starts a background refresh if none is running and the interval has passed since the last start. */
  refreshIfDue(pods: readonly NodePod[]): void {
    if (this.running !== undefined) return;
    if (this.lastStartMs !== undefined && this.nowMs() - this.lastStartMs < this.intervalMs) return;
    void this.refresh(pods);
  }

  /** Refreshes now (or joins the refresh already running); resolves when it is done. Never rejects. */
  refresh(pods: readonly NodePod[]): Promise<void> {
    if (this.running !== undefined) return this.running;
    this.lastStartMs = this.nowMs();
    this.running = this.measureAll(pods).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async measureAll(pods: readonly NodePod[]): Promise<void> {
    const budget = new WalkBudget(this.entriesPerBatch);
    const problems: string[] = [];
    const mounts = await this.readMounts(problems);
    const seen = new Set<string>();
    for (const { pod, uid } of pods) {
      // Only identities the API server could have issued become paths (the observer reports the rest).
      if (podIdentityProblem(pod) !== null || !isPodUid(uid)) continue;
      seen.add(uid);
      try {
        this.byUid.set(uid, await this.measurePod(pod, uid, mounts, budget, problems));
      } catch (error) {
        // Keeping nothing is what the kubelet does when a pod's stats cannot be computed.
        this.byUid.delete(uid);
        problems.push(`disk usage of pod ${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''} not measured: ${describePodFileError(error)}`);
      }
    }
    for (const uid of this.byUid.keys()) if (!seen.has(uid)) this.byUid.delete(uid);
    this.walkProblems = problems;
    this.lastBudget = budget;
  }

  private async readMounts(problems: string[]): Promise<readonly MountInfoEntry[]> {
    try {
      return parseMountInfo(await this.fs.readTextFile(this.paths.mountInfoPath));
    } catch (error) {
      problems.push(`container writable layers not measured: cannot read ${this.paths.mountInfoPath}: ${describeError(error)}`);
      return [];
    }
  }

  /** The names in a directory; none when it does not exist, and none, reported, when it cannot be read. */
  private async directoryNames(dir: string, problems: string[]): Promise<Set<string>> {
    const names = new Set<string>();
    try {
      for await (const entry of this.fs.readDir(dir)) names.add(entry.name);
    } catch (error) {
      if (!isNotFound(error)) problems.push(`cannot read ${dir}: ${describePodFileError(error)}`);
    }
    return names;
  }

  private async measurePod(pod: Pod, uid: string, mounts: readonly MountInfoEntry[], budget: WalkBudget, problems: string[]): Promise<PodDiskUsage> {
    const containerNames = new Set([...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])].map((c) => c.name));
    const podLogDir = `${this.paths.podLogsDir}/${pod.metadata.namespace ?? ''}_${pod.metadata.name ?? ''}_${uid}`;

    const containerLogs = new Map<string, DiskUsage>();
    let podLogs: DiskUsage | undefined;
    const logSubdirs: string[] = [];
    try {
      for await (const entry of this.fs.readDir(podLogDir)) if (entry.isDirectory && containerNames.has(entry.name)) logSubdirs.push(entry.name);
      podLogs = await filesUsage(this.fs, podLogDir, budget);
    } catch (error) {
      if (!isNotFound(error)) problems.push(`cannot read ${podLogDir}: ${describePodFileError(error)}`);
    }
    for (const name of logSubdirs) {
      const usage = await filesUsage(this.fs, `${podLogDir}/${name}`, budget);
      if (usage !== undefined) containerLogs.set(name, usage);
    }

    // The pod's kubelet directory is listed once, and only what it holds is looked at: a pod
    // without volumes of a plugin, or without a directory at all, costs no thread-pool hop per
    // plugin and etc-hosts file it does not have.
    const podDir = `${this.paths.kubeletRootDir}/pods/${uid}`;
    const podDirEntries = await this.directoryNames(podDir, problems);
    const volumes = new Map<string, DiskUsage>();
    const volumesDir = `${podDir}/volumes`;
    const plugins = podDirEntries.has('volumes') ? await this.directoryNames(volumesDir, problems) : new Set<string>();
    for (const plugin of LOCAL_VOLUME_PLUGINS) {
      if (!plugins.has(plugin)) continue;
      const pluginDir = `${volumesDir}/${plugin}`;
      const names: string[] = [];
      try {
        for await (const entry of this.fs.readDir(pluginDir)) if (entry.isDirectory) names.push(entry.name);
      } catch (error) {
        if (!isNotFound(error)) problems.push(`cannot read ${pluginDir}: ${describePodFileError(error)}`);
        continue;
      }
      for (const name of names) {
        try {
          const usage = await diskUsage(this.fs, `${pluginDir}/${name}`, budget);
          if (usage !== undefined) volumes.set(name, usage);
        } catch (error) {
          problems.push(`volume ${name} of pod ${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''} not measured: ${describePodFileError(error)}`);
        }
      }
    }

    const etcHosts = podDirEntries.has('etc-hosts') ? await diskUsage(this.fs, `${podDir}/etc-hosts`, budget) : undefined;

    const rootfs = new Map<string, DiskUsage>();
    const namesById = containerNamesById(pod);
    for (const [id, upperDir] of writableLayerDirs(mounts, new Set(namesById.keys()))) {
      const name = namesById.get(id) as string;
      const usage = await diskUsage(this.fs, this.paths.resolveHostPath(upperDir), budget);
      if (usage !== undefined) rootfs.set(name, usage);
    }

    return { timeMs: this.nowMs(), containerLogs, rootfs, volumes, podLogs, etcHosts };
  }
}
