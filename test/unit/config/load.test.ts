// Loading configuration documents: the three accepted forms, the kubelet's defaulting rules,
// type checking with field paths and lines, unknown keys, YAML errors, and unreadable files.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DECISION_GATE_DEFAULTS } from '../../../src/api/feature-gates.js';
import { parseQuantity } from '../../../src/api/quantity.js';
import { percentageRatio, type ThresholdValue } from '../../../src/api/threshold.js';
import { defaultAgentSettings } from '../../../src/config/defaults.js';
import { loadConfigFile, parseConfigText } from '../../../src/config/load.js';
import { ConfigError, type ConfigProblem } from '../../../src/errors.js';

const FIXTURES = new URL('../../fixtures/config/', import.meta.url).pathname;
const q = (text: string): ThresholdValue => ({ kind: 'quantity', quantity: parseQuantity(text) });
const pct = (percent: number): ThresholdValue => ({ kind: 'percentage', ratio: percentageRatio(percent) });

/** The ConfigError a load throws (fails the test when it does not throw one). */
function loadError(text: string): ConfigError {
  try {
    parseConfigText(text, 'test.yaml');
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

function signals(text: string): string[] {
  return parseConfigText(text, 'test.yaml').eviction.thresholds.map((t) => `${t.gracePeriodMs === 0 ? 'hard' : 'soft'} ${t.signal}`);
}

const DEFAULT_SIGNALS = [
  'hard memory.available',
  'hard nodefs.available',
  'hard nodefs.inodesFree',
  'hard imagefs.available',
  'hard imagefs.inodesFree',
  'hard allocatableMemory.available',
];

describe('an empty document gives the kubelet\'s defaults', () => {
  const cases: { name: string; text: string }[] = [
    { name: 'empty-text', text: '' },
    { name: 'comments-only', text: '# nothing here\n' },
    { name: 'empty-map', text: '{}\n' },
    { name: 'null-document', text: '~\n' },
    { name: 'bare-document-marker', text: '---\n' },
    { name: 'null-fields-count-as-absent', text: 'evictionHard:\nevictionSoft: null\nenforceNodeAllocatable: ~\nlocalStorageCapacityIsolation:\n' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const cfg = parseConfigText(tc.text, 'test.yaml');
      expect(cfg.kind).toBe('AgentConfiguration');
      expect(cfg.eviction).toEqual({
        thresholds: [
          { signal: 'memory.available', value: q('100Mi'), gracePeriodMs: 0, minReclaim: null },
          { signal: 'nodefs.available', value: pct(10), gracePeriodMs: 0, minReclaim: null },
          { signal: 'nodefs.inodesFree', value: pct(5), gracePeriodMs: 0, minReclaim: null },
          { signal: 'imagefs.available', value: pct(15), gracePeriodMs: 0, minReclaim: null },
          { signal: 'imagefs.inodesFree', value: pct(5), gracePeriodMs: 0, minReclaim: null },
          { signal: 'allocatableMemory.available', value: q('100Mi'), gracePeriodMs: 0, minReclaim: null },
        ],
        pressureTransitionPeriodMs: 300_000,
        maxPodGracePeriodSeconds: 0,
        localStorageCapacityIsolation: true,
        kernelMemcgNotification: false,
        housekeepingIntervalMs: 10_000,
        featureGates: DECISION_GATE_DEFAULTS,
      });
      expect(cfg.thresholdSources.map((s) => s.origin)).toEqual(['default', 'default', 'default', 'default', 'default', 'allocatable-copy']);
      expect(cfg.agent).toEqual(defaultAgentSettings());
      expect(cfg.warnings).toEqual([]);
    });
  }
});

describe('evictionHard: replace, not merge', () => {
  test('an explicit empty map turns every default off', () => {
    expect(signals('evictionHard: {}\n')).toEqual([]);
  });
  test('a partial map replaces the defaults and says which ones it dropped', () => {
    const cfg = parseConfigText('evictionHard:\n  memory.available: 500Mi\n', 'test.yaml');
    expect(cfg.eviction.thresholds.map((t) => t.signal)).toEqual(['memory.available', 'allocatableMemory.available']);
    expect(cfg.warnings).toEqual([
      {
        field: 'evictionHard',
        value: { 'memory.available': '500Mi' },
        message:
          'replaces the default map, so nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree have no hard threshold; ' +
          'list them, or set mergeDefaultEvictionSettings: true to keep the defaults',
        line: 2,
      },
    ]);
  });
  test('a full map raises no warning', () => {
    const text = 'evictionHard:\n  memory.available: 1Gi\n  nodefs.available: 10%\n  nodefs.inodesFree: 5%\n  imagefs.available: 15%\n  imagefs.inodesFree: 5%\n';
    expect(parseConfigText(text, 'test.yaml').warnings).toEqual([]);
  });
  test('mergeDefaultEvictionSettings adds the missing defaults, and the file wins', () => {
    const cfg = parseConfigText('mergeDefaultEvictionSettings: true\nevictionHard:\n  memory.available: 500Mi\n  nodefs.available: 0%\n', 'test.yaml');
    // nodefs.available stays disabled: the file's 0% wins over the default 10%.
    expect(cfg.eviction.thresholds).toEqual([
      { signal: 'memory.available', value: q('500Mi'), gracePeriodMs: 0, minReclaim: null },
      { signal: 'nodefs.inodesFree', value: pct(5), gracePeriodMs: 0, minReclaim: null },
      { signal: 'imagefs.available', value: pct(15), gracePeriodMs: 0, minReclaim: null },
      { signal: 'imagefs.inodesFree', value: pct(5), gracePeriodMs: 0, minReclaim: null },
      { signal: 'allocatableMemory.available', value: q('500Mi'), gracePeriodMs: 0, minReclaim: null },
    ]);
    expect(cfg.thresholdSources.map((s) => [s.origin, s.merged])).toEqual([
      ['user', false],
      ['default', true],
      ['default', true],
      ['default', true],
      ['allocatable-copy', false],
    ]);
    expect(cfg.warnings).toEqual([]);
  });
  test('mergeDefaultEvictionSettings without evictionHard is the defaults', () => {
    expect(signals('mergeDefaultEvictionSettings: true\n')).toEqual(DEFAULT_SIGNALS);
  });
  test('soft thresholds have no defaults', () => {
    expect(signals('evictionSoftGracePeriod:\n  memory.available: 1m\n')).toEqual(DEFAULT_SIGNALS);
  });
});

describe('the other eviction fields follow the kubelet\'s defaulting', () => {
  const cases: { name: string; text: string; check: (cfg: ReturnType<typeof parseConfigText>) => unknown; expected: unknown }[] = [
    { name: 'transition-period-explicit-zero-becomes-5m', text: 'evictionPressureTransitionPeriod: 0s\n', check: (c) => c.eviction.pressureTransitionPeriodMs, expected: 300_000 },
    { name: 'transition-period-bare-zero-becomes-5m', text: 'evictionPressureTransitionPeriod: "0"\n', check: (c) => c.eviction.pressureTransitionPeriodMs, expected: 300_000 },
    { name: 'transition-period-set', text: 'evictionPressureTransitionPeriod: 1m30s\n', check: (c) => c.eviction.pressureTransitionPeriodMs, expected: 90_000 },
    { name: 'transition-period-negative-passed-through', text: 'evictionPressureTransitionPeriod: -1m\n', check: (c) => c.eviction.pressureTransitionPeriodMs, expected: -60_000 },
    { name: 'max-pod-grace-period-integer', text: 'evictionMaxPodGracePeriod: 30\n', check: (c) => c.eviction.maxPodGracePeriodSeconds, expected: 30 },
    { name: 'max-pod-grace-period-negative-passed-through', text: 'evictionMaxPodGracePeriod: -1\n', check: (c) => c.eviction.maxPodGracePeriodSeconds, expected: -1 },
    { name: 'local-storage-isolation-off', text: 'localStorageCapacityIsolation: false\n', check: (c) => c.eviction.localStorageCapacityIsolation, expected: false },
    { name: 'kernel-memcg-notification-on', text: 'kernelMemcgNotification: true\n', check: (c) => c.eviction.kernelMemcgNotification, expected: true },
    { name: 'housekeeping-interval', text: 'housekeepingInterval: 2s\n', check: (c) => [c.eviction.housekeepingIntervalMs, c.agent.housekeepingIntervalMs], expected: [2000, 2000] },
    { name: 'enforce-node-allocatable-empty-list-means-no-copies', text: 'enforceNodeAllocatable: []\n', check: (c) => c.eviction.thresholds.some((t) => t.signal === 'allocatableMemory.available'), expected: false },
    { name: 'enforce-node-allocatable-none', text: 'enforceNodeAllocatable: [none]\n', check: (c) => c.eviction.thresholds.length, expected: 5 },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(tc.check(parseConfigText(tc.text, 'test.yaml'))).toEqual(tc.expected);
    });
  }
  test('a negative transition period is accepted with a warning', () => {
    expect(parseConfigText('evictionPressureTransitionPeriod: -1m\n', 'test.yaml').warnings.map((w) => [w.field, w.line])).toEqual([['evictionPressureTransitionPeriod', 1]]);
  });
});

