// The Kubernetes side of the agent, for the composition root: connect to a cluster and get the
// cluster ports. Importing this module does not load the client library; connect() does.

export { connect, DEFAULT_USER_AGENT, type ConnectOptions, type KubeClient } from './connect.js';
export type { ClusterViewHandle } from './cluster-view.js';
export { DEFAULT_REQUEST_TIMEOUT_MS } from './api-call.js';
export { KUBELET_CONDITION_TYPES } from './node-conditions.js';
export type { NodeReads } from './node-reads.js';
export type { AgentNodeMarks, NodeCleaner, NodeCleanupOutcome } from './node-cleaner.js';
