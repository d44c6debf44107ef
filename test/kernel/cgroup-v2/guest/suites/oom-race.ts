// The OOM race on a real cgroup v2 kernel: the agent's real run loop (startAgent, the real cgroup
// observer, notifier and terminator, the real Kubernetes client against the in-process API
// stand-in, as the demo wires it) on a sandbox node whose kubepods cgroup has a memory.max, and a
// pod that leaks until something stops it: the agent's eviction, or the kernel OOM killer. Two
// agents side by side in the same guest, runs alternated: one woken by the PSI notifier's triggers
// and fast check, one with only its 10 s housekeeping pass. Every run starts right after a pass of
// its agent, so the next housekeeping pass is 10 s away and only the notifier can be on time.
// Guest timings are emulated: the suite reports outcome counts, and ratios between the variants.

import assert from 'node:assert/strict';
import { mkdtempSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../../../../src/api/clock.js';
import { silentLogger } from '../../../../../src/api/logger.js';
import type { Pod } from '../../../../../src/api/pod.js';
import { parseConfigText } from '../../../../../src/config/load.js';
import { startAgent, type RunningAgent } from '../../../../../src/daemon/agent.js';
import type { SyncTrigger } from '../../../../../src/daemon/eviction-loop.js';
import { kubeconfigFor, startApiStandIn, type ApiStandIn } from '../../../../../src/demo/api-stand-in.js';
import type { LocalTerminator } from '../../../../../src/daemon/ports.js';
import { connect } from '../../../../../src/kube/index.js';
import { notifierSettings, observeSettings } from '../../../../fixtures/settings.js';
import { createMemoryThresholdNotifier } from '../../../../../src/notifier/create-memory-threshold-notifier.js';
import { createCgroupObserver, type CgroupObserver } from '../../../../../src/observe/cgroup-observer.js';
import { createPodTerminator } from '../../../../../src/act/pod-terminator.js';
import { BENCH_NAMESPACE, benchPod, containerCgroup, podCgroup } from '../../../../../bench/lib/bench-pods.js';
import { CgroupSandbox, type SandboxProcess } from '../../../../helpers/cgroup-sandbox.js';
import { defineSuite, type GuestCase } from '../guest-suite.js';
import { currentBytes, memoryEvent, MiB, sleepMs, waitFor } from '../kernel-numbers.js';
import { raceLeakCommand } from '../programs.js';
import { nodeOfThisHost, thisHostIdentity } from '../../../../../src/compose/this-host.js';

const NODE_LIMIT_BYTES = 768 * MiB;
const PODS_LIMIT_BYTES = 512 * MiB;
const THRESHOLD = '64Mi';
/** kubepods' working set at which allocatableMemory.available drops below the threshold. */
const CROSSING_BYTES = PODS_LIMIT_BYTES - 64 * MiB;
// The guest touches memory at some 20 to 40 MiB/s (emulated page faults): the leak starts 24 MiB
// short of the crossing, so it meets the OOM killer some 3 to 5 s after it starts, well within one
// housekeeping interval, and the notifier has one to three seconds.
const LEAK_LEAD_BYTES = 24 * MiB;
const LEAK_BYTES_PER_SECOND = 64 * MiB;
const RUNS_PER_VARIANT = 3;
const RUN_TIMEOUT_MS = 30_000;
const HOUSEKEEPING_MS = 10_000;

interface Variant {
  readonly key: 'psi' | 'housekeeping';
  readonly notifier: 'psi' | 'disabled';
}
const VARIANTS: readonly Variant[] = [
  { key: 'psi', notifier: 'psi' },
  { key: 'housekeeping', notifier: 'disabled' },
];

/** `error`: the leak ended with neither a local kill nor an OOM kill (it crashed). */
type Outcome = 'evicted' | 'oom' | 'timeout' | 'error';

interface RaceRun {
  readonly variant: Variant['key'];
  readonly outcome: Outcome;
  /** From the crossing (as the leak saw kubepods' usage reach it) to the local kill, or to the OOM kill. */
  readonly afterCrossingMs: number | null;
  readonly achievedMiBPerSecond: number | null;
  /** kubepods' usage at the kill, past the crossing. */
  readonly overshootMiB: number | null;
  readonly quietPodSurvived: boolean;
}

interface VariantNode {
  readonly variant: Variant;
  readonly nodeName: string;
  readonly sandbox: CgroupSandbox;
  readonly agent: RunningAgent;
  readonly observer: CgroupObserver;
  readonly quiet: SandboxProcess;
  /** Set by the terminator's wrapper: the first pod it was asked to end since the last reset, and when. */
  kill: { uid: string; atNs: bigint; usageBytes: number } | null;
  /** Resolves the next pass's promise, if one is awaited. */
  onPass: ((trigger: SyncTrigger) => void) | null;
  pods(): readonly Pod[];
}

let standIn: ApiStandIn | null = null;
let scratch = '';
const nodes: VariantNode[] = [];
const runs: RaceRun[] = [];

function agentConfig(variant: Variant): string {
  return [
    'apiVersion: kube-eviction-agent.io/v1alpha1',
    'kind: AgentConfiguration',
    'evictionHard:',
    `  memory.available: ${THRESHOLD}`,
    `housekeepingInterval: ${HOUSEKEEPING_MS}ms`,
    'notifier:',
    `  mode: ${variant.notifier}`,
    'actions:',
    '  localTermination: true',
    '',
  ].join('\n');
}

async function setUpVariant(variant: Variant, api: ApiStandIn): Promise<VariantNode> {
  const nodeName = `race-${variant.key}`;
  api.setNode(nodeOfThisHost(nodeName));
  const sandbox = await CgroupSandbox.create({ version: 'v2', limitBytes: BigInt(NODE_LIMIT_BYTES) });
  sandbox.mkdir('kubepods/burstable');
  sandbox.setLimit('kubepods', BigInt(PODS_LIMIT_BYTES));
  const quietPod = api.createPod(benchPod({ name: `quiet-${variant.key}`, nodeName, memoryRequest: '128Mi' }));
  const quiet = await sandbox.startAllocator(containerCgroup(quietPod), 32 * MiB);
  const observer = createCgroupObserver(observeSettings({ cgroupDriver: 'cgroupfs', podCgroupRoot: 'kubepods', kubeletRootDir: scratch, imageFsPath: scratch, podLogsDir: scratch, diskUsageIntervalMs: 24 * 3600_000 }), {
    clock: systemClock,
    logger: silentLogger,
    nodeCgroup: sandbox.name,
    processCountIntervalMs: HOUSEKEEPING_MS,
    nodeName,
  });
  const notifier = createMemoryThresholdNotifier(notifierSettings({ mode: variant.notifier }), { cgroupRoot: '/sys/fs/cgroup', nodeCgroup: sandbox.name, podCgroupRoot: `${sandbox.name}/kubepods`, procRoot: '/proc', clock: systemClock, logger: silentLogger });
  const inner = createPodTerminator(observeSettings({ hostRoot: '/', cgroupRoot: '/sys/fs/cgroup', cgroupDriver: 'cgroupfs', podCgroupRoot: 'kubepods' }), { nodeCgroup: sandbox.name, clock: systemClock, logger: silentLogger });
  const client = await connect({ kubeconfigYaml: kubeconfigFor(api), nodeName, clock: systemClock, logger: silentLogger });
  const cluster = client.clusterView();
  let node: VariantNode | null = null;
  const terminator: LocalTerminator = {
    terminate: (pod, gracePeriodMs) => {
      if (node !== null && node.kill === null) node.kill = { uid: pod.metadata.uid ?? '', atNs: process.hrtime.bigint(), usageBytes: currentBytes(sandbox.resolve('kubepods')) };
      return inner.terminate(pod, gracePeriodMs);
    },
  };
  const agent = await startAgent(
    { config: parseConfigText(agentConfig(variant), `${variant.key}.yaml`), nodeName, reload: null, serverPort: 0 },
    {
      cluster,
      actions: client.podActions(),
      events: client.eventRecorder('kube-eviction-agent'),
      nodeReporter: client.nodeReporter(),
      observer,
      notifier,
      terminator,
      hostIdentity: thisHostIdentity(),
      clock: systemClock,
      logger: silentLogger,
      onDecision: (_result, trigger) => node?.onPass?.(trigger),
    },
  );
  await cluster.whenSynced();
  node = { variant, nodeName, sandbox, agent, observer, quiet, kill: null, onPass: null, pods: () => cluster.pods() };
  return node;
}

/** Asks the agent for a pass now and resolves once it has decided: its next housekeeping pass is a full interval away. */
function passNow(node: VariantNode): Promise<void> {
  return new Promise((resolve) => {
    node.onPass = () => {
      node.onPass = null;
      resolve();
    };
    node.agent.loop.wake('housekeeping', null);
  });
}

let podSequence = 0;

/** The local kill the agent issued for this pod since the run started, if any. */
const killOf = (node: VariantNode, uid: string): VariantNode['kill'] => (node.kill?.uid === uid ? node.kill : null);

async function raceOnce(node: VariantNode, api: ApiStandIn): Promise<RaceRun> {
  const { sandbox, variant } = node;
  const name = `leak-${variant.key}-${podSequence++}`;
  const pod = api.createPod(benchPod({ name, nodeName: node.nodeName, memoryRequest: '64Mi' }));
  const uid = pod.metadata.uid ?? '';
  const oomBefore = memoryEvent(sandbox.resolve('kubepods'), 'oom_kill');
  const leak = await sandbox.startCommand(containerCgroup(pod), raceLeakCommand(LEAK_LEAD_BYTES, LEAK_BYTES_PER_SECOND, join(sandbox.resolve('kubepods'), 'memory.current'), CROSSING_BYTES));
  try {
    await waitFor('the agent to see the leaking pod', () => node.pods().some((p) => p.metadata.uid === uid), 10_000);
    await passNow(node);
    node.kill = null;
    process.kill(leak.pid, 'SIGUSR1');
    const exited = await Promise.race([leak.exited.then(() => true), sleepMs(RUN_TIMEOUT_MS).then(() => false)]);
    const exitedNs = process.hrtime.bigint();
    const oomKills = memoryEvent(sandbox.resolve('kubepods'), 'oom_kill') - oomBefore;
    const output = leak.output();
    const goNs = /^go (\d+)$/m.exec(output)?.[1];
    const crossed = /^crossed (\d+) (\d+)$/m.exec(output);
    const crossedNs = crossed === null ? null : BigInt(crossed[1] as string);
    const kill = killOf(node, uid);
    const outcome: Outcome = !exited ? 'timeout' : oomKills > 0 ? 'oom' : kill !== null ? 'evicted' : 'error';
    const endNs = outcome === 'evicted' ? (kill?.atNs ?? null) : outcome === 'oom' ? exitedNs : null;
    return {
      variant: variant.key,
      outcome,
      afterCrossingMs: crossedNs === null || endNs === null ? null : Number(endNs - crossedNs) / 1e6,
      achievedMiBPerSecond: crossed === null || goNs === undefined ? null : Number(crossed[2]) / MiB / (Number(BigInt(crossed[1] as string) - BigInt(goNs)) / 1e9),
      overshootMiB: kill === null ? null : (kill.usageBytes - CROSSING_BYTES) / MiB,
      quietPodSurvived: node.quiet.exitSignal() === null && node.quiet.output().includes('ready'),
    };
  } finally {
    await sandbox.kill(leak);
    api.deletePodNow(BENCH_NAMESPACE, name);
    await waitFor('the agent to drop the pod', () => !node.pods().some((p) => p.metadata.uid === uid), 10_000).catch(() => undefined);
    for (const dir of [containerCgroup(pod), podCgroup(uid)]) {
      try {
        rmdirSync(sandbox.resolve(dir));
      } catch {
        // Left for the sandbox's own cleanup.
      }
    }
  }
}

const median = (values: readonly number[]): number | null => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] as number;
};

