// The cluster file a cgroup v2 guest's node reads (KEA_GUEST_CLUSTERS/<driver>.json): where the
// host's control plane answers, and the node's and the agent's credentials in it.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CgroupDriver, GuestCluster } from '../../kernel/cgroup-v2/guest/guest-kubelet-node.js';
import type { ControlPlane } from './control-plane.js';

/** Writes `<driver>.json` into the directory shared with the guest; only root reads the tokens. */
export function writeGuestCluster(sharedDir: string, plane: ControlPlane, node: { readonly nodeName: string; readonly driver: CgroupDriver; readonly agentToken: string; readonly imagesTar: string }): void {
  const cluster: GuestCluster = {
    port: Number(new URL(plane.url).port),
    caPem: plane.caPem,
    adminToken: plane.credentials.adminToken,
    nodeToken: plane.credentials.nodeTokens.get(node.nodeName) ?? '',
    ...node,
  };
  writeFileSync(join(sharedDir, `${node.driver}.json`), JSON.stringify(cluster), { mode: 0o600 });
}
