// The identity of the machine this process runs on, for the stand-ins that play a kubelet's part
// (the demo's API stand-in, tests, benchmarks): a Node they register for this host carries the
// `status.nodeInfo` a kubelet here would report, so the agent's identity check passes as on a node.

import type { Node } from '../api/pod.js';
import { nodeInfoOf, thisHostIdentity } from '../host/host-identity.js';

export { thisHostIdentity };

/** A Node named `name` as a kubelet on this machine registers it: its boot ID, machine ID and system UUID. */
export function nodeOfThisHost(name: string): Node {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name }, status: { nodeInfo: nodeInfoOf(thisHostIdentity()) } };
}
