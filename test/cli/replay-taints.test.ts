// NoExecute taint decisions, driven end to end through the `replay` command (in process, and
// once through the built command line): timers fire at their own time between steps, and each
// line lists what happened since the previous one.

import { makePod } from '../fixtures/pods.js';
import type { Toleration } from '../../src/api/pod.js';
import { replay, replayThroughCli } from './run-cli.js';

const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);
const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString().replace('.000Z', 'Z');

interface TaintLine {
  pod: string;
  action: string;
  at: string;
  fireAt?: string;
}

const node = (...taints: { key: string; effect?: string; value?: string; timeAdded?: string }[]): unknown => ({
  metadata: { name: 'node-a' },
  spec: { taints: taints.map((t) => ({ effect: 'NoExecute', ...t })) },
});

const tolerating = (name: string, ...tolerations: Toleration[]) => ({ ...makePod({ name }), spec: { ...makePod({ name }).spec, tolerations } });

async function taintLines(steps: unknown[], configYaml = '{}\n'): Promise<TaintLine[][]> {
  const result = await replay(configYaml, steps);
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return result.lines.map((l) => l.taintEvictions as TaintLine[]);
}

describe('NoExecute taints through replay', () => {
  test('a pod that does not tolerate the taint is deleted at once', async () => {
    const lines = await taintLines([{ time: at(0), node: node({ key: 'maintenance' }), pods: [makePod({ name: 'web' })] }]);
    expect(lines[0]).toEqual([
      { pod: 'default/web', action: 'scheduled', at: at(0), fireAt: at(0) },
      { pod: 'default/web', action: 'deleted', at: at(0) },
    ]);
  });

  test('a pod tolerating for 30 s is deleted at exactly 30 s, reported on the first line after it', async () => {
    const pod = tolerating('web', { key: 'maintenance', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 });
    const lines = await taintLines([
      { time: at(0), node: node({ key: 'maintenance' }), pods: [pod] },
      { time: at(29) },
      { time: at(45) },
    ]);
    expect(lines[0]).toEqual([{ pod: 'default/web', action: 'scheduled', at: at(0), fireAt: at(30) }]);
    expect(lines[1]).toEqual([]);
    expect(lines[2]).toEqual([{ pod: 'default/web', action: 'deleted', at: at(30) }]);
  });

  test('a toleration for int64\'s largest count of seconds (written to mean forever) is scheduled past any timestamp: shown at the last RFC 3339 instant, the replay goes on', async () => {
    // A recording's 9223372036854775807 is read as the nearest double, 2^63.
    const pod = tolerating('web', { key: 'maintenance', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 ** 63 });
    const lines = await taintLines([{ time: at(0), node: node({ key: 'maintenance' }), pods: [pod] }, { time: at(60) }]);
    expect(lines).toEqual([[{ pod: 'default/web', action: 'scheduled', at: at(0), fireAt: '9999-12-31T23:59:59.999Z' }], []]);
  });

  test('removing the taint cancels the pending deletion', async () => {
    const pod = tolerating('web', { key: 'maintenance', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 });
    const lines = await taintLines([{ time: at(0), node: node({ key: 'maintenance' }), pods: [pod] }, { time: at(10), node: node() }, { time: at(60) }]);
    expect(lines[1]).toEqual([{ pod: 'default/web', action: 'cancelled', at: at(10) }]);
    expect(lines[2]).toEqual([]);
  });

  test('a deleted pod cancels its own pending deletion', async () => {
    const pod = tolerating('web', { key: 'maintenance', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 });
    const lines = await taintLines([{ time: at(0), node: node({ key: 'maintenance' }), pods: [pod] }, { time: at(10), pods: [] }, { time: at(60) }]);
    expect(lines[1]).toEqual([{ pod: 'default/web', action: 'cancelled', at: at(10) }]);
    expect(lines[2]).toEqual([]);
  });

  test('several pods with different tolerations go at their own times; one tolerating forever stays', async () => {
    const toleration = (seconds?: number): Toleration => ({ key: 'maintenance', operator: 'Exists', effect: 'NoExecute', ...(seconds === undefined ? {} : { tolerationSeconds: seconds }) });
    const pods = [makePod({ name: 'none' }), tolerating('short', toleration(30)), tolerating('long', toleration(60)), tolerating('forever', toleration())];
    const lines = await taintLines([{ time: at(0), node: node({ key: 'maintenance' }), pods }, { time: at(100) }]);
    const deleted = lines.flat().filter((l) => l.action === 'deleted');
    expect(deleted).toEqual([
      { pod: 'default/none', action: 'deleted', at: at(0) },
      { pod: 'default/short', action: 'deleted', at: at(30) },
      { pod: 'default/long', action: 'deleted', at: at(60) },
    ]);
  });

  test('a taint added while a timer is pending: an untolerated one deletes at once, a tolerated one keeps the timer', async () => {
    const pod = tolerating('web', { key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }, { key: 'b', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 });
    const other = tolerating('api', { key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 });
    const lines = await taintLines([
      { time: at(0), node: node({ key: 'a' }), pods: [pod, other] },
      // b is tolerated by web (for 10 s, but its 60 s timer is kept, as upstream), not by api.
      { time: at(5), node: node({ key: 'a' }, { key: 'b' }) },
      { time: at(100) },
    ]);
    expect(lines[1]).toEqual([
      { pod: 'default/api', action: 'cancelled', at: at(5) },
      { pod: 'default/api', action: 'scheduled', at: at(5), fireAt: at(5) },
      { pod: 'default/api', action: 'deleted', at: at(5) },
    ]);
    expect(lines[2]).toEqual([{ pod: 'default/web', action: 'deleted', at: at(60) }]);
  });

  test('lengthened and shortened tolerations keep the original deadline (upstream rule)', async () => {
    const withSeconds = (name: string, seconds: number) => tolerating(name, { key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds });
    const lines = await taintLines([
      { time: at(0), node: node({ key: 'k' }), pods: [withSeconds('lengthened', 60), withSeconds('shortened', 60)] },
      { time: at(10), pods: [withSeconds('lengthened', 600), withSeconds('shortened', 5)] },
      { time: at(1000) },
    ]);
    expect(lines[1]).toEqual([]);
    expect(lines[2]).toEqual([
      { pod: 'default/lengthened', action: 'deleted', at: at(60) },
      { pod: 'default/shortened', action: 'deleted', at: at(60) },
    ]);
  });

  test('with taintEviction.countFromTimeAdded the period counts from the taint\'s timeAdded, not from when it was seen', async () => {
    const pod = tolerating('web', { key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 });
    const steps = [{ time: at(0), node: node({ key: 'k', timeAdded: at(-20) }), pods: [pod] }, { time: at(60) }];
    expect((await taintLines(steps))[0]).toEqual([{ pod: 'default/web', action: 'scheduled', at: at(0), fireAt: at(30) }]);
    expect((await taintLines(steps, 'taintEviction:\n  countFromTimeAdded: true\n'))[0]).toEqual([{ pod: 'default/web', action: 'scheduled', at: at(0), fireAt: at(10) }]);
  });

  test('through the command line, the same lines as in process', async () => {
    const pod = tolerating('web', { key: 'maintenance', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 });
    const steps = [{ time: at(0), node: node({ key: 'maintenance' }), pods: [pod, makePod({ name: 'other' })] }, { time: at(45) }];
    const command = await replayThroughCli('{}\n', steps);
    expect(command.stderr).toBe('');
    expect(command.status).toBe(0);
    expect(command.lines).toEqual((await replay('{}\n', steps)).lines);
    expect(command.lines.flatMap((l) => (l.taintEvictions as TaintLine[]).filter((t) => t.action === 'deleted').map((t) => t.pod))).toEqual(['default/other', 'default/web']);
  });

  test('deleting the node does not cancel pending deletions (upstream)', async () => {
    const pod = tolerating('web', { key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 });
    const lines = await taintLines([{ time: at(0), node: node({ key: 'k' }), pods: [pod] }, { time: at(10), node: null }, { time: at(40) }]);
    expect(lines[1]).toEqual([]);
    expect(lines[2]).toEqual([{ pod: 'default/web', action: 'deleted', at: at(30) }]);
  });

  test('NoSchedule taints and a toleration of the wrong effect: only NoExecute counts', async () => {
    const pod = tolerating('web', { key: 'k', operator: 'Exists', effect: 'NoSchedule' });
    const lines = await taintLines([
      { time: at(0), node: node({ key: 'other', effect: 'NoSchedule' }), pods: [pod] },
      { time: at(10), node: node({ key: 'k' }) },
    ]);
    expect(lines[0]).toEqual([]);
    expect(lines[1]?.map((l) => l.action)).toEqual(['scheduled', 'deleted']);
  });
});
