// The agent's memory.available against a real kubelet's, on the same cgroup v2 node with
// hugepages reserved (the guest's own pools): containerd and the kubelet of the pinned version
// (standalone: no API server, /stats/summary on the read-only port) run in the guest, once with
// HugepageAwareEviction on and once off, and the cgroup observer with the same gate reads the node
// right before and right after each summary. The kubelet's capacity (availableBytes +
// workingSetBytes, what the gate changes) must be the agent's to the byte, and its
// memory.available within 1 MiB of the agent's readings around it; the pods container
// (allocatableMemory.available) is the same for both, and for both gates.

import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { systemClock } from '../../../../../src/api/clock.js';
import { silentLogger } from '../../../../../src/api/logger.js';
import type { Summary } from '../../../../../src/api/summary.js';
import { createCgroupObserver } from '../../../../../src/observe/cgroup-observer.js';
import { observeSettings } from '../../../../fixtures/settings.js';
import { findRealNodeBinaries } from '../../../../e2e/harness/binaries.js';
import { defineSuite, type CaseContext } from '../guest-suite.js';
import { MiB, sleepMs, waitFor } from '../kernel-numbers.js';

const POOL = '/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages';
const RESERVED_PAGES = 96;
const WORK = '/tmp/kea-kubelet';
const SOCKET = `${WORK}/containerd.sock`;
const READ_ONLY_PORT = 10255;
const TOLERANCE_BYTES = 1 * MiB;
const MAX_ATTEMPTS = 60;

let containerd: ChildProcess | null = null;

function binaries(): { kubelet: string; containerd: string } {
  const found = findRealNodeBinaries();
  if (!found.ok) throw new Error(`the real node's binaries are not built: ${found.reason}`);
  return found.binaries;
}

function containerdConfig(): string {
  return [
    'version = 3',
    `root = "${WORK}/containerd/root"`,
    `state = "${WORK}/containerd/state"`,
    'disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.nri.v1.nri"]',
    '[grpc]',
    `  address = "${SOCKET}"`,
    '[ttrpc]',
    `  address = "${SOCKET}.ttrpc"`,
    '[plugins."io.containerd.cri.v1.images"]',
    '  snapshotter = "overlayfs"',
    '[plugins."io.containerd.cri.v1.runtime".cni]',
    `  conf_dir = "${WORK}/cni"`,
    `  bin_dirs = ["${WORK}/cni"]`,
    '',
  ].join('\n');
}

function kubeletConfig(gate: boolean): string {
  return [
    'apiVersion: kubelet.config.k8s.io/v1beta1',
    'kind: KubeletConfiguration',
    'cgroupDriver: cgroupfs',
    `containerRuntimeEndpoint: unix://${SOCKET}`,
    `readOnlyPort: ${READ_ONLY_PORT}`,
    'failSwapOn: false',
    'authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}',
    'authorization: {mode: AlwaysAllow}',
    'featureGates:',
    `  HugepageAwareEviction: ${String(gate)}`,
    '',
  ].join('\n');
}

async function summaryOnce(): Promise<Summary | null> {
  try {
    const response = await fetch(`http://127.0.0.1:${READ_ONLY_PORT}/stats/summary`);
    return response.ok ? ((await response.json()) as Summary) : null;
  } catch {
    return null;
  }
}

