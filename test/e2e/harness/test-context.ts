// What one end-to-end test works with: the control plane, its clients, the agent's identity, the
// suite's fixture, and where its diagnostics and cleanups go. Apart from suite.ts (which needs
// jest's globals), so the benchmark's real-node part can build the same context outside jest.

import type { AgentIdentity } from './agent-identity.js';
import type { ApiClient } from './api-client.js';
import type { ControlPlane } from './control-plane.js';

export interface TestContext<F = undefined> {
  readonly plane: ControlPlane;
  readonly admin: ApiClient;
  readonly identity: AgentIdentity;
  /** The suite's fixture (undefined without one). */
  readonly fixture: F;
  /** Adds a source of diagnostics for a failure of this test (agent logs, pod histories). */
  addDiagnostics(source: () => string): void;
  /** Runs `cleanup` when the test ends, passed or failed; the latest registered runs first. */
  defer(cleanup: () => Promise<void> | void): void;
}
