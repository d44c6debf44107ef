// The real node: reaction on a real kubelet, containerd and kube-apiserver (the end-to-end
// harness's real node, test/e2e/harness/real-node.ts, on loopback). Each run starts a fresh agent
// (so each eviction is the first of its pressure episode) beside a pod holding 600 MiB, then a pod
// leaking 40 or 400 MiB/s; the port timeline (test/e2e/harness/port-timeline.ts) times, from the
// kernel notification reaching the agent, the pass, the observation, the local termination and
// the API DELETE. Rates alternate run by run so both see the same machine. The sandbox's figure
// (part 2, the in-process API stand-in) is shown beside it.

import { execFileSync } from 'node:child_process';
import { cgroupV1Unavailable } from '../lib/bench-cgroup.js';
import { throwIfInterrupted } from '../lib/cleanup.js';
import type { BenchPart, PartContext } from '../lib/part.js';
import { distribution, fmt, type Distribution } from '../lib/stats.js';
import { installAgentIdentity } from '../../test/e2e/harness/agent-identity.js';
import { findControlPlaneBinaries, findRealNodeBinaries } from '../../test/e2e/harness/binaries.js';
import { ControlPlane } from '../../test/e2e/harness/control-plane.js';
import { createPod, nodeCondition } from '../../test/e2e/harness/objects.js';
import type { Reaction } from '../../test/e2e/harness/port-timeline.js';
import { nodeImages, RealNode } from '../../test/e2e/harness/real-node.js';
import { agentConfig, loadAverage, realPod, startRealNodeScenario } from '../../test/e2e/harness/real-node-scenario.js';
import type { TestContext } from '../../test/e2e/harness/test-context.js';
import { waitFor } from '../../test/e2e/harness/wait.js';

const NODE = 'bench-node';
const MiB = 1024 * 1024;
const KUBEPODS_LIMIT_BYTES = 1536n * BigInt(MiB);
const KUBELET_EVICTION_HARD = { 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '2%', 'imagefs.inodesFree': '2%' };
const AGENT_EVICTION_HARD = { 'memory.available': '400Mi', 'nodefs.available': '5%', 'nodefs.inodesFree': '5%', 'imagefs.available': '2%', 'imagefs.inodesFree': '2%' };
/** The leak's rate (MiB/s) and the MiB it holds at once: a few seconds to the agent's threshold either way. */
export const REAL_NODE_RATES: readonly { readonly rateMi: number; readonly startMi: number }[] = [
  { rateMi: 40, startMi: 300 },
  { rateMi: 400, startMi: 0 },
];

/** One leak, in ms from the kernel notification reaching the agent (null: the step did not happen). */
export interface RealNodeSample {
  readonly rateMi: number;
  readonly toLocalTermination: number | null;
  readonly toDelete: number | null;
  readonly passStart: number;
  readonly observe: number;
  readonly observedPods: number;
  /** Pod created → the API server reports it gone. */
  readonly createdToDeletedMs: number;
  readonly oomKills: number;
  readonly loadAverage: string;
}

export interface RealNodeRate {
  readonly rateMi: number;
  readonly runs: number;
  readonly toLocalTermination: Distribution | null;
  readonly toDelete: Distribution | null;
  readonly observe: Distribution | null;
  readonly oomKills: number;
}

export interface RealNodeData {
  readonly versions: string;
  readonly samples: readonly RealNodeSample[];
  readonly rates: readonly RealNodeRate[];
  readonly failures: readonly string[];
}

const runsFor = (quick: boolean): number => (quick ? 2 : 8);

