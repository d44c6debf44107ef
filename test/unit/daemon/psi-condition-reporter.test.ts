// The PSI condition reporter on a fake clock, over the real pressure-file source reading an
// in-memory cgroup v2 tree: conditions and taints written on a change only, Events at the set and
// the clear, metrics of the figures, and everything it put on the Node retired when it stops
// maintaining it (off by a reload, dry run, a prefix changed, shutdown), nothing written while the
// agent may not act, a True condition taken over at restart, and nothing at all on cgroup v1.

import type { PsiConditionSettings } from '../../../src/api/agent-settings.js';
import type { Node } from '../../../src/api/pod.js';
import { defaultAgentSettings } from '../../../src/config/defaults.js';
import { createAgentMetrics, type AgentMetrics } from '../../../src/daemon/metrics.js';
import { PsiConditionReporter, type PsiConditionReporterSettings } from '../../../src/daemon/psi-condition-reporter.js';
import { createPsiSource } from '../../../src/observe/psi-source.js';
import { fakeCluster, type FakeCluster } from '../../fakes/fake-cluster.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { MemoryHostFs } from '../../fakes/memory-host-fs.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';

const PREFIX = 'kube-eviction-agent.io/';
const MEMORY = `${PREFIX}KubepodsMemoryContentionPressure`;
const IO = `${PREFIX}KubepodsDiskContentionPressure`;
const MEMORY_TAINT = `${PREFIX}memory-contention-pressure`;
const KUBEPODS = '/sys/fs/cgroup/kubepods';

const PSI: PsiConditionSettings = {
  ...defaultAgentSettings().psiConditions,
  enabled: true,
  memory: { enabled: true, avg10ThresholdPercent: 10, avg60ThresholdPercent: 5 },
  io: { enabled: true, avg10ThresholdPercent: 20, avg60ThresholdPercent: 20 },
  setHoldDurationMs: 10_000,
  clearHoldDurationMs: 30_000,
  intervalMs: 2000,
  taint: { enabled: true },
};

const pressure = (full10: number, full60: number): string => `some avg10=${(full10 + 1).toFixed(2)} avg60=${(full60 + 1).toFixed(2)} avg300=0.00 total=1000\nfull avg10=${full10.toFixed(2)} avg60=${full60.toFixed(2)} avg300=0.00 total=900\n`;

function v2Host(): MemoryHostFs {
  return new MemoryHostFs()
    .write('/sys/fs/cgroup/cgroup.controllers', 'cpuset cpu io memory pids\n')
    .write('/proc/pressure/memory', pressure(0, 0))
    .write(`${KUBEPODS}/memory.pressure`, pressure(0, 0))
    .write(`${KUBEPODS}/io.pressure`, pressure(0, 0));
}

const nodeObject = (conditions: { type: string; status: string }[] = []): Node => ({ metadata: { name: 'n1', uid: '11111111-1111-1111-1111-111111111111' }, spec: {}, status: { conditions } }) as Node;

interface Setup {
  clock: FakeClock;
  fs: MemoryHostFs;
  cluster: FakeCluster;
  metrics: AgentMetrics;
  logger: RecordingLogger;
  reporter: PsiConditionReporter;
  refused: { why: string | null };
}

function setup(options: { psi?: Partial<PsiConditionSettings>; fs?: MemoryHostFs; node?: Node; dryRun?: boolean } = {}): Setup {
  const clock = new FakeClock();
  const fs = options.fs ?? v2Host();
  const cluster = fakeCluster({ node: options.node ?? nodeObject() });
  const metrics = createAgentMetrics(false);
  const logger = new RecordingLogger();
  const refused = { why: null as string | null };
  const settings: PsiConditionReporterSettings = { psi: { ...PSI, ...options.psi }, conditionTypePrefix: PREFIX, dryRun: options.dryRun ?? false };
  const reporter = new PsiConditionReporter(settings, {
    source: createPsiSource({ cgroupRoot: '/sys/fs/cgroup', podCgroupRoot: 'kubepods', procRoot: '/proc', fs }),
    reporter: cluster.reporter,
    cluster: cluster.view,
    events: cluster.events,
    metrics,
    clock,
    logger,
    refusal: () => refused.why,
  });
  return { clock, fs, cluster, metrics, logger, reporter, refused };
}

