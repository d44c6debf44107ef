// What the real-node suites check after a scenario, whoever ran the agent (a host process beside
// the kubelet, or the DaemonSet's pod): who said what about the pods (the kubelet's Events and the
// agent's), that the kubelet evicted nothing, and that the pods meant to stay were never touched.
// Jest's expect: test files only (the benchmark build does not compile this file).

import type { ApiClient } from './api-client.js';
import { listEvents, type EventLike, type PodLike } from './objects.js';
import type { RealNodeScenario } from './real-node-scenario.js';

export function terminating(pod: PodLike): boolean {
  return pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
}

function evictedByKubelet(pod: PodLike): boolean {
  return (pod.status as { reason?: string } | undefined)?.reason === 'Evicted';
}

/** What the kubelet and the agent each said about the pods of a namespace. */
export async function eventsBySource(admin: ApiClient, namespace: string): Promise<{ kubelet: EventLike[]; agent: EventLike[] }> {
  const events = await listEvents(admin, namespace);
  return { kubelet: events.filter((e) => e.source?.component === 'kubelet'), agent: events.filter((e) => e.source?.component === 'kube-eviction-agent') };
}

export function describeEvents(events: readonly EventLike[]): string {
  return events.map((e) => `${e.involvedObject.name} ${e.reason}: ${e.message}`).join('\n');
}

/**
 * The kubelet did not evict anything: no Evicted Events from it, no pod it marked Evicted, and no
 * node Event saying it tried to reclaim.
 */
export async function expectKubeletDidNotEvict(admin: ApiClient, scenario: RealNodeScenario, names: readonly string[]): Promise<void> {
  const { kubelet } = await eventsBySource(admin, scenario.namespace);
  expect(kubelet.filter((e) => e.reason === 'Evicted')).toEqual([]);
  for (const name of names) expect(scenario.pods.versions(name).filter((v) => evictedByKubelet(v.object))).toEqual([]);
  const nodeEvents = (await listEvents(admin, 'default', 'EvictionThresholdMet')).filter((e) => e.source?.component === 'kubelet');
  expect(nodeEvents).toEqual([]);
}

/** Each pod is Running and was never marked for deletion. */
export function expectUntouched(scenario: RealNodeScenario, names: readonly string[]): void {
  for (const name of names) {
    const latest = scenario.pods.latest(name);
    expect([name, latest?.status?.phase]).toEqual([name, 'Running']);
    expect([name, scenario.pods.versions(name).some((v) => terminating(v.object))]).toEqual([name, false]);
  }
}
