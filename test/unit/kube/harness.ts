// Shared set-up for the Kubernetes adapter tests: a stand-in API server, a client connected to it
// through a kubeconfig file (exactly as against a real cluster), a logger that keeps what it was
// told, and a poll-until function for the asynchronous watch paths.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { systemClock } from '../../../src/api/clock.js';
import type { Node, Pod } from '../../../src/api/pod.js';
import { kubeconfigFor, startApiStandIn, type ApiStandIn } from '../../../src/demo/api-stand-in.js';
import { connect, type ConnectOptions, type KubeClient } from '../../../src/kube/index.js';

export const NODE_NAME = 'node-a';

export interface Harness {
  readonly standIn: ApiStandIn;
  readonly client: KubeClient;
  readonly logger: RecordingLogger;
  readonly kubeconfigPath: string;
  close(): Promise<void>;
}

/** Fast watch recovery for tests: the production policy waits up to 30 s. */
export const FAST_BACKOFF = { initialDelayMs: 20, maxDelayMs: 200, factor: 2, jitterRatio: 0.5 };

export async function startHarness(options: Partial<ConnectOptions> = {}): Promise<Harness> {
  const standIn = await startApiStandIn();
  const dir = mkdtempSync(join(tmpdir(), 'kea-kube-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, kubeconfigFor(standIn));
  const logger = new RecordingLogger();
  const client = await connect({
    kubeconfig: kubeconfigPath,
    nodeName: NODE_NAME,
    logger,
    clock: systemClock,
    requestTimeoutMs: 2_000,
    watchBackoff: FAST_BACKOFF,
    env: {},
    ...options,
  });
  const closers: (() => Promise<void>)[] = [];
  return {
    standIn,
    client,
    logger,
    kubeconfigPath,
    async close() {
      for (const closer of closers.splice(0)) await closer();
      await client.clusterView().stop();
      await standIn.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `predicate` every 10 ms until it holds; fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function pod(name: string, options: { namespace?: string; node?: string | null; labels?: Record<string, string>; ready?: boolean; grace?: number } = {}): Pod {
  return {
    metadata: { name, namespace: options.namespace ?? 'default', ...(options.labels === undefined ? {} : { labels: options.labels }) },
    spec: {
      ...(options.node === null ? {} : { nodeName: options.node ?? NODE_NAME }),
      containers: [{ name: 'app', resources: { requests: { memory: '64Mi' } } }],
      ...(options.grace === undefined ? {} : { terminationGracePeriodSeconds: options.grace }),
    },
    ...(options.ready === false ? { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] } } : {}),
  };
}

export function node(name = NODE_NAME, extra: Partial<Node> = {}): Node {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    spec: {},
    status: {
      conditions: [
        { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
      ],
    },
    ...extra,
  };
}

export function names(pods: readonly Pod[]): string[] {
  return pods.map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`).sort();
}
