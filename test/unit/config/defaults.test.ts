// The default tables and the kubelet's defaulting rules, the shipped example configurations, and
// the typo suggestions used by unknown-field errors.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { didYouMean } from '../../../src/config/did-you-mean.js';
import { DEFAULT_EVICTION_HARD, effectiveEvictionHard, effectivePressureTransitionPeriodMs } from '../../../src/config/defaults.js';
import { loadConfigFile, parseConfigText } from '../../../src/config/load.js';

describe('the default evictionHard map', () => {
  test('a file without evictionHard runs with the current Linux map, imagefs.inodesFree included, and its allocatable copy', () => {
    const { eviction, thresholdSources } = parseConfigText('', 'empty.yaml');
    expect(eviction.thresholds.map((t, i) => [t.signal, thresholdSources[i]?.rawValue, thresholdSources[i]?.origin])).toEqual([
      ['memory.available', '100Mi', 'default'],
      ['nodefs.available', '10%', 'default'],
      ['nodefs.inodesFree', '5%', 'default'],
      ['imagefs.available', '15%', 'default'],
      ['imagefs.inodesFree', '5%', 'default'],
      ['allocatableMemory.available', '100Mi', 'allocatable-copy'],
    ]);
    expect(eviction.thresholds.every((t) => t.gracePeriodMs === 0)).toBe(true);
  });

  test('the table cannot be changed at run time', () => {
    expect(() => Object.assign(DEFAULT_EVICTION_HARD, { 'memory.available': '1Gi' })).toThrow(TypeError);
  });
});

describe('effectiveEvictionHard', () => {
  const cases: { name: string; fromFile: Record<string, string> | undefined; merge: boolean; hard: Record<string, string>; defaulted: string[]; dropped: string[] }[] = [
    { name: 'absent-gives-defaults', fromFile: undefined, merge: false, hard: { ...DEFAULT_EVICTION_HARD }, defaulted: Object.keys(DEFAULT_EVICTION_HARD), dropped: [] },
    { name: 'absent-with-merge-gives-defaults', fromFile: undefined, merge: true, hard: { ...DEFAULT_EVICTION_HARD }, defaulted: Object.keys(DEFAULT_EVICTION_HARD), dropped: [] },
    {
      name: 'partial-replaces',
      fromFile: { 'memory.available': '1Gi' },
      merge: false,
      hard: { 'memory.available': '1Gi' },
      defaulted: [],
      dropped: ['nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree'],
    },
    {
      name: 'partial-with-merge',
      fromFile: { 'memory.available': '1Gi', 'pid.available': '1k' },
      merge: true,
      hard: { ...DEFAULT_EVICTION_HARD, 'memory.available': '1Gi', 'pid.available': '1k' },
      defaulted: ['nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree'],
      dropped: [],
    },
    { name: 'empty-map-replaces-everything', fromFile: {}, merge: false, hard: {}, defaulted: [], dropped: Object.keys(DEFAULT_EVICTION_HARD) },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const result = effectiveEvictionHard(tc.fromFile, tc.merge);
      expect(result.evictionHard).toEqual(tc.hard);
      expect([...result.defaultedSignals]).toEqual(tc.defaulted);
      expect(result.droppedDefaultSignals).toEqual(tc.dropped);
    });
  }
});

describe('effectivePressureTransitionPeriodMs', () => {
  const cases: { name: string; fromFileMs: number | undefined; ms: number }[] = [
    { name: 'absent', fromFileMs: undefined, ms: 300_000 },
    { name: 'explicit-zero', fromFileMs: 0, ms: 300_000 },
    { name: 'set', fromFileMs: 30_000, ms: 30_000 },
    { name: 'negative-passed-through', fromFileMs: -1000, ms: -1000 },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(effectivePressureTransitionPeriodMs(tc.fromFileMs)).toBe(tc.ms);
    });
  }
});

describe('the example configurations load cleanly', () => {
  const dir = new URL('../../../examples/config/', import.meta.url).pathname;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    test(file, async () => {
      const cfg = await loadConfigFile(join(dir, file));
      expect(cfg.eviction.thresholds.length).toBeGreaterThan(0);
      // Only the kubelet file may warn, and only about kubelet fields the agent does not read.
      expect(cfg.warnings.filter((w) => !w.message.startsWith('ignored: only the eviction settings'))).toEqual([]);
    });
  }
});

describe('didYouMean', () => {
  const cases: { name: string; input: string; candidates: string[]; expected: string | null }[] = [
    { name: 'missing-letter', input: 'evictonHard', candidates: ['evictionHard', 'evictionSoft'], expected: 'evictionHard' },
    { name: 'case-only', input: 'EvictionHard', candidates: ['evictionHard'], expected: 'evictionHard' },
    { name: 'run-on-word', input: 'warning', candidates: ['debug', 'info', 'warn', 'error'], expected: 'warn' },
    { name: 'transposed', input: 'obsreve', candidates: ['observe', 'server'], expected: 'observe' },
    { name: 'unrelated', input: 'maxPods', candidates: ['evictionHard', 'evictionSoft'], expected: null },
    { name: 'short-words-need-to-be-close', input: 'foo', candidates: ['port', 'kind'], expected: null },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(didYouMean(tc.input, tc.candidates)).toBe(tc.expected);
    });
  }
});
