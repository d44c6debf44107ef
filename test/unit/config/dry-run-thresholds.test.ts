// The dryRunThresholds section: which thresholds move from live to dry-run (allocatable copies
// with their source), and the errors for entries that name no threshold in force.

import { formatEffectiveThresholds } from '../../../src/config/effective-table.js';
import { parseConfigText } from '../../../src/config/load.js';
import { ConfigError } from '../../../src/errors.js';

const kinds = (thresholds: readonly { signal: string; gracePeriodMs: number }[] | undefined): string[] =>
  (thresholds ?? []).map((t) => `${t.gracePeriodMs === 0 ? 'hard' : 'soft'} ${t.signal}`);

function problems(text: string): { field: string; message: string; line?: number }[] {
  try {
    parseConfigText(text, 'test.yaml');
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => ({ field: p.field, message: p.message, ...(p.line === undefined ? {} : { line: p.line }) }));
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('thresholds marked dry-run', () => {
  const cases: { name: string; text: string; live: string[]; dryRun: string[] }[] = [
    {
      name: 'a soft threshold, beside a live hard one of the same signal',
      text: 'evictionHard: {memory.available: 500Mi}\nevictionSoft: {memory.available: 2Gi}\nevictionSoftGracePeriod: {memory.available: 1m}\ndryRunThresholds:\n  evictionSoft: [memory.available]\n',
      live: ['hard memory.available', 'hard allocatableMemory.available'],
      dryRun: ['soft memory.available'],
    },
    {
      name: 'a hard memory threshold takes its allocatable copy with it',
      text: 'evictionHard: {memory.available: 500Mi, nodefs.available: 10%}\ndryRunThresholds:\n  evictionHard: [memory.available]\n',
      live: ['hard nodefs.available'],
      dryRun: ['hard memory.available', 'hard allocatableMemory.available'],
    },
    {
      name: 'a default threshold of evictionHard',
      text: 'dryRunThresholds:\n  evictionHard: [imagefs.available]\n',
      live: ['hard memory.available', 'hard nodefs.available', 'hard nodefs.inodesFree', 'hard imagefs.inodesFree', 'hard allocatableMemory.available'],
      dryRun: ['hard imagefs.available'],
    },
    {
      name: 'empty lists and a null section change nothing',
      text: 'evictionHard: {memory.available: 500Mi}\ndryRunThresholds:\n  evictionHard: []\n',
      live: ['hard memory.available', 'hard allocatableMemory.available'],
      dryRun: [],
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const cfg = parseConfigText(tc.text, 'test.yaml');
      expect(kinds(cfg.eviction.thresholds)).toEqual(tc.live);
      expect(kinds(cfg.eviction.dryRunThresholds)).toEqual(tc.dryRun);
      expect(cfg.thresholdSources).toHaveLength(cfg.eviction.thresholds.length);
      expect(cfg.dryRunThresholdSources).toHaveLength(tc.dryRun.length);
    });
  }

  test('check-config lists a dry-run threshold among the effective ones, marked as such', () => {
    const cfg = parseConfigText('evictionHard: {memory.available: 500Mi}\nevictionSoft: {memory.available: 2Gi}\nevictionSoftGracePeriod: {memory.available: 1m}\ndryRunThresholds:\n  evictionSoft: [memory.available]\n', 'test.yaml');
    const rows = formatEffectiveThresholds(cfg).split('\n').filter((l) => /^\s+(memory|allocatable)/.test(l)).map((l) => l.trim().split(/\s{2,}/));
    expect(rows).toEqual([
      ['memory.available', 'hard', '500Mi', '-', '-', 'user'],
      ['allocatableMemory.available', 'hard', '500Mi', '-', '-', 'allocatable copy of memory.available'],
      ['memory.available', 'soft', '2Gi', '1m', '-', 'user (dry run: reported, never acted on)'],
    ]);
  });

  test('without the section the compiled configuration has no dry-run key', () => {
    expect(parseConfigText('evictionHard: {memory.available: 500Mi}\n', 'test.yaml').eviction).not.toHaveProperty('dryRunThresholds');
  });
});

describe('dry-run entries that name no threshold are errors', () => {
  const cases: { name: string; text: string; expected: { field: string; message: string; line?: number }[] }[] = [
    {
      name: 'a signal without a soft threshold',
      text: 'evictionHard: {memory.available: 500Mi}\ndryRunThresholds:\n  evictionSoft: [memory.available]\n',
      expected: [
        {
          field: 'dryRunThresholds.evictionSoft[0]',
          message: 'names no configured threshold: no evictionSoft["memory.available"] is in force (it is not in evictionSoft, or is turned off with "0%" or "100%")',
          line: 3,
        },
      ],
    },
    {
      name: 'a threshold turned off with 0%',
      text: 'evictionHard: {memory.available: "0%"}\ndryRunThresholds:\n  evictionHard: [memory.available]\n',
      expected: [
        {
          field: 'dryRunThresholds.evictionHard[0]',
          message: 'names no configured threshold: no evictionHard["memory.available"] is in force (it is not in evictionHard nor among its defaults, or is turned off with "0%" or "100%")',
          line: 3,
        },
      ],
    },
    {
      name: 'the allocatable copy is not an entry of its own',
      text: 'evictionHard: {memory.available: 500Mi}\ndryRunThresholds:\n  evictionHard: [allocatableMemory.available]\n',
      expected: [
        {
          field: 'dryRunThresholds.evictionHard[0]',
          message: 'names no configured threshold: no evictionHard["allocatableMemory.available"] is in force (it is not in evictionHard nor among its defaults, or is turned off with "0%" or "100%")',
          line: 3,
        },
      ],
    },
    {
      name: 'an unknown signal, a repeated one, and an unknown map',
      text: 'evictionHard: {memory.available: 500Mi}\ndryRunThresholds:\n  evictionHard: [mem.available, memory.available, memory.available]\n  evictionSoftGracePeriod: [memory.available]\n',
      expected: [
        { field: 'dryRunThresholds.evictionHard[0]', message: 'unsupported eviction signal mem.available', line: 3 },
        { field: 'dryRunThresholds.evictionHard[2]', message: 'memory.available is listed twice', line: 3 },
        { field: 'dryRunThresholds.evictionSoftGracePeriod', message: 'unknown field "evictionSoftGracePeriod"; did you mean evictionSoft?', line: 4 },
      ],
    },
    {
      name: 'not a map of lists',
      text: 'dryRunThresholds:\n  evictionHard: memory.available\n',
      expected: [{ field: 'dryRunThresholds.evictionHard', message: 'must be a list of strings, not the string "memory.available"', line: 2 }],
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(problems(tc.text)).toEqual(tc.expected);
    });
  }

  test('a KubeletConfiguration does not read the section: it is an ignored non-kubelet field', () => {
    const cfg = parseConfigText('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ndryRunThresholds:\n  evictionHard: [memory.available]\n', 'test.yaml');
    expect(cfg.eviction.dryRunThresholds).toBeUndefined();
    expect(cfg.warnings.map((w) => w.field)).toContain('dryRunThresholds');
  });
});
