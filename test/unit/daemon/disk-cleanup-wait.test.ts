// The wait after a disk eviction, on fakes and a fake clock, as a real kubelet cleans a pod up: the
// pod is reported terminal, then its volumes are removed from the kubelet's root, then it leaves the API
// server (or, deleted with grace 0, it leaves the API before its volumes are gone). A pass on the same
// shortage must not evict a second pod while the first one's volumes still hold the space; a pod
// whose volumes outlast its grace period and the escalation timeout is passed over, once.

import type { Pod } from '../../../src/api/pod.js';
import type { Summary } from '../../../src/api/summary.js';
import { parseConfigText } from '../../../src/config/load.js';
import { startAgent, type RunningAgent } from '../../../src/daemon/agent.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';
import { fakeCluster, type FakeCluster } from '../../fakes/fake-cluster.js';
import { FakeNotifier, FakeObserver, FakeTerminator } from '../../fakes/fake-node.js';
import { TEST_HOST, testNode } from '../../fixtures/host-identity.js';
import { emptyDirVolume, makePod, makePodStats } from '../../fixtures/pods.js';

const Mi = 1024 ** 2;
const CAPACITY_BYTES = 256 * Mi;

// The real-kubelet end-to-end scenario's thresholds: nodefs.available below 40% of a 256 MiB root.
const CONFIG = `
evictionHard:
  nodefs.available: 40%
housekeepingInterval: 1s
`;

const UID = { filler: 'f1110000-0000-4000-8000-000000000001', quiet: '9e170000-0000-4000-8000-000000000002' } as const;

interface Harness {
  clock: FakeClock;
  cluster: FakeCluster;
  observer: FakeObserver;
  agent: RunningAgent;
  logger: RecordingLogger;
  /** The pods whose volumes are on the kubelet's root, by UID, as the kubelet leaves them. */
  volumesOnDisk: Set<string>;
  /** Sets what statfs of the kubelet's root and the pods' volume walks say. */
  setDisk(availableBytes: number, fillerBytes: number): void;
}

async function start(configYaml = CONFIG): Promise<Harness> {
  const clock = new FakeClock(Date.UTC(2026, 11, 4, 22));
  const filler = makePod({ name: 'filler', uid: UID.filler, requests: { memory: '32Mi' }, volumes: [emptyDirVolume('scratch')], tgps: 2 });
  const quiet = makePod({ name: 'quiet', uid: UID.quiet, requests: { memory: '32Mi' }, volumes: [emptyDirVolume('scratch')], tgps: 2 });
  const cluster = fakeCluster({ pods: [filler, quiet], node: testNode('node-a'), clock });
  const observer = new FakeObserver();
  const volumesOnDisk = new Set<string>([UID.filler, UID.quiet]);
  observer.podVolumesPresent = (pod: Pod) => volumesOnDisk.has(pod.metadata.uid ?? '');
  const setDisk = (availableBytes: number, fillerBytes: number): void => {
    const summary: Summary = {
      node: { nodeName: 'node-a', memory: { availableBytes: 4096 * Mi, workingSetBytes: 1024 * Mi }, fs: { availableBytes, capacityBytes: CAPACITY_BYTES, usedBytes: CAPACITY_BYTES - availableBytes, inodesFree: 60_000, inodes: 65_536 } },
      pods: [
        makePodStats(filler, { workingSetBytes: 1 * Mi, localVolumeBytes: fillerBytes, rootfsBytes: 0, logsBytes: 4096, ephemeralBytes: fillerBytes + 4096 }),
        makePodStats(quiet, { workingSetBytes: 8 * Mi, localVolumeBytes: 0, rootfsBytes: 0, logsBytes: 4096, ephemeralBytes: 4096 }),
      ],
    };
    observer.summary = summary;
  };
  setDisk(200 * Mi, 0);
  const logger = new RecordingLogger();
  const view = Object.assign(cluster.view, { start: async () => {}, stop: async () => {} });
  const agent = await startAgent(
    { config: parseConfigText(configYaml, 'test.yaml'), nodeName: 'node-a', reload: null, serverPort: 0 },
    { cluster: view, actions: cluster.actions, events: cluster.events, nodeReporter: cluster.reporter, observer, notifier: new FakeNotifier(), terminator: new FakeTerminator(), hostIdentity: TEST_HOST, clock, logger },
  );
  await flushMicrotasks();
  return { clock, cluster, observer, agent, logger, volumesOnDisk, setDisk };
}

let harness: Harness | null = null;
afterEach(async () => {
  await harness?.agent.stop();
  harness = null;
});

const deleted = (h: Harness): string[] => h.cluster.actions.callsOf('deletePod').map((c) => c.name ?? '');

