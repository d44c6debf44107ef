// The stand-in's public contract: how it is started and the handle a test or the demo drives it
// by, from the API server's side (faults, watches, stop and restart) and from the scheduler's and
// the kubelet's side (pods, nodes, budgets), with what it saw.

import type { Clock } from '../../api/clock.js';
import type { Node, Pod } from '../../api/pod.js';
import type { StandInPdb } from './disruption-budgets.js';
import type { FaultSpec } from './fault-injection.js';
import type { JsonObject } from './json.js';
import type { RecordedRequest } from './request-log.js';

export interface ApiStandInOptions {
  /** The port to listen on (default: a free one). */
  readonly port?: number;
  /** Drives timestamps, watch timeouts and injected delays (default: the system clock). */
  readonly clock?: Clock;
  /** Watch events kept for resuming watches; older resourceVersions get 410 Expired (default 1000). */
  readonly historyLimit?: number;
}

export interface ApiStandIn {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  injectFault(fault: FaultSpec): void;
  clearFaults(): void;
  /** Ends every open watch cleanly (clients resume from their resourceVersion). */
  closeWatches(): void;
  /** Compacts the history and closes the watches: every resume gets ERROR 410 Expired and must relist. */
  expireWatches(): void;
  /** Sends a BOOKMARK at the current resourceVersion to watches that allow bookmarks. */
  sendBookmarks(): void;
  /** Watches currently open. */
  openWatches(): number;
  /** The API server goes down: connections are cut and new ones refused. */
  stop(): Promise<void>;
  /** Back up on the same port, with the same objects and history. */
  restart(): Promise<void>;
  /** The current (latest) resourceVersion. */
  resourceVersion(): number;

  // The test's (or the demo's) side: what the scheduler and the kubelet would do.
  /** Creates a pod as if scheduled and started: without a status it is Running and Ready. */
  createPod(pod: Pod): Pod;
  /** Changes a pod (labels, phase, conditions...) as its owner would. */
  updatePod(namespace: string, name: string, change: (pod: Pod) => void): Pod;
  /** Removes a pod at once, as the kubelet does when a terminating pod has stopped. */
  deletePodNow(namespace: string, name: string): boolean;
  pod(namespace: string, name: string): Pod | null;
  pods(): Pod[];
  /** Creates or replaces a node (keeping its UID when it exists). */
  setNode(node: Node): Node;
  deleteNode(name: string): boolean;
  node(name: string): Node | null;
  addPdb(pdb: StandInPdb): void;
  /** The core/v1 Events created so far, in order. */
  events(): JsonObject[];
  /** Every request so far, in arrival order. */
  requests(): RecordedRequest[];
  clearRequests(): void;
}
