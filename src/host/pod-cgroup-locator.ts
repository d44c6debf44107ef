// Finds each pod's cgroup by UID under the pod cgroup root, for either cgroup driver, and
// remembers where it was found so a steady-state sync costs no directory probing. A remembered
// path that has vanished (the pod restarted under another QoS tier, or was removed) is forgotten
// and searched for again.

import type { CgroupDriver, CgroupDriverSetting } from '../api/agent-settings.js';
import type { HostFs } from './host-fs.js';
import { podCgroupPath, podCgroupRootCandidates, qosSearchOrder } from './pod-cgroup-names.js';
import { readFailed, readOk, type ReadResult } from './read-result.js';

export interface PodCgroupRoot {
  /** Absolute path of the kubepods cgroup (the `pods` system container). */
  readonly dir: string;
  /** The pod cgroup root relative to the node cgroup (`kubepods`, `kubepods.slice`). */
  readonly relativePath: string;
  readonly driver: CgroupDriver;
}

export class PodCgroupLocator {
  private root: PodCgroupRoot | undefined;
  private dirsByUid = new Map<string, string>();
  private readonly candidates: readonly PodCgroupRoot[];

  /**
   * @param nodeDir the node cgroup in the memory hierarchy (the hierarchy root, or a sub-cgroup standing in for the node)
   * @param driver the configured cgroup driver; with `auto`, whichever candidate tree exists is taken
   * @param podCgroupRoot the configured pod cgroup root (`observe.podCgroupRoot`)
   */
  constructor(
    private readonly fs: HostFs,
    private readonly nodeDir: string,
    driver: CgroupDriverSetting,
    podCgroupRoot: string,
  ) {
    this.candidates = podCgroupRootCandidates(podCgroupRoot, driver).map((c) => ({ dir: `${nodeDir}/${c.relativePath}`, ...c }));
  }

  /** The kubepods cgroup: the first candidate that exists, found once and then remembered. */
  podCgroupRootDir(): ReadResult<PodCgroupRoot> {
    if (this.root !== undefined) return readOk(this.root);
    const found = this.candidates.find((candidate) => this.fs.exists(candidate.dir));
    if (found === undefined) {
      return readFailed(`no pod cgroup root found (looked for ${this.candidates.map((c) => c.dir).join(', ')})`, true);
    }
    this.root = found;
    return readOk(found);
  }

  /** The pod's cgroup directory, or undefined when it does not exist (yet, or any more). */
  locate(uid: string, qosClass: string | undefined): string | undefined {
    const known = this.dirsByUid.get(uid);
    if (known !== undefined) return known;
    const root = this.podCgroupRootDir();
    if (!root.ok) return undefined;
    for (const qos of qosSearchOrder(qosClass)) {
      const dir = `${this.nodeDir}/${podCgroupPath(root.value.relativePath, root.value.driver, qos, uid)}`;
      if (this.fs.exists(dir)) {
        this.dirsByUid.set(uid, dir);
        return dir;
      }
    }
    return undefined;
  }

  /** Forgets a pod's remembered directory (it was not found there). */
  forget(uid: string): void {
    this.dirsByUid.delete(uid);
  }

  /** Keeps only the pods still on the node, so the memory does not grow with pod churn. */
  retain(uids: ReadonlySet<string>): void {
    for (const uid of this.dirsByUid.keys()) if (!uids.has(uid)) this.dirsByUid.delete(uid);
  }
}

/**
 * The pod cgroup root to watch now, relative to the node cgroup: the first candidate whose
 * cgroup exists in the v1 memory hierarchy or the v2 one (under `cgroupRoot`, host-resolved), else
 * the last candidate (the cgroupfs form), which the kubelet may yet create.
 */
export function resolvePodCgroupRoot(fs: HostFs, cgroupRoot: string, nodeCgroup: string, driver: CgroupDriverSetting, podCgroupRoot: string): string {
  const candidates = podCgroupRootCandidates(podCgroupRoot, driver);
  const hierarchies = [`${cgroupRoot}/memory`, cgroupRoot].map((root) => (nodeCgroup === '' ? root : `${root}/${nodeCgroup}`));
  const found = candidates.find((c) => hierarchies.some((dir) => fs.exists(`${dir}/${c.relativePath}/cgroup.procs`)));
  return (found ?? candidates[candidates.length - 1] ?? { relativePath: podCgroupRoot }).relativePath;
}

