// Finds each pod's cgroup by UID under the pod cgroup root, for either cgroup driver, and
// remembers where it was found so a steady-state sync costs no directory probing. A remembered
// path that has vanished (the pod restarted under another QoS tier, or was removed) is forgotten
// and searched for again.

import type { HostFs } from './host-fs.js';
import { DEFAULT_POD_CGROUP_ROOT, driverForPodCgroupRoot, podCgroupPath, qosSearchOrder, type CgroupDriver } from './pod-cgroup-names.js';
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

  /**
   * @param nodeDir the node cgroup in the memory hierarchy (the hierarchy root, or a sub-cgroup standing in for the node)
   * @param podCgroupRoot the configured pod cgroup root, or undefined for the driver's default
   */
  constructor(
    private readonly fs: HostFs,
    private readonly nodeDir: string,
    private readonly driver: CgroupDriver | 'auto',
    private readonly podCgroupRoot: string | undefined,
  ) {}

  /** The kubepods cgroup; with driver `auto` and no configured root, whichever default tree exists. */
  podCgroupRootDir(): ReadResult<PodCgroupRoot> {
    if (this.root !== undefined) return readOk(this.root);
    const candidates: PodCgroupRoot[] = [];
    if (this.podCgroupRoot !== undefined) {
      const relativePath = this.podCgroupRoot.replace(/^\/+|\/+$/g, '');
      const driver = this.driver === 'auto' ? driverForPodCgroupRoot(relativePath) : this.driver;
      candidates.push({ dir: `${this.nodeDir}/${relativePath}`, relativePath, driver });
    } else {
      const drivers: CgroupDriver[] = this.driver === 'auto' ? ['systemd', 'cgroupfs'] : [this.driver];
      for (const driver of drivers) {
        const relativePath = DEFAULT_POD_CGROUP_ROOT[driver];
        candidates.push({ dir: `${this.nodeDir}/${relativePath}`, relativePath, driver });
      }
    }
    const found = candidates.find((candidate) => this.fs.exists(candidate.dir));
    if (found === undefined) {
      return readFailed(`no pod cgroup root found (looked for ${candidates.map((c) => c.dir).join(', ')})`, true);
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