interface ProblemCase {
  readonly name: string;
  readonly text: string;
  readonly problems: readonly Partial<ConfigProblem>[];
}

// Wrong types and bad values: each problem names the field path, the raw value and the line.
const problemCases: ProblemCase[] = [
  {
    name: 'number-where-a-quantity-string-is-expected',
    text: 'evictionHard:\n  memory.available: 100\n',
    problems: [{ field: 'evictionHard["memory.available"]', value: 100, line: 2, message: 'must be a string such as "100Mi" or "10%", not the number 100 (quote it: "100")' }],
  },
  {
    name: 'null-signal-value',
    text: 'evictionHard:\n  memory.available:\n',
    problems: [{ field: 'evictionHard["memory.available"]', value: null, message: 'must be a string such as "100Mi" or "10%", not null' }],
  },
  {
    name: 'list-where-a-map-is-expected',
    text: 'evictionHard:\n  - memory.available: 100Mi\n',
    problems: [{ field: 'evictionHard', value: [{ 'memory.available': '100Mi' }], line: 2, message: 'must be a map, not a list' }],
  },
  {
    name: 'command-line-form-in-a-file',
    text: 'evictionHard: memory.available<100Mi,nodefs.available<10%\n',
    problems: [{ field: 'evictionHard', line: 1, message: 'must be a map of signal to value; the command-line form "memory.available<100Mi,nodefs.available<10%" is not accepted in a file' }],
  },
  {
    name: 'yes-is-not-a-boolean',
    text: 'kernelMemcgNotification: yes\n',
    problems: [{ field: 'kernelMemcgNotification', value: 'yes', line: 1, message: 'must be true or false, not the string "yes"' }],
  },
  {
    name: 'quoted-boolean',
    text: 'localStorageCapacityIsolation: "false"\n',
    problems: [{ field: 'localStorageCapacityIsolation', value: 'false', message: 'must be true or false, not the string "false"' }],
  },
  {
    name: 'int32-as-string',
    text: 'evictionMaxPodGracePeriod: "30"\n',
    problems: [{ field: 'evictionMaxPodGracePeriod', value: '30', line: 1, message: 'must be an integer, not the string "30"' }],
  },
  {
    name: 'int32-fraction',
    text: 'evictionMaxPodGracePeriod: 1.5\n',
    problems: [{ field: 'evictionMaxPodGracePeriod', value: 1.5, message: 'must be an integer, not the number 1.5' }],
  },
  {
    name: 'int32-float-literal',
    text: 'evictionMaxPodGracePeriod: 30.0\n',
    problems: [{ field: 'evictionMaxPodGracePeriod', value: 30, message: 'must be an integer, not the number 30.0' }],
  },
  {
    name: 'int32-overflow',
    text: 'evictionMaxPodGracePeriod: 2147483648\n',
    problems: [{ field: 'evictionMaxPodGracePeriod', value: 2147483648, message: 'must be between -2147483648 and 2147483647: 2147483648' }],
  },
  {
    name: 'duration-as-number',
    text: 'evictionPressureTransitionPeriod: 300\n',
    problems: [{ field: 'evictionPressureTransitionPeriod', value: 300, message: 'must be a string such as a Go duration like "30s", not the number 300 (quote it: "300")' }],
  },
  {
    name: 'duration-without-unit',
    text: 'evictionPressureTransitionPeriod: "300"\n',
    problems: [{ field: 'evictionPressureTransitionPeriod', value: '300', message: 'time: missing unit in duration "300"' }],
  },
  {
    name: 'grace-period-with-days',
    text: 'evictionSoft:\n  memory.available: 1Gi\nevictionSoftGracePeriod:\n  memory.available: 1d\n',
    problems: [{ field: 'evictionSoftGracePeriod["memory.available"]', value: '1d', line: 4, message: 'time: unknown unit "d" in duration "1d"' }],
  },
  {
    name: 'enforce-node-allocatable-as-string',
    text: 'enforceNodeAllocatable: pods\n',
    problems: [{ field: 'enforceNodeAllocatable', value: 'pods', message: 'must be a list of strings, not the string "pods"' }],
  },
  {
    name: 'enforce-node-allocatable-unknown-option',
    text: 'enforceNodeAllocatable:\n  - pods\n  - pod\n',
    problems: [
      {
        field: 'enforceNodeAllocatable[1]',
        value: 'pod',
        line: 3,
        message:
          'invalid configuration: option "pod" specified for enforceNodeAllocatable (--enforce-node-allocatable). ' +
          'Valid options are "pods", "system-reserved", "system-reserved-compressible", "kube-reserved", "kube-reserved-compressible", "none"',
      },
    ],
  },
  {
    name: 'enforce-node-allocatable-none-with-others',
    text: 'enforceNodeAllocatable: [none, pods]\n',
    problems: [{ field: 'enforceNodeAllocatable', message: 'invalid configuration: enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional enforcements when "none" is specified' }],
  },
  {
    name: 'unknown-top-level-key-with-suggestion',
    text: 'evictonHard:\n  memory.available: 1Gi\n',
    problems: [{ field: 'evictonHard', value: 'evictonHard', line: 1, message: 'unknown field "evictonHard"; did you mean evictionHard?' }],
  },
  {
    name: 'unknown-top-level-key-without-suggestion',
    text: 'foo: bar\n',
    problems: [{ field: 'foo', value: 'foo', line: 1, message: 'unknown field "foo"' }],
  },
  {
    name: 'kubelet-signal-error-with-line',
    text: 'evictionHard:\n  nodefs.available: 10%\n  mem.available: 100Mi\n',
    problems: [{ field: 'evictionHard["mem.available"]', value: '100Mi', line: 3, message: 'unsupported eviction signal mem.available' }],
  },
  {
    // Refused at once (before the bound, the reload that read it stalled the loop for 32 s).
    name: 'quantity-exponent-beyond-int64',
    text: 'evictionHard:\n  nodefs.available: 10%\n  memory.available: "1e400000000"\n',
    problems: [{ field: 'evictionHard["memory.available"]', value: '1e400000000', line: 3, message: 'quantity too large: at most 9223372036854775807 (2^63-1, the int64 a Kubernetes quantity\'s value is held in)' }],
  },
  {
    name: 'minimum-reclaim-beyond-int64',
    text: 'evictionHard:\n  memory.available: 100Mi\nevictionMinimumReclaim:\n  memory.available: 8Ei\n',
    problems: [{ field: 'evictionMinimumReclaim["memory.available"]', value: '8Ei', line: 4, message: expect.stringMatching(/^quantity too large/) as unknown as string }],
  },
  {
    name: 'proto-key-is-just-a-bad-signal',
    text: 'evictionHard:\n  __proto__: 1Gi\n',
    problems: [{ field: 'evictionHard["__proto__"]', value: '1Gi', line: 2, message: 'unsupported eviction signal __proto__' }],
  },
  {
    name: 'soft-without-grace-period-points-at-the-soft-entry',
    text: 'evictionSoft:\n  memory.available: 1Gi\n',
    problems: [{ field: 'evictionSoft["memory.available"]', value: '1Gi', line: 2, message: 'grace period must be specified for the soft eviction threshold memory.available' }],
  },
  {
    name: 'root-is-a-list',
    text: '- evictionHard: {}\n',
    problems: [{ field: '', message: 'test.yaml: the document must be a map of configuration fields, not a list' }],
  },
  {
    name: 'root-is-a-scalar',
    text: 'hello\n',
    problems: [{ field: '', message: 'test.yaml: the document must be a map of configuration fields, not a single value' }],
  },
  {
    name: 'unknown-alias',
    text: 'evictionSoft: *nowhere\n',
    problems: [{ field: '', value: '*nowhere', line: 1, message: 'test.yaml: unknown alias *nowhere' }],
  },
];

