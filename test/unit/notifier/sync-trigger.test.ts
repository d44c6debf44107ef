// Coalescing wake-ups into synchronize passes: at most one at a time, every trigger during a pass
// collapsed into exactly one more, idle(), errors, and the notifier feeding it.

import { MemcgV1Notifier } from '../../../src/notifier/memcg-v1-notifier.js';
import { createSyncTrigger } from '../../../src/notifier/sync-trigger.js';
import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';
import { FakeNative } from '../../fakes/fake-native.js';
import { RecordingLogger } from './recording-logger.js';
import { summaryArming, threshold } from './thresholds.js';

/** A run that the test finishes by hand, recording what each run served and how many overlapped. */
function controlledRun() {
  const runs: (readonly string[])[] = [];
  const finishers: (() => void)[] = [];
  let active = 0;
  let maxActive = 0;
  const run = (reasons: readonly string[]): Promise<void> => {
    runs.push(reasons);
    active++;
    maxActive = Math.max(maxActive, active);
    return new Promise((resolve) => {
      finishers.push(() => {
        active--;
        resolve();
      });
    });
  };
  const finish = async (): Promise<void> => {
    const next = finishers.shift();
    if (next === undefined) throw new Error('no run in progress');
    next();
    await flushMicrotasks();
  };
  return { run, runs, finish, maxActive: () => maxActive, inProgress: () => finishers.length };
}

describe('createSyncTrigger', () => {
  test('one trigger runs once with its reason', async () => {
    const c = controlledRun();
    const trigger = createSyncTrigger(c.run);
    trigger.trigger('hard memory eviction threshold');
    await flushMicrotasks();
    expect(c.runs).toEqual([['hard memory eviction threshold']]);
    await c.finish();
    expect(c.runs).toHaveLength(1);
  });

  test('triggers in the same turn share the first run', async () => {
    const c = controlledRun();
    const trigger = createSyncTrigger(c.run);
    trigger.trigger('a');
    trigger.trigger('b');
    trigger.trigger('c');
    await flushMicrotasks();
    expect(c.runs).toEqual([['a', 'b', 'c']]);
    await c.finish();
    expect(c.runs).toHaveLength(1);
  });

  test('triggers during a run collapse into exactly one more run, never concurrent', async () => {
    const c = controlledRun();
    const trigger = createSyncTrigger(c.run);
    trigger.trigger('first');
    await flushMicrotasks();
    trigger.trigger('during-1');
    trigger.trigger('during-2');
    await flushMicrotasks();
    trigger.trigger('during-3');
    expect(c.runs).toEqual([['first']]);
    await c.finish();
    expect(c.runs).toEqual([['first'], ['during-1', 'during-2', 'during-3']]);
    expect(c.maxActive()).toBe(1);
    await c.finish();
    expect(c.runs).toHaveLength(2);
    expect(c.inProgress()).toBe(0);
  });

  test('a trigger during the extra run asks for another one', async () => {
    const c = controlledRun();
    const trigger = createSyncTrigger(c.run);
    trigger.trigger('a');
    await flushMicrotasks();
    trigger.trigger('b');
    await c.finish();
    trigger.trigger('c');
    await c.finish();
    await c.finish();
    expect(c.runs).toEqual([['a'], ['b'], ['c']]);
    expect(c.maxActive()).toBe(1);
  });

  test('idle resolves at once when nothing runs, and only after the extra run otherwise', async () => {
    const c = controlledRun();
    const trigger = createSyncTrigger(c.run);
    await expect(trigger.idle()).resolves.toBeUndefined();
    trigger.trigger('a');
    let idle = false;
    void trigger.idle().then(() => {
      idle = true;
    });
    await flushMicrotasks();
    trigger.trigger('b');
    await c.finish();
    expect(idle).toBe(false);
    await c.finish();
    expect(idle).toBe(true);
  });

  test('a run that throws goes to onError and later triggers still run', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const trigger = createSyncTrigger(async () => {
      calls++;
      if (calls === 1) throw new Error('sync failed');
    }, (error) => errors.push(error));
    trigger.trigger('a');
    await trigger.idle();
    trigger.trigger('b');
    await trigger.idle();
    expect(calls).toBe(2);
    expect(errors.map(String)).toEqual(['Error: sync failed']);
  });

  test('notifier events during a slow sync cost exactly one more sync', async () => {
    const native = new FakeNative();
    native.addCgroup('/m', 0n);
    const notifier = new MemcgV1Notifier({ memoryMount: '/m', nodeCgroup: '', podCgroupRoot: 'kubepods', clock: new FakeClock(), logger: new RecordingLogger(), native });
    const c = controlledRun();
    const trigger = createSyncTrigger(c.run);
    notifier.start((event) => trigger.trigger(event.description));
    notifier.updateThresholds(summaryArming(1000n), [threshold('memory.available', '1Gi')]);
    await notifier.settled();
    native.setUsage('/m', 1000n);
    await flushMicrotasks();
    expect(c.runs).toEqual([['hard memory eviction threshold']]);
    // crossings in both directions while the first sync runs
    native.setUsage('/m', 0n);
    await flushMicrotasks();
    native.setUsage('/m', 5000n);
    await flushMicrotasks();
    native.setUsage('/m', 0n);
    await flushMicrotasks();
    await c.finish();
    expect(c.runs).toEqual([['hard memory eviction threshold'], ['hard memory eviction threshold', 'hard memory eviction threshold', 'hard memory eviction threshold']]);
    await c.finish();
    expect(c.runs).toHaveLength(2);
    await notifier.stop();
  });
});
