// Kept-open cgroup files against the real kernel (cgroup v1, a sandbox cgroup of this test's own):
// a descriptor opened once and read again at offset 0 (src/host/kept-open-file.ts, the door the
// observer and the memory shortcut read through) returns what the kernel generates now —
// memory.usage_in_bytes, memory.stat, memory.limit_in_bytes and memory.max_usage_in_bytes follow a
// process allocating and a limit being written — while cgroup.procs does not: cgroup v1 serves it
// from a PID list the open descriptor keeps reusing until a second passes without a read (a fresh
// open rebuilds the list, which every reader of the cgroup shares), which is why the observer
// opens cgroup.procs afresh every time.

import { readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { CgroupSandbox, cgroupV1Unavailable } from '../helpers/cgroup-sandbox.js';
import { nodeHostFs } from '../../src/host/host-fs.js';
import { KeptOpenFile } from '../../src/host/kept-open-file.js';

const MiB = 1024 * 1024;
const ALLOCATED_BYTES = 64 * MiB;
// The kernel charges in per-CPU batches; a fresh read and a kept-open one a moment apart differ by less.
const TOLERANCE_BYTES = 4 * MiB;
// cgroup v1 destroys a PID list one second (CGROUP_PIDLIST_DESTROY_DELAY) after its last reader stopped.
const PIDLIST_LINGER_MS = 1000;

const unavailable = cgroupV1Unavailable();
let sandbox: CgroupSandbox | undefined;

beforeAll(async () => {
  if (unavailable === null) sandbox = await CgroupSandbox.create({ limitBytes: 1n << 30n });
});
afterAll(() => sandbox?.cleanup());

const skipped = (): boolean => {
  if (sandbox !== undefined) return false;
  console.log(`skipped: ${unavailable ?? 'no sandbox'}`);
  return true;
};

const statField = (text: string, field: string): number => Number(new RegExp(`^${field} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
const pidsOf = (text: string): string[] => text.split('\n').filter((line) => line !== '');

test('memory.usage_in_bytes, memory.stat and memory.max_usage_in_bytes read again at offset 0 follow an allocation (root, cgroup v1)', async () => {
  if (skipped()) return;
  const s = sandbox as CgroupSandbox;
  const dir = s.mkdir('fresh/usage');
  const usage = new KeptOpenFile(nodeHostFs, join(dir, 'memory.usage_in_bytes'));
  const stat = new KeptOpenFile(nodeHostFs, join(dir, 'memory.stat'));
  const maxUsage = new KeptOpenFile(nodeHostFs, join(dir, 'memory.max_usage_in_bytes'));
  try {
    const usageBefore = Number(usage.read());
    const rssBefore = statField(stat.read(), 'total_rss');
    const maxBefore = Number(maxUsage.read());
    expect(usageBefore).toBeLessThan(TOLERANCE_BYTES);

    const child = await s.startAllocator('fresh/usage', ALLOCATED_BYTES);
    try {
      // The same descriptors, never reopened: each read is the kernel's figure of now.
      expect(usage.isOpen && stat.isOpen && maxUsage.isOpen).toBe(true);
      const usageAfter = Number(usage.read());
      const statAfter = stat.read();
      expect(usageAfter - usageBefore).toBeGreaterThanOrEqual(ALLOCATED_BYTES - TOLERANCE_BYTES);
      expect(Math.abs(usageAfter - Number(readFileSync(join(dir, 'memory.usage_in_bytes'), 'utf8')))).toBeLessThanOrEqual(TOLERANCE_BYTES);
      expect(statField(statAfter, 'total_rss') - rssBefore).toBeGreaterThanOrEqual(ALLOCATED_BYTES - TOLERANCE_BYTES);
      expect(Math.abs(statField(statAfter, 'total_rss') - statField(readFileSync(join(dir, 'memory.stat'), 'utf8'), 'total_rss'))).toBeLessThanOrEqual(TOLERANCE_BYTES);
      expect(Number(maxUsage.read()) - maxBefore).toBeGreaterThanOrEqual(ALLOCATED_BYTES - TOLERANCE_BYTES);
    } finally {
      await s.kill(child);
    }
    // And back down once the process is gone (its anonymous memory uncharged at exit).
    expect(Number(usage.read())).toBeLessThan(usageBefore + TOLERANCE_BYTES);
    expect(statField(stat.read(), 'total_rss')).toBeLessThan(rssBefore + TOLERANCE_BYTES);
  } finally {
    usage.close();
    stat.close();
    maxUsage.close();
  }
});

test('memory.limit_in_bytes read again at offset 0 shows a limit written meanwhile (root, cgroup v1)', () => {
  if (skipped()) return;
  const s = sandbox as CgroupSandbox;
  const dir = s.mkdir('fresh/limit');
  const limit = new KeptOpenFile(nodeHostFs, join(dir, 'memory.limit_in_bytes'));
  try {
    s.setLimit('fresh/limit', 512n * BigInt(MiB));
    expect(BigInt(limit.read().trim())).toBe(512n * BigInt(MiB));
    s.setLimit('fresh/limit', 256n * BigInt(MiB));
    expect(BigInt(limit.read().trim())).toBe(256n * BigInt(MiB));
  } finally {
    limit.close();
  }
});

test('a kept-open file whose cgroup is removed fails, and its descriptor is dropped (root, cgroup v1)', () => {
  if (skipped()) return;
  const s = sandbox as CgroupSandbox;
  const dir = s.mkdir('fresh/removed');
  const usage = new KeptOpenFile(nodeHostFs, join(dir, 'memory.usage_in_bytes'));
  expect(Number(usage.read())).toBeGreaterThanOrEqual(0);
  rmdirSync(dir);
  expect(() => usage.read()).toThrow(/ENODEV|ENOENT/);
  expect(usage.isOpen).toBe(false);
});

test('cgroup.procs is NOT fresh when kept open: the PID list is reused while it is read within a second, fresh again after a second without reads (root, cgroup v1)', async () => {
  if (skipped()) return;
  const s = sandbox as CgroupSandbox;
  const dir = s.mkdir('fresh/procs');
  s.mkdir('fresh/elsewhere');
  // The process starts elsewhere and is moved in by a write: any fresh open of this cgroup's
  // cgroup.procs would rebuild the list every reader of it shares, so membership is checked in
  // /proc/<pid>/cgroup instead.
  const child = await s.startIdle('fresh/elsewhere');
  const pid = String(child.pid);
  const procs = new KeptOpenFile(nodeHostFs, join(dir, 'cgroup.procs'), false);
  // Re-read often enough that the kernel never destroys the list the descriptor holds.
  const keepAlive = setInterval(() => procs.read(), 50);
  try {
    expect(pidsOf(procs.read())).toEqual([]);
    s.write('fresh/procs', 'cgroup.procs', `${pid}\n`);
    expect(readFileSync(`/proc/${pid}/cgroup`, 'utf8')).toMatch(new RegExp(`:memory:/.*/fresh/procs$`, 'm'));
    // The kept-open descriptor, read again at offset 0, still lists what it listed before.
    expect(pidsOf(procs.read())).toEqual([]);
    clearInterval(keepAlive);
    await new Promise((resolve) => setTimeout(resolve, PIDLIST_LINGER_MS + 500));
    expect(pidsOf(procs.read())).toEqual([pid]);
  } finally {
    clearInterval(keepAlive);
    procs.close();
    await s.kill(child);
  }
});