describe('problems carry the field path, the raw value and the line', () => {
  for (const tc of problemCases) {
    test(tc.name, () => {
      const err = loadError(tc.text);
      expect(err.code).toBe('EVA_ERR_CONFIG_INVALID');
      expect(err.problems).toHaveLength(tc.problems.length);
      tc.problems.forEach((expected, i) => expect(err.problems[i]).toMatchObject(expected));
    });
  }

  test('every problem of a file is reported at once', () => {
    const text = [
      'evictonHard: {}', // 1: unknown field
      'evictionHard:',
      '  memory.available: 0', // 3: not positive
      '  nodefs.available: 10', // 4: a number
      'evictionMaxPodGracePeriod: "x"', // 5: not an integer
      'observe:',
      '  cgroupRot: /sys/fs/cgroup', // 7: unknown field
      'server:',
      '  port: 70000', // 9: out of range
      '',
    ].join('\n');
    const err = loadError(text);
    // In file order, whatever order they were found in.
    expect(err.problems.map((p) => [p.field, p.line])).toEqual([
      ['evictonHard', 1],
      ['evictionHard["memory.available"]', 3],
      ['evictionHard["nodefs.available"]', 4],
      ['evictionMaxPodGracePeriod', 5],
      ['observe.cgroupRot', 7],
      ['server.port', 9],
    ]);
  });

  test('aliases are followed', () => {
    const cfg = parseConfigText('evictionHard: &t\n  memory.available: 1Gi\nevictionSoft: *t\nevictionSoftGracePeriod:\n  memory.available: 1m\n', 'test.yaml');
    expect(cfg.eviction.thresholds.map((t) => [t.signal, t.gracePeriodMs])).toEqual([
      ['memory.available', 0],
      ['memory.available', 60_000],
      ['allocatableMemory.available', 0],
    ]);
  });
});

