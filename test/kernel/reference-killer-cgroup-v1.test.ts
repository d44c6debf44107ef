// The benchmarks' C reference killer (bench/reference-killer.c, driven by bench/lib/reference-killer.ts)
// on the real kernel: armed on a node cgroup, it kills its victim's processes, and only its
// victim's, once an allocation takes the node past the threshold, reporting the usage it confirmed;
// an event for a crossing downwards (usage below the threshold) kills nothing; a threshold never
// crossed is dropped on request. Needs root, a cgroup v1 memory hierarchy and a C compiler; skipped
// with the reason printed otherwise. Cgroups come from the shared sandbox (kea-test-<pid>-<tag>-<n>).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildReferenceKiller, ReferenceKiller } from '../../bench/lib/reference-killer.js';
import { referenceReaderUnavailable } from '../../bench/lib/reference-reader.js';
import { CgroupSandbox, cgroupV1Unavailable } from '../helpers/cgroup-sandbox.js';
import { scaledTimeoutMs } from '../helpers/timeout-scale.js';

const MiB = 1024 * 1024;
const unavailable = cgroupV1Unavailable() ?? referenceReaderUnavailable();
let sandbox: CgroupSandbox | null = null;
let killer: ReferenceKiller | null = null;
let dir = '';
let binary = '';

const skip = (): boolean => {
  if (unavailable === null) return false;
  console.log(`skipped: ${unavailable}`);
  return true;
};

beforeAll(async () => {
  if (unavailable !== null) return;
  dir = mkdtempSync(join(tmpdir(), 'kea-reference-killer-'));
  // The source is found beside the compiled bench directory, as at bench time.
  binary = buildReferenceKiller(join(process.cwd(), 'dist', 'bench'), dir);
  sandbox = await CgroupSandbox.create();
  sandbox.mkdir('node');
});

afterEach(async () => {
  await killer?.stop();
  killer = null;
});

afterAll(async () => {
  await sandbox?.cleanup();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

const usageOf = (relative: string): number => Number((sandbox as CgroupSandbox).read(relative, 'memory.usage_in_bytes').trim());

describe('the C reference killer (root, cgroup v1, real kernel)', () => {
  test("an allocation past the threshold ends the victim's processes and no other", async () => {
    if (skip()) return;
    const box = sandbox as CgroupSandbox;
    const victim = await box.startIdle('node/victim');
    const bystander = await box.startIdle('node/bystander');
    killer = ReferenceKiller.start(binary, box.resolve('node'));
    const thresholdBytes = usageOf('node') + 8 * MiB;
    await killer.arm(thresholdBytes, box.resolve('node/victim'));
    // The allocator is killed while it allocates, before it can say it is done: its start fails, as it should.
    const allocating = box.startAllocator('node/victim', 32 * MiB).then(
      () => 'finished',
      (err: unknown) => String(err),
    );
    const kill = await killer.killed(scaledTimeoutMs(10_000));
    expect(kill).not.toBeNull();
    expect(kill?.usageAtKillBytes).toBeGreaterThanOrEqual(thresholdBytes);
    expect(kill?.processesKilled).toBe(2);
    expect(kill?.killIssuedNs).toBeGreaterThanOrEqual(kill?.notifiedNs ?? 0n);
    expect(await allocating).toMatch(/exited early \(code null, signal SIGKILL\)/);
    await victim.exited;
    expect(victim.exitSignal()).toBe('SIGKILL');
    expect(box.read('node/victim', 'cgroup.procs').trim()).toBe('');
    expect(bystander.exitSignal()).toBeNull();
    await box.kill(bystander);
  });

  test('an event for usage falling below the threshold kills nothing; disarming drops the threshold', async () => {
    if (skip()) return;
    const box = sandbox as CgroupSandbox;
    const holder = await box.startAllocator('node/holder', 32 * MiB);
    const victim = await box.startIdle('node/victim-2');
    killer = ReferenceKiller.start(binary, box.resolve('node'));
    // Armed below the usage: the holder's exit crosses it downwards, and the kernel signals that too.
    const thresholdBytes = usageOf('node') - 16 * MiB;
    await killer.arm(thresholdBytes, box.resolve('node/victim-2'));
    await box.kill(holder);
    expect(usageOf('node')).toBeLessThan(thresholdBytes);
    expect(await killer.killed(1000)).toBeNull();
    expect(await killer.disarm()).toBeNull();
    expect(victim.exitSignal()).toBeNull();
    // Disarmed: a crossing upwards now kills nothing either.
    const again = await box.startAllocator('node/holder-2', 32 * MiB);
    expect(await killer.killed(1000)).toBeNull();
    expect(victim.exitSignal()).toBeNull();
    await box.kill(again);
    await box.kill(victim);
  });
});
