// Whether a pod's volumes are still on the kubelet's root directory, read from disk as the kubelet's
// own podVolumesExist does (getPodVolumePathListFromDisk: `<root>/pods/<uid>/volumes/<plugin>/<name>`).
// The kubelet counts a pod cleaned up only once they are gone; until then an emptyDir's files may
// still hold the space a disk eviction is meant to free, whatever the API server shows.

import { isPodUid } from '../api/pod.js';
import type { HostFs } from '../host/host-fs.js';
import { isNotFound } from '../host/read-result.js';

/**
 * True while a volume directory of the pod (under the UID the node knows it by) is on the kubelet's
 * root, false once none is (or the pod has no directory), undefined when that cannot be told (an
 * unreadable directory, a UID the API server could not have issued).
 */
export function podVolumesOnDisk(fs: HostFs, kubeletRootDir: string, nodeUid: string): boolean | undefined {
  // Only identities the API server could have issued become paths.
  if (!isPodUid(nodeUid)) return undefined;
  const volumesDir = `${kubeletRootDir}/pods/${nodeUid}/volumes`;
  try {
    for (const plugin of fs.subdirectories(volumesDir)) if (fs.subdirectories(`${volumesDir}/${plugin}`).length > 0) return true;
    return false;
  } catch (error) {
    // A plugin directory removed between the two listings is as good as gone.
    if (isNotFound(error)) return false;
    return undefined;
  }
}
