// The reports check-config prints: the effective thresholds table with each threshold's source,
// the settings that shape eviction timing, and the list of every problem of a rejected file.

import { readFileSync } from 'node:fs';
import { formatConfigErrors, formatConfigWarnings, formatEffectiveThresholds, formatProblemLine } from '../../../src/config/effective-table.js';
import { parseConfigText } from '../../../src/config/load.js';
import type { ConfigError } from '../../../src/errors.js';

describe('formatEffectiveThresholds', () => {
  test('a representative configuration', () => {
    const cfg = parseConfigText(
      [
        'mergeDefaultEvictionSettings: true',
        'evictionHard:',
        '  memory.available: 500Mi',
        '  pid.available: 0.0%',
        'evictionSoft:',
        '  memory.available: 1Gi',
        '  nodefs.available: 15%',
        'evictionSoftGracePeriod:',
        '  memory.available: 1m30s',
        '  nodefs.available: 0s',
        'evictionMinimumReclaim:',
        '  memory.available: 256Mi',
        'evictionMaxPodGracePeriod: 30',
        'evictionPressureTransitionPeriod: 90s',
        'housekeepingInterval: 5s',
        '',
      ].join('\n'),
      'test.yaml',
    );
    expect(formatEffectiveThresholds(cfg)).toBe(
      [
        'Effective eviction thresholds (AgentConfiguration):',
        '  SIGNAL                       KIND  VALUE  GRACE PERIOD  MIN RECLAIM  SOURCE',
        '  memory.available             hard  500Mi  -             256Mi        user',
        '  nodefs.available             hard  10%    -             -            default (merged into evictionHard)',
        '  nodefs.inodesFree            hard  5%     -             -            default (merged into evictionHard)',
        '  imagefs.available            hard  15%    -             -            default (merged into evictionHard)',
        '  imagefs.inodesFree           hard  5%     -             -            default (merged into evictionHard)',
        '  pid.available                hard  0.0%   -             -            user; never met',
        '  memory.available             soft  1Gi    1m30s         256Mi        user',
        '  nodefs.available             hard  15%    0s            -            user; soft with a 0s grace period: acts as hard',
        '  allocatableMemory.available  hard  500Mi  -             256Mi        allocatable copy of memory.available',
        '',
        'evictionPressureTransitionPeriod  1m30s',
        "evictionMaxPodGracePeriod         30s (soft evictions: at most this, or the pod's terminationGracePeriodSeconds if shorter)",
        'localStorageCapacityIsolation     true',
        'kernelMemcgNotification           false',
        'housekeepingInterval              5s',
        '',
      ].join('\n'),
    );
  });

  test('the defaults are marked as defaults', () => {
    const table = formatEffectiveThresholds(parseConfigText('', 'test.yaml'));
    expect(table).toContain('  memory.available             hard  100Mi  -             -            default\n');
    expect(table).toContain('  allocatableMemory.available  hard  100Mi  -             -            allocatable copy of memory.available\n');
    expect(table).toContain('evictionPressureTransitionPeriod  5m0s\n');
    expect(table).toContain('evictionMaxPodGracePeriod         0 (soft evictions give the pod no grace period)\n');
    expect(table).toContain('housekeepingInterval              10s\n');
  });

  test('no thresholds at all is said plainly', () => {
    expect(formatEffectiveThresholds(parseConfigText('evictionHard: {}\n', 'test.yaml'))).toContain('  none: no pod is evicted for node pressure\n');
  });

  test('the example in docs/configuration.md is what the table prints', () => {
    const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
    const example = doc.split('A minimal file')[1]?.split('```yaml\n')[1]?.split('```')[0];
    const printed = doc.split('Its effective thresholds')[1]?.split('```\n')[1]?.split('```')[0];
    expect(example).toBeDefined();
    expect(formatEffectiveThresholds(parseConfigText(example as string, 'docs.yaml'))).toBe(printed);
  });

  test('a KubeletConfiguration is named as such', () => {
    const cfg = parseConfigText('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n', 'kubelet.yaml');
    expect(formatEffectiveThresholds(cfg).split('\n')[0]).toBe('Effective eviction thresholds (KubeletConfiguration):');
  });
});

describe('formatConfigErrors', () => {
  test('lists every problem in file order, with lines and raw values', () => {
    let err: ConfigError | undefined;
    try {
      parseConfigText('evictonHard: {}\nevictionHard:\n  memory.available: "0"\nevictionMinimumReclaim:\n  memory.available: -1Gi\n', 'config.yaml');
    } catch (e) {
      err = e as ConfigError;
    }
    expect(formatConfigErrors(err as ConfigError, '/etc/kea/config.yaml')).toBe(
      [
        'The configuration is invalid (/etc/kea/config.yaml): 3 problems [EVA_ERR_CONFIG_INVALID]',
        '  - evictonHard (line 1): unknown field "evictonHard"; did you mean evictionHard?',
        '  - evictionHard["memory.available"] (line 3): eviction threshold memory.available must be positive: 0',
        '  - evictionMinimumReclaim["memory.available"] (line 5): negative eviction minimum reclaim specified for memory.available (value: "-1Gi")',
        '',
      ].join('\n'),
    );
  });

  test('a YAML error keeps its own position', () => {
    let err: ConfigError | undefined;
    try {
      parseConfigText('a: 1\na: 2\n', 'config.yaml');
    } catch (e) {
      err = e as ConfigError;
    }
    expect(formatConfigErrors(err as ConfigError)).toBe('The configuration file is not valid YAML: 1 problem [EVA_ERR_CONFIG_YAML]\n  - config.yaml:2:1: Map keys must be unique\n');
  });
});

describe('formatProblemLine and formatConfigWarnings', () => {
  const cases: { name: string; problem: Parameters<typeof formatProblemLine>[0]; line: string }[] = [
    { name: 'value-already-in-message', problem: { field: 'f', value: '1d', message: 'time: unknown unit "d" in duration "1d"' }, line: 'f: time: unknown unit "d" in duration "1d"' },
    { name: 'value-added', problem: { field: 'f', value: '-1Gi', message: 'negative', line: 2 }, line: 'f (line 2): negative (value: "-1Gi")' },
    { name: 'number-value-added', problem: { field: 'f', value: 7, message: 'bad' }, line: 'f: bad (value: 7)' },
    { name: 'map-value-left-out', problem: { field: 'f', value: { a: '1' }, message: 'bad' }, line: 'f: bad' },
    { name: 'no-field', problem: { field: '', value: undefined, message: 'x.yaml:1:1: broken' }, line: 'x.yaml:1:1: broken' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(formatProblemLine(tc.problem)).toBe(tc.line);
    });
  }
  test('warnings are one line each', () => {
    const cfg = parseConfigText('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 110\n', 'kubelet.yaml');
    expect(formatConfigWarnings(cfg.warnings)).toBe('warning: maxPods (line 3): ignored: only the eviction settings of a KubeletConfiguration are read (value: 110)\n');
    expect(formatConfigWarnings([])).toBe('');
  });
});