describe('YAML errors name the line', () => {
  test('syntax-error-fixture', async () => {
    const path = join(FIXTURES, 'syntax-error.yaml');
    const err = await loadConfigFile(path).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('EVA_ERR_CONFIG_YAML');
    const [first] = (err as ConfigError).problems;
    expect(first).toEqual({ field: '', value: undefined, line: 4, message: `${path}:4:21: Nested mappings are not allowed in compact mappings` });
  });
  test('duplicate-signal', () => {
    const err = loadError('evictionHard:\n  memory.available: 100Mi\n  nodefs.available: 10%\n  memory.available: 200Mi\n');
    expect(err.code).toBe('EVA_ERR_CONFIG_YAML');
    expect(err.problems).toEqual([{ field: '', value: undefined, line: 4, message: 'test.yaml:4:3: Map keys must be unique' }]);
  });
  test('duplicate-top-level-key', () => {
    const err = loadError('kernelMemcgNotification: true\nkernelMemcgNotification: false\n');
    expect(err.code).toBe('EVA_ERR_CONFIG_YAML');
    expect(err.problems[0]?.line).toBe(2);
  });
  test('tab-indentation', () => {
    const err = loadError('evictionHard:\n  memory.available: 1Gi\n\tnodefs.available: 10%\n');
    expect(err.problems).toEqual([{ field: '', value: undefined, line: 3, message: 'test.yaml:3:1: Tabs are not allowed as indentation' }]);
  });
  test('bad-indentation', () => {
    const err = loadError('evictionHard:\n  memory.available: 1Gi\n nodefs.available: 10%\n');
    expect(err.code).toBe('EVA_ERR_CONFIG_YAML');
    expect(err.problems[0]?.line).toBe(3);
  });
  test('several-documents', () => {
    const err = loadError('evictionHard: {}\n---\nevictionSoft: {}\n');
    expect(err.code).toBe('EVA_ERR_CONFIG_YAML');
    expect(err.problems).toEqual([{ field: '', value: undefined, line: 2, message: 'test.yaml:2:1: a configuration file holds one YAML document, this one holds 2' }]);
  });
});