// The filler writes 160 MiB of the 256: 96 MiB available, below the 102.4 MiB threshold; the pass
// at the next housekeeping tick deletes it with the hard grace period.
async function fillerEvicted(h: Harness): Promise<void> {
  h.setDisk(96 * Mi, 160 * Mi);
  await h.clock.stepAsync(1_000);
  expect(deleted(h)).toEqual(['filler']);
  expect(h.cluster.actions.callsOf('deletePod')[0]?.gracePeriodSeconds).toBe(1);
  h.cluster.view.updatePod('default', 'filler', (p) => {
    p.metadata.deletionTimestamp = new Date(h.clock.nowMs() + 1_000).toISOString();
    p.metadata.deletionGracePeriodSeconds = 1;
  });
}

// What the kubelet does next: its containers end and it reports the pod terminal (Succeeded for a
// workload that exits 0 on SIGTERM, as the real filler does; Failed otherwise) while its volumes are
// still mounted: SyncTerminatedPod has not run yet.
function markedTerminal(h: Harness, phase: 'Succeeded' | 'Failed' = 'Failed'): void {
  h.cluster.view.updatePod('default', 'filler', (p) => {
    p.status = { ...p.status, phase };
  });
}

describe('after a disk eviction, the loop waits for the pod\'s volumes to leave the kubelet\'s root', () => {
  // The real-kubelet sequence (evicted at 0; Succeeded on the API server at 0.5-0.9 s; the emptyDir
  // removed 0.1-0.2 s later; the pod deleted 0.5-1 s after that): a housekeeping pass at 1 s saw the
  // filler terminal, so no longer a candidate, and statfs still short, and evicted quiet.
  test.each(['Succeeded', 'Failed'] as const)('the evicted pod reported %s, its emptyDir not yet removed, nodefs still short: no second pod is evicted; once its volumes and the pod are gone the space is back and nobody else is evicted', async (phase) => {
    harness = await start();
    const h = harness;
    await fillerEvicted(h);
    await h.clock.stepAsync(500);
    markedTerminal(h, phase);
    // Housekeeping passes while the kubelet tears the emptyDir down: the space is still held.
    await h.clock.stepAsync(2_500);
    expect(deleted(h)).toEqual(['filler']);
    expect(h.logger.find('eviction deferred: an evicted pod is not yet cleaned up', { pod: 'default/quiet', waitingFor: 'default/filler' }).length).toBeGreaterThan(0);
    // The kubelet removes the volume (the space comes back), then deletes the pod.
    h.volumesOnDisk.delete(UID.filler);
    h.setDisk(250 * Mi, 0);
    h.cluster.view.removePod('default', 'filler');
    await h.clock.stepAsync(20_000);
    expect(deleted(h)).toEqual(['filler']);
  });

  test('the evicted pod gone from the API before its volumes (a deletion with grace 0): the loop still waits for them; a pass on figures read after they are gone decides', async () => {
    harness = await start();
    const h = harness;
    await fillerEvicted(h);
    await h.clock.stepAsync(500);
    h.cluster.view.removePod('default', 'filler');
    await h.clock.stepAsync(2_000);
    expect(deleted(h)).toEqual(['filler']);
    // Volumes gone, but the node still short (something else holds the space): the next pass, on
    // figures read after they went, evicts quiet.
    h.volumesOnDisk.delete(UID.filler);
    await h.clock.stepAsync(1_000);
    expect(deleted(h)).toEqual(['filler', 'quiet']);
  });

  test('an evicted pod whose volumes outlast its grace period and the escalation timeout is passed over for the next ranked pod, once', async () => {
    harness = await start(`${CONFIG}actions:\n  escalationTimeout: 2s\n`);
    const h = harness;
    await fillerEvicted(h);
    markedTerminal(h);
    // Held through its 1 s grace period and the 2 s escalation timeout.
    await h.clock.stepAsync(2_000);
    expect(deleted(h)).toEqual(['filler']);
    await h.clock.stepAsync(1_000);
    expect(deleted(h)).toEqual(['filler', 'quiet']);
    expect(h.logger.find('escalating past a pod that has not freed its resources', { pod: 'default/filler', kind: 'api' })).toHaveLength(1);
  });

  test('an evicted pod gone from the API whose volumes outlast the escalation timeout is passed over, and the Event says what it still holds', async () => {
    harness = await start(`${CONFIG}actions:\n  escalationTimeout: 2s\n`);
    const h = harness;
    await fillerEvicted(h);
    h.cluster.view.removePod('default', 'filler');
    await h.clock.stepAsync(2_000);
    expect(deleted(h)).toEqual(['filler']);
    await h.clock.stepAsync(1_000);
    expect(deleted(h)).toEqual(['filler', 'quiet']);
    expect(h.cluster.events.events.filter((e) => e.reason === 'EvictionEscalated').map((e) => e.message)).toEqual([expect.stringMatching(/for nodefs\.available and its volumes are still on the kubelet's root directory: the next ranked pod is evicted/)]);
  });
});