function versionOf(binary: string, args: readonly string[]): string {
  try {
    return execFileSync(binary, [...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim().split('\n')[0] ?? '';
  } catch {
    return '';
  }
}

// The harness's test context, outside jest: cleanups run newest first when the run ends.
function benchContext(base: Omit<TestContext<RealNode>, 'defer' | 'addDiagnostics'>): { context: TestContext<RealNode>; cleanup: () => Promise<void> } {
  const cleanups: (() => Promise<void> | void)[] = [];
  return {
    context: { ...base, defer: (fn) => cleanups.push(fn), addDiagnostics: () => undefined },
    cleanup: async () => {
      for (const fn of cleanups.splice(0).reverse()) await fn();
    },
  };
}

async function oneLeak(base: Omit<TestContext<RealNode>, 'defer' | 'addDiagnostics'>, index: number, rate: { rateMi: number; startMi: number }): Promise<RealNodeSample> {
  const { context, cleanup } = benchContext(base);
  try {
    const scenario = await startRealNodeScenario(context, `bench-${index}-${rate.rateMi}`);
    const { node, namespace, pods, timeline } = scenario;
    await scenario.runPods([{ name: 'ballast', options: { args: ['hold', '600'], requests: { memory: '640Mi' } } }]);
    await scenario.startAgent(agentConfig(node, AGENT_EVICTION_HARD));
    await waitFor(async () => (await nodeCondition(context.admin, NODE, 'kube-eviction-agent.io/MemoryPressure'))?.status === 'False', { what: 'no memory pressure at start', timeoutMs: 30_000 });
    const startMs = Date.now();
    const name = `leak-${rate.rateMi}`;
    await createPod(context.admin, namespace, realPod(name, NODE, { args: ['leak', String(rate.rateMi), String(rate.startMi), '1600'], requests: { memory: '16Mi' } }));
    const deletedAtMs = await pods.waitDeleted(name, 90_000);
    const reaction: Reaction | null = timeline.reaction(`${namespace}/${name}`);
    if (reaction === null) throw new Error(`no reaction timed for ${namespace}/${name}`);
    return {
      rateMi: rate.rateMi,
      toLocalTermination: reaction.toLocalTerminationMs,
      toDelete: reaction.toDeleteMs,
      passStart: reaction.passStartMs,
      observe: reaction.observeMs,
      observedPods: reaction.observedPods,
      createdToDeletedMs: deletedAtMs - startMs,
      oomKills: node.oomWatch.since(startMs).length,
      loadAverage: reaction.loadAverage,
    };
  } finally {
    await cleanup();
  }
}

export function summarizeRealNode(samples: readonly RealNodeSample[]): RealNodeRate[] {
  return REAL_NODE_RATES.map(({ rateMi }) => {
    const mine = samples.filter((s) => s.rateMi === rateMi);
    const values = (pick: (s: RealNodeSample) => number | null): number[] => mine.flatMap((s) => (pick(s) === null ? [] : [pick(s) as number]));
    return {
      rateMi,
      runs: mine.length,
      toLocalTermination: distribution(values((s) => s.toLocalTermination)),
      toDelete: distribution(values((s) => s.toDelete)),
      observe: distribution(values((s) => s.observe)),
      oomKills: mine.reduce((sum, s) => sum + s.oomKills, 0),
    };
  });
}

export const realNodePart: BenchPart<RealNodeData> = {
  name: 'real-node',
  title: 'Reaction on a real node (kubelet, containerd, kube-apiserver)',
  estimateMs: (quick) => 40_000 + runsFor(quick) * REAL_NODE_RATES.length * 15_000,
  unavailable() {
    const cgroups = cgroupV1Unavailable();
    if (cgroups !== null) return cgroups;
    const plane = findControlPlaneBinaries();
    if (!plane.ok) return plane.reason;
    const node = findRealNodeBinaries();
    if (!node.ok) return node.reason;
    const images = nodeImages();
    return images.ok ? null : images.reason;
  },
  async run(ctx: PartContext): Promise<RealNodeData> {
    const planeBinaries = findControlPlaneBinaries();
    const nodeBinaries = findRealNodeBinaries();
    const images = nodeImages();
    if (!planeBinaries.ok || !nodeBinaries.ok || !images.ok) throw new Error('unreachable: unavailable() said the binaries are there');
    const plane = await ControlPlane.start({ binaries: planeBinaries.binaries, nodeNames: [NODE] });
    let node: RealNode | null = null;
    const samples: RealNodeSample[] = [];
    const failures: string[] = [];
    try {
      const admin = plane.admin();
      const identity = await installAgentIdentity(admin);
      node = await RealNode.start({
        plane,
        binaries: nodeBinaries.binaries,
        nodeName: NODE,
        imagesTar: images.binaries,
        kubepodsLimitBytes: KUBEPODS_LIMIT_BYTES,
        rootDirSizeBytes: 256n * BigInt(MiB),
        evictionHard: KUBELET_EVICTION_HARD,
        podPidsLimit: 1024,
      });
      const runs = runsFor(ctx.quick);
      const total = runs * REAL_NODE_RATES.length;
      for (let i = 0; i < total; i++) {
        throwIfInterrupted();
        // Alternating, so both rates see the same machine.
        const rate = REAL_NODE_RATES[i % REAL_NODE_RATES.length] as (typeof REAL_NODE_RATES)[number];
        try {
          const sample = await oneLeak({ plane, admin, identity, fixture: node }, i, rate);
          samples.push(sample);
          ctx.progress.note(`real node: ${rate.rateMi} MiB/s leak ${Math.floor(i / REAL_NODE_RATES.length) + 1}/${runs}: notification -> local termination ${fmt(sample.toLocalTermination)} ms, -> DELETE ${fmt(sample.toDelete)} ms (load ${sample.loadAverage || loadAverage()})`);
        } catch (err) {
          throwIfInterrupted();
          failures.push(`${rate.rateMi} MiB/s: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
          ctx.progress.note(`real node: run ${i + 1} failed: ${failures.at(-1)}`);
        }
        ctx.progress.step(i + 1, total, `${rate.rateMi} MiB/s`);
      }
    } finally {
      await node?.stop();
      await plane.stop();
    }
    const versions = [
      `kubelet ${versionOf(nodeBinaries.binaries.kubelet, ['--version']).replace(/^Kubernetes /, '')}`,
      `containerd ${versionOf(nodeBinaries.binaries.containerd, ['--version']).split(' ')[2] ?? ''}`,
      `runc ${versionOf(nodeBinaries.binaries.runc, ['--version']).split(' ')[2] ?? ''}`,
      `kube-apiserver ${versionOf(planeBinaries.binaries.apiserver, ['--version']).replace(/^Kubernetes /, '')}`,
    ].join(', ');
    return { versions, samples, rates: summarizeRealNode(samples), failures };
  },
};
