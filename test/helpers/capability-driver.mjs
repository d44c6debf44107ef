// Runs every host-facing feature of the agent once, from a compiled tree (the repository's dist/ or
// the image's /app/dist), against a fixture prepared by test/helpers/capability-check.ts, so that
// its capabilities can be tried under capsh: the start-up capability report, a cgroup v1 memory
// threshold, a PSI trigger, one observation (cgroup reads, statfs, the disk-usage walk of a pod
// volume another user owns), local termination of a pod process another user runs, and
// oom_score_adj. Two operations the agent does not perform today are measured too, with plain
// system calls: reading /proc/<pid>/cgroup of another user's process, and freezing a cgroup.
//
// Plain JavaScript, so that any Node runs it with nothing compiled. The agent's own log lines go
// to standard output as JSON; the last line is {"results": {...}}.
//
// Usage: node capability-driver.mjs '<fixture JSON>'

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const fixture = JSON.parse(process.argv[2]);
const load = (path) => import(pathToFileURL(join(fixture.distRoot, path)).href);

const { createLogger } = await load('src/log.js');
const { systemClock } = await load('src/api/clock.js');
const { parseQuantity } = await load('src/api/quantity.js');
const { defaultAgentSettings } = await load('src/config/defaults.js');
const { reportMissingCapabilities } = await load('src/host/capabilities.js');
const { createMemoryThresholdNotifier } = await load('src/notifier/create-memory-threshold-notifier.js');
const { createCgroupObserver } = await load('src/observe/cgroup-observer.js');
const { createPodTerminator } = await load('src/act/pod-terminator.js');
const { setOomScoreAdj } = await load('src/compose/own-process.js');

const logger = createLogger('info', process.stdout);
const results = {};

// The compiled settings, as a file pointing at the fixture would give them.
const defaults = defaultAgentSettings();
const observeSettings = {
  ...defaults.observe,
  hostRoot: '/',
  cgroupRoot: '/sys/fs/cgroup',
  procRoot: '/proc',
  kubeletRootDir: fixture.kubeletRootDir,
  imageFsPath: fixture.imageFsPath,
  containerFsPath: fixture.imageFsPath,
  podLogsDir: fixture.podLogsDir,
  cgroupDriver: 'cgroupfs',
  podCgroupRoot: 'kubepods',
};

async function step(name, run) {
  try {
    results[name] = await run();
  } catch (error) {
    results[name] = { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

const pod = {
  metadata: { name: fixture.pod.name, namespace: fixture.pod.namespace, uid: fixture.pod.uid },
  spec: { containers: [{ name: 'app' }], volumes: [{ name: fixture.pod.volume, emptyDir: {} }] },
  // The container the fixture's cgroup stands for: local termination ends only containers the status lists.
  status: { qosClass: 'BestEffort', phase: 'Running', containerStatuses: [{ name: 'app', containerID: `containerd://${'c'.repeat(64)}` }] },
};

await step('start', () => {
  const missing = reportMissingCapabilities(readFileSync('/proc/self/status', 'utf8'), { signalsPodProcesses: true, walksPodFiles: true }, logger);
  return { ok: missing.length === 0, missing };
});

await step('memcg-threshold', async () => {
  const notifier = createMemoryThresholdNotifier({ ...defaults.notifier, mode: 'memcg-v1' }, { cgroupRoot: '/sys/fs/cgroup', nodeCgroup: fixture.nodeCgroup, podCgroupRoot: `${fixture.nodeCgroup}/kubepods`, procRoot: '/proc', clock: systemClock, logger });
  notifier.start(() => {});
  const availableBytes = 4 * 1024 ** 3;
  notifier.updateThresholds({ node: { memory: { availableBytes, usageBytes: 0, workingSetBytes: 0 } } }, [{ signal: 'memory.available', value: { kind: 'quantity', quantity: parseQuantity('1Gi') }, gracePeriodMs: 0, minReclaim: null }]);
  await notifier.settled();
  const armed = notifier.armedThresholds().length;
  await notifier.stop();
  return { ok: armed === 1, armed };
});

await step('psi-trigger', async () => {
  const notifier = createMemoryThresholdNotifier({ ...defaults.notifier, mode: 'psi', psiWindowMs: 1000, psiStallThresholdMs: 100 }, { cgroupRoot: fixture.emptyCgroupRoot, nodeCgroup: '', podCgroupRoot: 'kubepods', procRoot: '/proc', clock: systemClock, logger });
  notifier.start(() => {});
  await notifier.settled();
  const windows = notifier.psiTriggers().map((t) => t.windowMs);
  await notifier.stop();
  return { ok: windows.length === 1, windowMs: windows[0] ?? null };
});

await step('observe', async () => {
  const observer = createCgroupObserver(observeSettings, { nodeCgroup: fixture.nodeCgroup, processCountIntervalMs: 0, clock: systemClock, logger });
  await observer.refreshDiskUsage([pod]);
  const observation = await observer.observe([pod]);
  const stats = observation.summary.pods?.find((p) => p.podRef.uid === fixture.pod.uid);
  const volumeBytes = stats?.volume?.find((v) => v.name === fixture.pod.volume)?.usedBytes ?? null;
  const nodeFsBytes = observation.summary.node.fs?.capacityBytes ?? null;
  return {
    ok: volumeBytes !== null && volumeBytes >= fixture.volumeFileBytes && stats?.memory?.workingSetBytes !== undefined && nodeFsBytes !== null,
    volumeBytes,
    nodeFsBytes,
    podWorkingSetBytes: stats?.memory?.workingSetBytes ?? null,
    problems: observation.problems,
  };
});

await step('oom-score-adj', () => ({ ok: setOomScoreAdj('-999', logger) }));

// Before terminating, which ends the process these two look at.
await step('read-proc-cgroup', () => ({ ok: readFileSync(`/proc/${fixture.otherUserPid}/cgroup`, 'utf8').includes(fixture.nodeCgroup) }));

await step('freeze', () => {
  const state = join(fixture.freezerCgroup, 'freezer.state');
  writeFileSync(state, 'FROZEN');
  const frozen = readFileSync(state, 'utf8').trim();
  writeFileSync(state, 'THAWED');
  return { ok: frozen === 'FROZEN' || frozen === 'FREEZING', state: frozen };
});

await step('terminate', async () => {
  const terminator = createPodTerminator(observeSettings, { nodeCgroup: fixture.nodeCgroup, clock: systemClock, logger });
  const { signalled } = await terminator.terminate(pod, 0);
  return { ok: signalled === 1, signalled };
});

process.stdout.write(`${JSON.stringify({ results })}\n`);
// The notifiers are stopped; nothing else should hold the process, but a leftover handle must not.
process.exit(0);
