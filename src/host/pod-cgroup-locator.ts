// Finds each pod's cgroup by UID under the pod cgroup root, for either cgroup driver, and
// remembers where it was found so a steady-state sync costs no directory probing. A remembered
// path that has vanished (the pod restarted under another QoS tier, or was removed) is forgotten
// and searched for again. A UID not in the API server's form is never looked for, and a directory
// is taken only once its real path is proven to lie inside the pod cgroup root (which is itself
// proven to lie inside the node cgroup): a crafted UID cannot name any other cgroup of the host.

import type { CgroupDriver, CgroupDriverSetting } from '../api/agent-settings.js';
import { isPodUid, printableValue } from '../api/pod.js';
import type { HostFs } from './host-fs.js';
import { isPlainRelativePath, resolveInside } from './path-safety.js';
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

  /** The kubepods cgroup: the first candidate that exists (inside the node cgroup), found once and then remembered. */
  podCgroupRootDir(): ReadResult<PodCgroupRoot> {
    if (this.root !== undefined) return readOk(this.root);
    const found = this.candidates.find((candidate) => this.fs.exists(candidate.dir));
    if (found === undefined) {
      return readFailed(`no pod cgroup root found (looked for ${this.candidates.map((c) => c.dir).join(', ')})`, true);
    }
    if (!isPlainRelativePath(found.relativePath)) return readFailed(`the pod cgroup root ${JSON.stringify(found.relativePath)} is not a plain relative path`);
    const inside = resolveInside(this.fs, this.nodeDir, found.dir);
    if (!inside.ok) return readFailed(`the pod cgroup root is refused: ${inside.reason}`, inside.notFound);
    this.root = found;
    return readOk(found);
  }

  /** The pod's cgroup directory, or undefined when it does not exist (yet, or any more) or is refused. */
  locate(uid: string, qosClass: string | undefined): string | undefined {
    const located = this.locateOrWhy(uid, qosClass);
    return located.ok ? located.value : undefined;
  }

  /**
   * The pod's cgroup directory, or why there is none: not found (`notFound`), or refused (a UID not
   * in the API server's form, a directory resolving outside the pod cgroup root).
   */
  locateOrWhy(uid: string, qosClass: string | undefined): ReadResult<string> {
    const known = this.dirsByUid.get(uid);
    if (known !== undefined) return readOk(known);
    if (!isPodUid(uid)) return readFailed(`the pod UID ${printableValue(uid)} is not in the API server's form; refused`);
    const root = this.podCgroupRootDir();
    if (!root.ok) return root;
    for (const qos of qosSearchOrder(qosClass)) {
      const dir = `${this.nodeDir}/${podCgroupPath(root.value.relativePath, root.value.driver, qos, uid)}`;
      if (!this.fs.exists(dir)) continue;
      const inside = resolveInside(this.fs, root.value.dir, dir);
      if (!inside.ok) return readFailed(`the cgroup of pod UID ${uid} is refused: ${inside.reason}`, inside.notFound);
      this.dirsByUid.set(uid, dir);
      return readOk(dir);
    }
    return readFailed(`no cgroup found for pod UID ${uid}`, true);
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

