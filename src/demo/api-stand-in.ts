// An in-process stand-in for the few Kubernetes API endpoints the agent uses, for the `demo`
// command and for fast tests. It answers over plain HTTP on 127.0.0.1 with the real API's JSON
// shapes, status codes and Status bodies, so the same adapter code (src/kube) runs against it and
// against a real kube-apiserver: pods and nodes with list, get and watch (field and label
// selectors, resourceVersion semantics, 410 Expired for a compacted history), strategic merge,
// JSON merge and JSON patches with UID and resourceVersion preconditions, graceful DELETE, the
// policy/v1 Eviction subresource checked against PodDisruptionBudgets, and core/v1 Events with the
// API server's validation. It also lets a test break things on purpose: injected faults and
// delays, closed or expired watches, a server that goes down and comes back, and a compromised
// server's answers (crafted pod UIDs, field selectors ignored). This file is its
// public entry; the parts live under api-stand-in/, one file per concept: the object model
// (objects.ts), the wire (http.ts), reads and watches (reads.ts), patches (patches.ts), writes
// (writes.ts), and the server with its routes and handle (stand-in.ts).

export type { FaultSpec, RecordedRequest } from './api-stand-in/http.js';
export { kubeconfigFor, startApiStandIn, type ApiStandIn, type ApiStandInOptions, type CreatePodOptions } from './api-stand-in/stand-in.js';
export type { StandInPdb } from './api-stand-in/writes.js';