const status = (s: Setup, type: string): string | undefined => s.cluster.view.node()?.status?.conditions?.find((c) => c.type === type)?.status;
const conditionWrites = (s: Setup): number => s.cluster.reporter.calls.filter((c) => c.method === 'setConditions').length;
async function metric(s: Setup, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const values = (await s.metrics.registry.getSingleMetric(`kube_eviction_agent_${name}`)?.get())?.values ?? [];
  return values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
}

describe('PsiConditionReporter', () => {
  test('memory thrashing: Unknown while judging, False, set after the hold with its taint and a Warning Event, cleared after the clear hold', async () => {
    const s = setup();
    s.reporter.start();
    await s.clock.stepAsync(0);
    expect([status(s, MEMORY), status(s, IO)]).toEqual(['Unknown', 'Unknown']);
    expect(s.cluster.view.node()?.status?.conditions?.find((c) => c.type === MEMORY)).toMatchObject({
      reason: 'AgentKubepodsMemoryContentionPressurePending',
      message: "kube-eviction-agent: the pods' memory pressure (full) not judged yet: the condition is True once every reading for 10s was at or over avg10 >= 10% and avg60 >= 5%, False once none was",
    });
    await s.clock.stepAsync(10_000);
    expect([status(s, MEMORY), status(s, IO)]).toEqual(['False', 'False']);
    const writesAtRest = conditionWrites(s);
    // Two minutes at rest: nothing more written.
    await s.clock.stepAsync(120_000);
    expect(conditionWrites(s)).toBe(writesAtRest);

    // Read 2 s later (the next reading); set once every reading for 10 s was over.
    s.fs.write(`${KUBEPODS}/memory.pressure`, pressure(42.5, 12.25));
    await s.clock.stepAsync(2000);
    await s.clock.stepAsync(8000);
    expect(status(s, MEMORY)).toBe('False');
    await s.clock.stepAsync(2000);
    expect(status(s, MEMORY)).toBe('True');
    expect(s.cluster.view.node()?.status?.conditions?.find((c) => c.type === MEMORY)).toMatchObject({ reason: 'AgentHasKubepodsMemoryContentionPressure' });
    expect(s.cluster.reporter.hasTaint(MEMORY_TAINT)).toBe(true);
    expect(s.cluster.reporter.hasTaint(`${PREFIX}disk-contention-pressure`)).toBe(false);
    expect(s.cluster.events.events.map((e) => [e.type, e.reason, e.message])).toEqual([['Warning', 'KubepodsMemoryContentionPressure', "The pods' memory pressure (full) is high: avg10=42.50% avg60=12.25% (thresholds avg10 10%, avg60 5%)"]]);
    expect(await metric(s, 'psi_pressure_percent', { resource: 'memory', line: 'full', window: '10s' })).toBe(42.5);
    expect(await metric(s, 'psi_pressure_percent', { resource: 'memory', line: 'some', window: '60s' })).toBe(13.25);
    expect(await metric(s, 'psi_condition', { condition: 'KubepodsMemoryContentionPressure', status: 'True' })).toBe(1);

    // Trending lower (avg60 still over): kept. Then under both for 30 s: cleared, taint gone.
    s.fs.write(`${KUBEPODS}/memory.pressure`, pressure(3, 7));
    await s.clock.stepAsync(60_000);
    expect(status(s, MEMORY)).toBe('True');
    s.fs.write(`${KUBEPODS}/memory.pressure`, pressure(1, 2));
    await s.clock.stepAsync(2000);
    await s.clock.stepAsync(28_000);
    expect(status(s, MEMORY)).toBe('True');
    await s.clock.stepAsync(2000);
    expect(status(s, MEMORY)).toBe('False');
    expect(s.cluster.reporter.hasTaint(MEMORY_TAINT)).toBe(false);
    expect(s.cluster.events.reasons()).toEqual(['KubepodsMemoryContentionPressure', 'KubepodsMemoryContentionPressureCleared']);
    expect(await metric(s, 'psi_condition_transitions_total', { condition: 'KubepodsMemoryContentionPressure', status: 'False' })).toBe(1);
    await s.reporter.shutdown();
  });

  test('shutdown: its conditions become Unknown and its taints go; no reading follows', async () => {
    const s = setup();
    s.fs.write(`${KUBEPODS}/memory.pressure`, pressure(50, 50));
    s.reporter.start();
    await s.clock.stepAsync(10_000);
    expect(s.cluster.reporter.hasTaint(MEMORY_TAINT)).toBe(true);
    await s.reporter.shutdown();
    expect([status(s, MEMORY), status(s, IO)]).toEqual(['Unknown', 'Unknown']);
    expect(s.cluster.view.node()?.status?.conditions?.find((c) => c.type === MEMORY)?.reason).toBe('AgentStopped');
    expect(s.cluster.reporter.hasTaint(MEMORY_TAINT)).toBe(false);
    const calls = s.cluster.reporter.calls.length;
    await s.clock.stepAsync(60_000);
    expect(s.cluster.reporter.calls.length).toBe(calls);
  });

  test('restart: a True the Node carries is kept (no False in between) until the pressure has been under for the clear hold', async () => {
    const s = setup({ node: nodeObject([{ type: MEMORY, status: 'True' }]) });
    s.fs.write(`${KUBEPODS}/memory.pressure`, pressure(1, 1));
    s.reporter.start();
    // Written at the first reading (the I/O condition Unknown) and when I/O turns False; memory True both times.
    await s.clock.stepAsync(28_000);
    expect(s.cluster.reporter.calls.filter((c) => c.method === 'setConditions').flatMap((c) => (c.method === 'setConditions' ? c.conditions : [])).filter((c) => c.type === MEMORY).map((c) => c.status)).toEqual(['True', 'True']);
    await s.clock.stepAsync(2000);
    expect(status(s, MEMORY)).toBe('False');
    await s.reporter.shutdown();
  });

  test('dry run: evaluated and measured, but nothing of its own on the Node, and no Event', async () => {
    const s = setup({ dryRun: true, node: nodeObject([{ type: MEMORY, status: 'True' }]) });
    s.fs.write(`${KUBEPODS}/memory.pressure`, pressure(50, 50));
    s.reporter.start();
    await s.clock.stepAsync(12_000);
    expect(status(s, MEMORY)).toBe('Unknown');
    expect(s.cluster.view.node()?.status?.conditions?.find((c) => c.type === MEMORY)?.reason).toBe('AgentDryRun');
    expect(s.cluster.reporter.hasTaint(MEMORY_TAINT)).toBe(false);
    expect(s.cluster.events.events).toEqual([]);
    expect(s.reporter.latest.find((step) => step.resource === 'memory')?.state.status).toBe('True');
    await s.reporter.shutdown();
  });

  test('nothing is written while the agent may not act on its Node (another holds the node lock), and nothing at shutdown', async () => {
    const s = setup();
    s.refused.why = 'standing by';
    s.fs.write(`${KUBEPODS}/memory.pressure`, pressure(50, 50));
    s.reporter.start();
    await s.clock.stepAsync(20_000);
    await s.reporter.shutdown();
    expect(s.cluster.reporter.calls).toEqual([]);
    expect(s.cluster.events.events).toEqual([]);
  });

  test('reload: turned off, its conditions become Unknown and its taint goes; a prefix change retires the old types', async () => {
    const s = setup();
    s.fs.write(`${KUBEPODS}/memory.pressure`, pressure(50, 50));
    s.reporter.start();
    await s.clock.stepAsync(10_000);
    s.reporter.updateSettings({ psi: { ...PSI, memory: { ...PSI.memory, enabled: false } }, conditionTypePrefix: PREFIX, dryRun: false });
    await s.clock.stepAsync(0);
    expect(status(s, MEMORY)).toBe('Unknown');
    expect(s.cluster.view.node()?.status?.conditions?.find((c) => c.type === MEMORY)?.reason).toBe('AgentPsiConditionsOff');
    expect(s.cluster.reporter.hasTaint(MEMORY_TAINT)).toBe(false);
    expect(status(s, IO)).toBe('False');

    s.reporter.updateSettings({ psi: PSI, conditionTypePrefix: 'psi.example.com/', dryRun: false });
    await s.clock.stepAsync(12_000);
    expect(status(s, IO)).toBe('Unknown');
    expect(status(s, 'psi.example.com/KubepodsMemoryContentionPressure')).toBe('True');
    expect(s.cluster.reporter.hasTaint('psi.example.com/memory-contention-pressure')).toBe(true);
    await s.reporter.shutdown();
    expect(status(s, 'psi.example.com/KubepodsMemoryContentionPressure')).toBe('Unknown');
  });

  test('an unreadable pressure file: Unknown with its reason, taint removed', async () => {
    const s = setup();
    s.fs.write(`${KUBEPODS}/memory.pressure`, pressure(50, 50));
    s.reporter.start();
    await s.clock.stepAsync(10_000);
    s.fs.remove(`${KUBEPODS}/memory.pressure`);
    await s.clock.stepAsync(2000);
    const condition = s.cluster.view.node()?.status?.conditions?.find((c) => c.type === MEMORY);
    expect(condition).toMatchObject({ status: 'Unknown', reason: 'AgentPsiUnreadable' });
    expect(condition?.message).toContain(`${KUBEPODS}/memory.pressure`);
    expect(s.cluster.reporter.hasTaint(MEMORY_TAINT)).toBe(false);
    await s.reporter.shutdown();
  });

  test.each([
    ['cgroup v1', new MemoryHostFs().write('/sys/fs/cgroup/memory/memory.usage_in_bytes', '0\n').write('/proc/pressure/memory', pressure(0, 0)), 'cgroup v1'],
    ['a kernel without PSI', new MemoryHostFs().write('/sys/fs/cgroup/cgroup.controllers', 'cpu io memory\n'), 'the kernel has no PSI'],
  ])('%s: said once at start, nothing reported, a stale condition of its own retired', async (_name, fs, reason) => {
    const s = setup({ fs, node: nodeObject([{ type: MEMORY, status: 'True' }]) });
    s.reporter.start();
    await s.clock.stepAsync(20_000);
    expect(s.logger.lines.filter((l) => l.msg.startsWith('PSI node conditions are on, but this node cannot have them')).map((l) => String(l.fields?.reason))).toEqual([expect.stringContaining(reason)]);
    expect(status(s, MEMORY)).toBe('Unknown');
    expect(s.cluster.view.node()?.status?.conditions?.find((c) => c.type === MEMORY)?.reason).toBe('AgentPsiUnavailable');
    expect(status(s, IO)).toBeUndefined();
    expect(await metric(s, 'psi_conditions_available', {})).toBe(0);
    expect(s.clock.pendingTimers()).toBe(0);
    await s.reporter.shutdown();
  });

  test('off (the default): nothing is read or written on a node without conditions of its own', async () => {
    const s = setup({ psi: { enabled: false } });
    s.reporter.start();
    await s.clock.stepAsync(60_000);
    // No timer left to wake the agent while the feature is off.
    expect(s.clock.pendingTimers()).toBe(0);
    await s.reporter.shutdown();
    expect(s.cluster.reporter.calls).toEqual([]);
  });
});
