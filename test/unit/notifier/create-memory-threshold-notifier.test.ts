// Choosing the notifier: auto-detection on fixture cgroup mounts, explicit modes, the disabled
// variant's single log line, and paths built from the context (the settings are validated by
// src/config, test/unit/config/agent-settings.test.ts).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../fakes/fake-clock.js';
import { FakeNative } from '../../fakes/fake-native.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { summaryArming, threshold } from '../../fixtures/memory-thresholds.js';
import { notifierSettings } from '../../fixtures/settings.js';
import type { NotifierModeSetting } from '../../../src/api/agent-settings.js';
import { createMemoryThresholdNotifier, detectNotifierMode, type NotifierContext } from '../../../src/notifier/create-memory-threshold-notifier.js';
import { MemcgV1Notifier } from '../../../src/notifier/memcg-v1-notifier.js';

const scratch = mkdtempSync(join(tmpdir(), 'kea-notifier-factory-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A directory standing for a cgroup mount, with the given files. */
function cgroupRoot(name: string, files: Record<string, string>): string {
  const root = join(scratch, name);
  mkdirSync(root, { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const v1 = cgroupRoot('v1', { 'memory/cgroup.event_control': '', 'memory/memory.usage_in_bytes': '0\n' });
const v2 = cgroupRoot('v2', { 'cgroup.controllers': 'cpuset cpu io memory hugetlb pids rdma misc\n' });
const v2WithoutMemory = cgroupRoot('v2-no-memory', { 'cgroup.controllers': 'hugetlb\n' });
const nothing = cgroupRoot('nothing', {});

describe('detectNotifierMode', () => {
  const cases = [
    { name: 'v1-event-control-means-memcg-v1', root: v1, mode: 'memcg-v1', reason: `${v1}/memory/cgroup.event_control exists` },
    { name: 'v2-with-memory-controller-means-psi', root: v2, mode: 'psi', reason: `${v2}/cgroup.controllers lists the memory controller` },
    {
      name: 'v2-without-memory-controller-is-disabled',
      root: v2WithoutMemory,
      mode: 'disabled',
      reason: `${v2WithoutMemory}/memory/cgroup.event_control (cgroup v1) does not exist and ${v2WithoutMemory}/cgroup.controllers does not list the memory controller`,
    },
    { name: 'no-cgroup-filesystem-is-disabled', root: nothing, mode: 'disabled', reason: `neither ${nothing}/memory/cgroup.event_control (cgroup v1) nor ${nothing}/cgroup.controllers (cgroup v2) exists` },
  ];
  for (const tc of cases) test(tc.name, () => expect(detectNotifierMode(tc.root)).toEqual({ mode: tc.mode, reason: tc.reason }));
});

// A notifier of `mode` on the cgroup mount `cgroupRoot`, the node its root cgroup.
function notifier(mode: NotifierModeSetting, context: Partial<NotifierContext> & Pick<NotifierContext, 'cgroupRoot' | 'logger'>) {
  return createMemoryThresholdNotifier(notifierSettings({ mode }), { nodeCgroup: '', podCgroupRoot: 'kubepods', procRoot: '/proc', clock: new FakeClock(), native: new FakeNative(), ...context });
}

describe('createMemoryThresholdNotifier', () => {

  const cases = [
    { name: 'auto-on-cgroup-v1', mode: 'auto', root: v1, expected: 'memcg-v1' },
    { name: 'auto-on-cgroup-v2', mode: 'auto', root: v2, expected: 'psi' },
    { name: 'auto-without-a-memory-controller', mode: 'auto', root: v2WithoutMemory, expected: 'disabled' },
    { name: 'disabled-by-configuration', mode: 'disabled', root: v1, expected: 'disabled' },
    { name: 'psi-forced-on-a-v1-node', mode: 'psi', root: v1, expected: 'psi' },
  ] as const;
  for (const tc of cases) {
    test(tc.name, async () => {
      const logger = new RecordingLogger();
      const created = notifier(tc.mode, { logger, cgroupRoot: tc.root });
      expect(created.mode).toBe(tc.expected);
      const chosen = logger.lines.find((l) => l.msg === 'memory threshold notifier mode chosen');
      expect(chosen?.fields).toMatchObject({ component: 'memory-threshold-notifier', mode: tc.expected });
      await created.stop();
    });
  }

  test('a configured mode that does not match the node is warned about', async () => {
    const logger = new RecordingLogger();
    const created = notifier('psi', { logger, cgroupRoot: v1 });
    expect(logger.at('warn').map((l) => l.fields)).toEqual([
      { component: 'memory-threshold-notifier', configured: 'psi', detected: 'memcg-v1', why: `${v1}/memory/cgroup.event_control exists` },
    ]);
    await created.stop();
  });

  test('the disabled notifier logs its reason once at start and does nothing else', async () => {
    const logger = new RecordingLogger();
    const native = new FakeNative();
    const created = notifier('auto', { native, logger, cgroupRoot: nothing });
    created.start(() => {});
    created.start(() => {});
    created.updateThresholds(summaryArming(1n << 32n), [threshold('memory.available', '1Gi')]);
    await created.stop();
    await created.stop();
    const disabled = logger.lines.filter((l) => l.msg.startsWith('memory threshold notifier disabled'));
    expect(disabled).toHaveLength(1);
    expect(disabled[0]?.fields['reason']).toContain('neither');
    expect(native.createdFds).toBe(0);
  });

  test('memcg-v1 watches <cgroupRoot>/memory/<nodeCgroup>, slashes trimmed', async () => {
    const native = new FakeNative();
    native.addCgroup('/r/memory/kea/node', 0n);
    native.addCgroup('/r/memory/kea/pods', 0n);
    const created = notifier('memcg-v1', { native, logger: new RecordingLogger(), cgroupRoot: '/r', nodeCgroup: '/kea/node/', podCgroupRoot: '/kea/pods' });
    expect(created).toBeInstanceOf(MemcgV1Notifier);
    created.updateThresholds(summaryArming(5n << 30n, 3n << 30n), [threshold('memory.available', '1Gi'), threshold('allocatableMemory.available', '1Gi')]);
    await (created as MemcgV1Notifier).settled();
    expect(native.registrations('/r/memory/kea/node')).toEqual([5n << 30n]);
    expect(native.registrations('/r/memory/kea/pods')).toEqual([3n << 30n]);
    await created.stop();
  });
});