describe('apiVersion and kind', () => {
  test('an AgentConfiguration with its apiVersion', () => {
    expect(parseConfigText('apiVersion: kube-eviction-agent.io/v1alpha1\nkind: AgentConfiguration\n', 'test.yaml').kind).toBe('AgentConfiguration');
  });
  test('a KubeletConfiguration with its apiVersion', () => {
    expect(parseConfigText('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n', 'test.yaml').kind).toBe('KubeletConfiguration');
  });
  const cases: { name: string; text: string; problem: Partial<ConfigProblem> }[] = [
    {
      name: 'wrong-api-version-for-kind',
      text: 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: AgentConfiguration\n',
      problem: { field: 'apiVersion', line: 1, message: 'unsupported apiVersion "kubelet.config.k8s.io/v1beta1" for kind AgentConfiguration: expected kube-eviction-agent.io/v1alpha1' },
    },
    {
      name: 'old-kubelet-api-version',
      text: 'apiVersion: kubelet.config.k8s.io/v1alpha1\nkind: KubeletConfiguration\n',
      problem: { field: 'apiVersion', message: 'unsupported apiVersion "kubelet.config.k8s.io/v1alpha1" for kind KubeletConfiguration: expected kubelet.config.k8s.io/v1beta1' },
    },
    {
      name: 'kind-without-api-version',
      text: 'kind: KubeletConfiguration\n',
      problem: { field: 'apiVersion', line: 1, message: 'is required with kind KubeletConfiguration: kubelet.config.k8s.io/v1beta1' },
    },
    {
      name: 'api-version-without-kind',
      text: 'apiVersion: kube-eviction-agent.io/v1alpha1\n',
      problem: { field: 'kind', line: 1 },
    },
    {
      name: 'unknown-kind',
      text: 'apiVersion: v1\nkind: ConfigMap\n',
      problem: { field: 'kind', value: 'ConfigMap', line: 2 },
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const err = loadError(tc.text);
      expect(err.problems).toHaveLength(1);
      expect(err.problems[0]).toMatchObject(tc.problem);
    });
  }
});