async function compare(gate: boolean, { note }: CaseContext): Promise<void> {
  const log = openSync(`${WORK}/kubelet-${String(gate)}.log`, 'w');
  writeFileSync(`${WORK}/kubelet.yaml`, kubeletConfig(gate));
  const kubelet = spawn(binaries().kubelet, ['--config', `${WORK}/kubelet.yaml`, '--root-dir', '/var/lib/kubelet', '--hostname-override', 'guest-node'], { stdio: ['ignore', log, log] });
  const observer = createCgroupObserver(observeSettings({ kubeletRootDir: '/var/lib/kubelet', imageFsPath: WORK, podLogsDir: '/var/log/pods' }), {
    clock: systemClock,
    logger: silentLogger,
    processCountIntervalMs: 0,
    hugepageAwareEviction: gate,
  });
  try {
    let first: Summary | null = null;
    for (let i = 0; i < 240 && first === null; i++) {
      if (kubelet.exitCode !== null) throw new Error(`the kubelet exited ${kubelet.exitCode}: ${readFileSync(`${WORK}/kubelet-${String(gate)}.log`, 'utf8').slice(-2000)}`);
      const summary = await summaryOnce();
      if (summary?.node.memory?.availableBytes !== undefined) first = summary;
      else await sleepMs(500);
    }
    assert.ok(first !== null, 'the kubelet never served a summary with node memory');
    // Readings around one summary: the whole guest moves between two reads (the kubelet starting,
    // cAdvisor's root stats refreshed on its own housekeeping), so the summary is taken again until
    // the node is quiet enough for the bracket to hold; the capacity must match on every try.
    const capacity = (m: { availableBytes?: number; workingSetBytes?: number }): number => (m.availableBytes ?? 0) + (m.workingSetBytes ?? 0);
    let attempts = 0;
    let kubeletMemory: Summary['node']['memory'];
    let before: Summary['node']['memory'];
    let after: Summary['node']['memory'];
    for (;;) {
      attempts++;
      before = (await observer.observe([])).summary.node.memory;
      kubeletMemory = (await summaryOnce())?.node.memory;
      after = (await observer.observe([])).summary.node.memory;
      assert.ok(kubeletMemory?.availableBytes !== undefined && kubeletMemory.workingSetBytes !== undefined, 'no node memory in the summary');
      assert.ok(before?.availableBytes !== undefined && after?.availableBytes !== undefined && before.workingSetBytes !== undefined);
      // The gate's part, exact: MemTotal, less the hugepage capacity with the gate on.
      assert.equal(capacity(kubeletMemory), capacity(before), "the kubelet's and the agent's capacity (available + working set)");
      const low = Math.min(before.availableBytes, after.availableBytes) - TOLERANCE_BYTES;
      const high = Math.max(before.availableBytes, after.availableBytes) + TOLERANCE_BYTES;
      if (kubeletMemory.availableBytes >= low && kubeletMemory.availableBytes <= high) break;
      assert.ok(attempts < MAX_ATTEMPTS, `the kubelet's memory.available ${kubeletMemory.availableBytes} never came within 1 MiB of the agent's (last ${before.availableBytes} .. ${after.availableBytes}) in ${attempts} tries`);
      await sleepMs(1000);
    }
    note('attempts', attempts);
    // allocatableMemory.available: the kubelet leaves the pods container alone, gate on or off (its
    // limit, node allocatable, is set without the pools), and so does the agent: same capacity.
    const pods = (memory: Summary | null | undefined): { availableBytes?: number; workingSetBytes?: number } | undefined => memory?.node.systemContainers?.find((c) => c.name === 'pods')?.memory;
    const kubeletPods = pods(await summaryOnce());
    const agentPods = pods((await observer.observe([])).summary);
    assert.ok(kubeletPods?.availableBytes !== undefined && agentPods?.availableBytes !== undefined, 'no pods container memory');
    assert.equal(capacity(agentPods), capacity(kubeletPods), "the pods container's capacity");
    assert.ok(Math.abs(agentPods.availableBytes - kubeletPods.availableBytes) <= TOLERANCE_BYTES, `allocatable available: the agent's ${agentPods.availableBytes}, the kubelet's ${kubeletPods.availableBytes}`);
    note('podsCapacityMiB', Math.round((capacity(kubeletPods) / MiB) * 100) / 100);
    note('kubeletAvailableMiB', Math.round((kubeletMemory.availableBytes / MiB) * 100) / 100);
    note('agentAvailableMiB', Math.round((before.availableBytes / MiB) * 100) / 100);
    note('differenceKiB', Math.round((kubeletMemory.availableBytes - before.availableBytes) / 1024));
    note('capacityMiB', capacity(kubeletMemory) / MiB);
  } finally {
    observer.close();
    kubelet.kill('SIGTERM');
    await waitFor('the kubelet to exit', () => kubelet.exitCode !== null || kubelet.signalCode !== null, 30_000).catch(() => kubelet.kill('SIGKILL'));
  }
}

export const suite = defineSuite({
  name: 'kubelet-hugepages',
  title: "hugepage-aware memory.available: the agent's against a real kubelet's /stats/summary on the same node, gate on and off",
  setUpTimeoutMs: 120_000,
  async setUp() {
    writeFileSync(POOL, String(RESERVED_PAGES));
    assert.equal(Number(readFileSync(POOL, 'utf8').trim()), RESERVED_PAGES);
    // The guest's root is the host's, read-only: the kubelet's fixed paths get tmpfs of their own.
    for (const dir of ['/var/log', '/var/lib/kubelet']) execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', dir]);
    for (const dir of ['containerd/root', 'containerd/state', 'cni']) mkdirSync(`${WORK}/${dir}`, { recursive: true });
    writeFileSync(`${WORK}/containerd.toml`, containerdConfig());
    const log = openSync(`${WORK}/containerd.log`, 'w');
    containerd = spawn(binaries().containerd, ['--config', `${WORK}/containerd.toml`], { stdio: ['ignore', log, log], env: { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin` } });
    await waitFor('containerd to listen', () => existsSync(SOCKET), 60_000, 100);
  },
  async tearDown() {
    containerd?.kill('SIGTERM');
    writeFileSync(POOL, '0');
  },
  cases: [
    { name: 'HugepageAwareEviction on: the kubelet subtracts the pools, and so does the agent', timeoutMs: 240_000, run: (context) => compare(true, context) },
    { name: 'HugepageAwareEviction off: neither subtracts them', timeoutMs: 240_000, run: (context) => compare(false, context) },
  ],
});
