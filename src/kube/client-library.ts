// Loads @kubernetes/client-node on first use. Importing it costs about half a second and 75 MB,
// so commands that never talk to a cluster (replay, check-config) must not pay for it: every
// runtime use in src/kube goes through this one dynamic import; other files import types only.
// What is imported is the agent's own parts of the library (client-node-parts.ts), which the
// build bundles tree-shaken.

import type * as ClientNode from '@kubernetes/client-node';
import type * as ClientNodeParts from './client-node-parts.js';

export type ClientLibrary = typeof ClientNodeParts;
export type KubeConfig = ClientNode.KubeConfig;
export type CoreV1Api = ClientNode.CoreV1Api;
export type AppsV1Api = ClientNode.AppsV1Api;

let loading: Promise<ClientLibrary> | null = null;

/** The client library, imported once per process. */
export function loadClientLibrary(): Promise<ClientLibrary> {
  loading ??= import('./client-node-parts.js');
  return loading;
}
