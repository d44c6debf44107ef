// Another client of the fleet's API server, for whether the agents starve others: a ServiceAccount
// of its own (so APF puts it in the built-in `service-accounts` schema, as most controllers are)
// that reads one pod every 100 ms over a kept-alive connection, as a controller's client does,
// and keeps each read's start, latency and status.

import { serviceAccountToken } from '../../test/e2e/harness/agent-identity.js';
import type { ApiClient } from '../../test/e2e/harness/api-client.js';
import type { ControlPlane } from '../../test/e2e/harness/control-plane.js';

const PERIOD_MS = 100;
const SECOND_CLIENT = 'second-client';

export interface SecondClientSample {
  readonly atMs: number;
  readonly latencyMs: number;
  /** 0: no answer (a network error, or none within 30 s). */
  readonly status: number;
}

export class SecondClient {
  private readonly samples: SecondClientSample[] = [];
  private running = true;
  /** While set, no read is made (the run waits for the machine, and loads it as little as it can). */
  paused = false;
  private readonly loop: Promise<void>;

  private constructor(
    private readonly api: ApiClient,
    private readonly path: string,
  ) {
    this.loop = this.run();
  }

  /** Creates the ServiceAccount and its read-only Role in `namespace`, and starts reading `podName`. */
  static async start(admin: ApiClient, plane: ControlPlane, namespace: string, podName: string): Promise<SecondClient> {
    await admin.create(`/api/v1/namespaces/${namespace}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SECOND_CLIENT } });
    await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: SECOND_CLIENT }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] });
    await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: SECOND_CLIENT },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: SECOND_CLIENT },
      subjects: [{ kind: 'ServiceAccount', name: SECOND_CLIENT, namespace }],
    });
    const token = await serviceAccountToken(admin, namespace, SECOND_CLIENT, 24 * 3600);
    return new SecondClient(plane.client(token, { keepAlive: true }), `/api/v1/namespaces/${namespace}/pods/${podName}`);
  }

  private async run(): Promise<void> {
    while (this.running) {
      if (this.paused) {
        await new Promise((resolve) => setTimeout(resolve, PERIOD_MS));
        continue;
      }
      const startMs = Date.now();
      let status = 0;
      try {
        status = (await this.api.request('GET', this.path, { timeoutMs: 30_000 })).status;
      } catch {
        status = 0;
      }
      this.samples.push({ atMs: startMs, latencyMs: Date.now() - startMs, status });
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, PERIOD_MS - (Date.now() - startMs))));
    }
  }

  /** The reads started in [fromMs, toMs). */
  between(fromMs: number, toMs: number): SecondClientSample[] {
    return this.samples.filter((s) => s.atMs >= fromMs && s.atMs < toMs);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}