const ofVariant = (key: Variant['key']): RaceRun[] => runs.filter((r) => r.variant === key);
const count = (key: Variant['key'], outcome: Outcome): number => ofVariant(key).filter((r) => r.outcome === outcome).length;

const cases: GuestCase[] = [
  {
    name: `the race runs ${RUNS_PER_VARIANT} times per variant, alternated, each leak started right after a pass of its agent`,
    timeoutMs: 2 * RUNS_PER_VARIANT * (RUN_TIMEOUT_MS + 20_000),
    async run({ note }) {
      const api = standIn as ApiStandIn;
      for (let i = 0; i < RUNS_PER_VARIANT; i++) {
        for (const node of i % 2 === 0 ? nodes : [...nodes].reverse()) runs.push(await raceOnce(node, api));
      }
      for (const variant of VARIANTS) {
        for (const outcome of ['evicted', 'oom', 'timeout', 'error'] as const) note(`${variant.key}.${outcome}`, count(variant.key, outcome));
        const rates = ofVariant(variant.key).flatMap((r) => (r.achievedMiBPerSecond === null ? [] : [r.achievedMiBPerSecond]));
        note(`${variant.key}.medianAchievedMiBPerSecond`, Math.round(median(rates) ?? 0));
      }
      assert.equal(runs.length, RUNS_PER_VARIANT * VARIANTS.length);
    },
  },
  {
    name: 'with the PSI notifier and its fast check the agent evicts the leaking pod before the OOM killer, every run',
    async run({ note }) {
      const psi = ofVariant('psi');
      const reaction = median(psi.flatMap((r) => (r.outcome === 'evicted' && r.afterCrossingMs !== null ? [r.afterCrossingMs] : [])));
      const headroom = median(ofVariant('housekeeping').flatMap((r) => (r.outcome === 'oom' && r.afterCrossingMs !== null ? [r.afterCrossingMs] : [])));
      note('evicted', count('psi', 'evicted'));
      note('medianOvershootMiB', Math.round(median(psi.flatMap((r) => (r.overshootMiB === null ? [] : [r.overshootMiB]))) ?? -1));
      // The guest's clock runs emulated: how much of the time between crossing and OOM the agent needed.
      if (reaction !== null && headroom !== null) note('reactionOverCrossingToOomRatio', Number((reaction / headroom).toFixed(2)));
      assert.deepEqual(
        psi.map((r) => r.outcome),
        psi.map(() => 'evicted'),
      );
      assert.ok(psi.every((r) => r.quietPodSurvived), 'the quiet pod is never the one that goes');
    },
  },
  {
    name: 'with only the 10 s housekeeping pass the OOM killer gets there first',
    async run({ note }) {
      const housekeeping = ofVariant('housekeeping');
      note('oom', count('housekeeping', 'oom'));
      note('evicted', count('housekeeping', 'evicted'));
      const headroom = median(housekeeping.flatMap((r) => (r.outcome === 'oom' && r.afterCrossingMs !== null ? [r.afterCrossingMs] : [])));
      if (headroom !== null) note('medianCrossingToOomMs', Math.round(headroom));
      assert.deepEqual(
        housekeeping.map((r) => r.outcome),
        housekeeping.map(() => 'oom'),
      );
    },
  },
];

export const suite = defineSuite({
  name: 'oom-race',
  title: 'the OOM race: the agent with the PSI notifier beats the kernel OOM killer, with only the 10 s pass it loses',
  async setUp() {
    scratch = mkdtempSync(join(tmpdir(), 'kea-race-'));
    standIn = await startApiStandIn();
    const api = standIn;
    // Side by side; what did start is kept for the tear-down even when the other failed.
    const settled = await Promise.allSettled(VARIANTS.map((variant) => setUpVariant(variant, api)));
    for (const result of settled) if (result.status === 'fulfilled') nodes.push(result.value);
    for (const result of settled) if (result.status === 'rejected') throw result.reason;
  },
  async tearDown() {
    for (const node of nodes) {
      await node.agent.stop();
      node.observer.close();
    }
    await standIn?.stop();
    for (const node of nodes) await node.sandbox.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  },
  cases,
});