describe('a KubeletConfiguration file', () => {
  test('kubelet-config-fixture: eviction fields used, the rest listed as ignored', async () => {
    const cfg = await loadConfigFile(join(FIXTURES, 'kubelet-config.yaml'));
    expect(cfg.kind).toBe('KubeletConfiguration');
    expect(cfg.eviction).toEqual({
      thresholds: [
        { signal: 'memory.available', value: q('200Mi'), gracePeriodMs: 0, minReclaim: q('100Mi') },
        { signal: 'nodefs.available', value: pct(10), gracePeriodMs: 0, minReclaim: q('1Gi') },
        { signal: 'imagefs.available', value: pct(15), gracePeriodMs: 0, minReclaim: null },
        { signal: 'memory.available', value: q('500Mi'), gracePeriodMs: 90_000, minReclaim: q('100Mi') },
        { signal: 'nodefs.available', value: pct(15), gracePeriodMs: 120_000, minReclaim: q('1Gi') },
        { signal: 'allocatableMemory.available', value: q('200Mi'), gracePeriodMs: 0, minReclaim: q('100Mi') },
      ],
      // kubeadm writes 0s, which the kubelet turns into 5m.
      pressureTransitionPeriodMs: 300_000,
      maxPodGracePeriodSeconds: 60,
      localStorageCapacityIsolation: true,
      kernelMemcgNotification: false,
      housekeepingIntervalMs: 10_000,
      featureGates: DECISION_GATE_DEFAULTS,
    });
    // The kubelet's own settings (its cgroupDriver included) do not configure the agent.
    expect(cfg.agent).toEqual(defaultAgentSettings());

    const ignored = cfg.warnings.filter((w) => w.message.startsWith('ignored'));
    expect(ignored.map((w) => w.field)).toEqual([
      'authentication',
      'authorization',
      'cgroupDriver',
      'clusterDNS',
      'clusterDomain',
      'containerRuntimeEndpoint',
      'cpuManagerReconcilePeriod',
      'fileCheckFrequency',
      'healthzBindAddress',
      'healthzPort',
      'httpCheckFrequency',
      'imageMaximumGCAge',
      'imageMinimumGCAge',
      'kubeReserved',
      'logging',
      'memorySwap',
      'nodeStatusReportFrequency',
      'nodeStatusUpdateFrequency',
      'resolvConf',
      'rotateCertificates',
      'runtimeRequestTimeout',
      'shutdownGracePeriod',
      'shutdownGracePeriodCriticalPods',
      'staticPodPath',
      'streamingConnectionIdleTimeout',
      'syncFrequency',
      'systemReserved',
      'volumeStatsAggPeriod',
    ]);
    expect(ignored.find((w) => w.field === 'cgroupDriver')).toEqual({
      field: 'cgroupDriver',
      value: 'systemd',
      line: 17,
      message: 'ignored: only the eviction settings of a KubeletConfiguration are read',
    });
    // Its partial evictionHard drops two defaults, exactly as it does in the kubelet.
    expect(cfg.warnings.find((w) => w.field === 'evictionHard')?.message).toMatch(/^replaces the default map, so nodefs\.inodesFree, imagefs\.inodesFree have no hard threshold/);
  });

  test('agent sections in a kubelet file are ignored, not errors', () => {
    const cfg = parseConfigText('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nserver:\n  port: 1\n', 'test.yaml');
    expect(cfg.agent.server.port).toBe(8080);
    expect(cfg.warnings.map((w) => w.field)).toEqual(['server']);
  });

  test('a misspelt eviction field is pointed out', () => {
    const cfg = parseConfigText('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionSofts:\n  memory.available: 1Gi\n', 'test.yaml');
    expect(cfg.warnings).toEqual([
      { field: 'evictionSofts', value: { 'memory.available': '1Gi' }, line: 3, message: 'ignored: not a kubelet eviction setting; did you mean evictionSoft?' },
    ]);
  });

  test('its eviction fields are checked as strictly as in an AgentConfiguration', () => {
    const err = loadError('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard:\n  memory.available: 100\n');
    expect(err.problems.map((p) => [p.field, p.line])).toEqual([['evictionHard["memory.available"]', 4]]);
  });
});

describe('reading files', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kea-config-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('a missing file is EVA_ERR_CONFIG_READ', async () => {
    const path = join(dir, 'missing.yaml');
    await expect(loadConfigFile(path)).rejects.toMatchObject({ code: 'EVA_ERR_CONFIG_READ', problems: [{ field: '', value: path }] });
  });
  test('a directory is EVA_ERR_CONFIG_READ', async () => {
    await expect(loadConfigFile(dir)).rejects.toMatchObject({ code: 'EVA_ERR_CONFIG_READ' });
  });
  test('an empty file gives the defaults', async () => {
    const path = join(dir, 'empty.yaml');
    writeFileSync(path, '');
    expect((await loadConfigFile(path)).eviction.thresholds).toHaveLength(6);
  });
});
