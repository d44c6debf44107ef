// `featureGates` read as the pinned kubelet reads it: the decision gates in force for each map,
// the kubelet's own errors (unknown gate, locked gate, a dependency turned off) and warnings
// (GA or deprecated gates set), AllAlpha/AllBeta, and both documents accepting the field.

import { DECISION_GATES, DECISION_GATE_DEFAULTS, KUBELET_VERSION_FOLLOWED } from '../../../src/api/feature-gates.js';
import { formatFeatureGates } from '../../../src/config/feature-gate-table.js';
import { KUBELET_FEATURE_GATES, KUBELET_FEATURE_GATES_VERSION } from '../../../src/config/kubelet-feature-gates.js';
import { parseConfigText } from '../../../src/config/load.js';
import { ConfigError } from '../../../src/errors.js';

const KUBELET_HEADER = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';

function problems(text: string): string[] {
  try {
    parseConfigText(text, 'test.yaml');
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.field}: ${p.message}`);
    throw err;
  }
  throw new Error('expected a ConfigError');
}

// The gates the kubelet refuses to see disabled while PodLevelResources-dependent beta gates are on.
const POD_LEVEL_DEPENDENTS_OFF = '  InPlacePodLevelResourcesVerticalScaling: false\n  PodLevelResourcesFixDefaulting: false\n  PodLevelResourcesFixKubeletQOSClass: false\n';

describe('the decision gates in force', () => {
  const cases: { name: string; gates: string; expected: Partial<Record<(typeof DECISION_GATES)[number], boolean>> }[] = [
    { name: 'no featureGates: the followed kubelet\'s defaults', gates: '', expected: {} },
    { name: 'HugepageAwareEviction off', gates: 'featureGates:\n  HugepageAwareEviction: false\n', expected: { HugepageAwareEviction: false } },
    { name: 'KubeletSeparateDiskGC off', gates: 'featureGates:\n  KubeletSeparateDiskGC: false\n', expected: { KubeletSeparateDiskGC: false } },
    { name: 'PodLevelResources off with the gates that depend on it', gates: `featureGates:\n  PodLevelResources: false\n${POD_LEVEL_DEPENDENTS_OFF}`, expected: { PodLevelResources: false } },
    { name: 'the alpha memory-backed volumes gate on', gates: 'featureGates:\n  InPlacePodVerticalScalingMemoryBackedVolumes: true\n', expected: { InPlacePodVerticalScalingMemoryBackedVolumes: true } },
    // GenericWorkload (beta, off) too: alpha gates that AllAlpha turns on depend on it.
    { name: 'AllAlpha turns on every alpha gate not named', gates: 'featureGates:\n  AllAlpha: true\n  GenericWorkload: true\n', expected: { InPlacePodVerticalScalingMemoryBackedVolumes: true } },
    {
      name: 'AllBeta off turns off every beta gate not named, a named one stays on',
      gates: 'featureGates:\n  AllBeta: false\n  KubeletSeparateDiskGC: true\n',
      expected: { HugepageAwareEviction: false, PodLevelResources: false },
    },
    { name: 'a gate set to its default', gates: 'featureGates:\n  HugepageAwareEviction: true\n', expected: {} },
    { name: 'an empty map', gates: 'featureGates: {}\n', expected: {} },
  ];
  for (const tc of cases) {
    for (const [kind, header] of [['AgentConfiguration', ''], ['KubeletConfiguration', KUBELET_HEADER]] as const) {
      test(`${tc.name} (${kind})`, () => {
        const cfg = parseConfigText(`${header}${tc.gates}`, 'test.yaml');
        expect(cfg.eviction.featureGates).toEqual({ ...DECISION_GATE_DEFAULTS, ...tc.expected });
        // Not listed among the KubeletConfiguration's ignored fields: the agent reads it.
        expect(cfg.warnings.map((w) => w.field)).not.toContain('featureGates');
      });
    }
  }
});

describe('the kubelet\'s errors and warnings', () => {
  const cases: { name: string; gates: string; problem: string }[] = [
    { name: 'an unknown gate', gates: '  HugePageAwareEviction: false\n', problem: 'featureGates["HugePageAwareEviction"]: unrecognized feature gate: HugePageAwareEviction' },
    { name: 'a gate of another component only', gates: '  NoSuchGate: true\n', problem: 'featureGates["NoSuchGate"]: unrecognized feature gate: NoSuchGate' },
    { name: 'a locked GA gate set away from its default', gates: '  InPlacePodVerticalScaling: false\n', problem: 'featureGates["InPlacePodVerticalScaling"]: cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to true' },
    { name: 'AllAlpha alone: alpha gates it turns on depend on a beta gate left off', gates: '  AllAlpha: true\n', problem: 'featureGates: WorkloadWithJob is enabled, but depends on features that are disabled: [GenericWorkload]' },
    {
      name: 'PodLevelResources off alone: gates on by default depend on it',
      gates: '  PodLevelResources: false\n',
      problem: 'featureGates: InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that are disabled: [PodLevelResources]',
    },
    { name: 'a string for a boolean', gates: '  HugepageAwareEviction: "false"\n', problem: 'featureGates["HugepageAwareEviction"]: must be true or false, not the string "false"' },
    { name: 'null', gates: '  HugepageAwareEviction:\n', problem: 'featureGates["HugepageAwareEviction"]: must be true or false, not null' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(problems(`${KUBELET_HEADER}featureGates:\n${tc.gates}`)).toContain(tc.problem);
    });
  }

  test('the map itself must be a map', () => {
    expect(problems('featureGates: [HugepageAwareEviction]\n').join('\n')).toMatch(/^featureGates: /);
  });

  test('setting a GA gate (to its locked value) is accepted with the kubelet\'s warning', () => {
    const cfg = parseConfigText(`${KUBELET_HEADER}featureGates:\n  InPlacePodVerticalScaling: true\n`, 'test.yaml');
    expect(cfg.warnings).toContainEqual(expect.objectContaining({ field: 'featureGates["InPlacePodVerticalScaling"]', message: 'setting GA feature gate. It will be removed in a future release.' }));
  });
});

describe('the generated table of the kubelet\'s gates', () => {
  test('is the followed kubelet\'s, and its decision gate defaults are the ones the agent uses', () => {
    expect(KUBELET_FEATURE_GATES_VERSION).toBe(KUBELET_VERSION_FOLLOWED);
    for (const name of DECISION_GATES) expect({ name, default: KUBELET_FEATURE_GATES[name]?.default }).toEqual({ name, default: DECISION_GATE_DEFAULTS[name] });
    // The kubelet registers the Kubernetes gates, client-go's and the logging options'.
    for (const name of ['HugepageAwareEviction', 'WatchListClient', 'LoggingBetaOptions', 'AllAlpha', 'AllBeta']) expect(Object.keys(KUBELET_FEATURE_GATES)).toContain(name);
    // HugepageAwareEviction first appears in 1.37: a 1.36 kubelet refuses the gate as unknown.
    expect(KUBELET_FEATURE_GATES.HugepageAwareEviction?.history).toBe('1.37 beta on');
  });
});

describe('check-config\'s gate table', () => {
  test('every decision gate with its value and origin; other gates set are listed apart', () => {
    const cfg = parseConfigText(`${KUBELET_HEADER}featureGates:\n  HugepageAwareEviction: false\n  AllAlpha: true\n  GenericWorkload: true\n  KubeletPSI: true\n`, 'test.yaml');
    const text = formatFeatureGates(cfg.eviction);
    expect(text).toContain(`kubelet ${KUBELET_VERSION_FOLLOWED}`);
    expect(text).toMatch(/HugepageAwareEviction\s+false\s+set in the file/);
    expect(text).toMatch(/InPlacePodVerticalScalingMemoryBackedVolumes\s+true\s+AllAlpha/);
    expect(text).toMatch(/KubeletSeparateDiskGC\s+true\s+default \(beta\)/);
    expect(text).toMatch(/PodLevelResources\s+true\s+default \(beta\)/);
    expect(text).toContain('consulted by no eviction decision): AllAlpha=true, GenericWorkload=true, KubeletPSI=true');
  });
});
