// `featureGates` judged by the real kubelet of the pinned version and by the agent, map by map: the
// kubelet (KEA_KUBELET_BIN) is started on a KubeletConfiguration holding the map and a field its
// validation refuses (so it exits at once, on any host, right after setting its gates), and its
// verdict on the gates (accepted, or the errors it panics with) must be the agent's, message for
// message. Needs the kubelet binary only: no API server, no root, nothing left behind.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfigText } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { findRealNodeBinaries } from './harness/binaries.js';

const binaries = findRealNodeBinaries();
const skipReason = binaries.ok ? null : binaries.reason;
const required = process.env.KEA_E2E_REQUIRED === '1';

// Rejected by ValidateKubeletConfiguration, which runs after the gates are set (SetDefaults).
const STOP_FIELD = 'eventRecordQPS: -1\n';
const GATE_ERROR = /failed to merge global and in-flight KubeletConfiguration while setting defaults, error: (.*)$/m;

function kubeletConfig(gates: string): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${STOP_FIELD}featureGates:\n${gates}`;
}

/** The kubelet's verdict: null when it took the gates, else its error text. */
function kubeletVerdict(kubelet: string, gates: string): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'kea-gates-'));
  try {
    const file = join(dir, 'kubelet.yaml');
    writeFileSync(file, kubeletConfig(gates));
    const run = spawnSync(kubelet, ['--config', file, '--root-dir', join(dir, 'root'), '--kubeconfig', join(dir, 'absent.kubeconfig')], { encoding: 'utf8', timeout: 30_000 });
    const output = `${run.stdout}\n${run.stderr}`;
    const gateError = GATE_ERROR.exec(output);
    if (gateError !== null) return gateError[1] as string;
    // Past the gates, the stop field must be what ended it: otherwise the probe proved nothing.
    expect(output).toMatch(/eventRecordQPS/);
    expect(run.status).not.toBe(0);
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The agent's verdict: the gate problems' messages, or none. */
function agentVerdict(gates: string): string[] {
  try {
    parseConfigText(kubeletConfig(gates).replace(STOP_FIELD, ''), 'kubelet.yaml');
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems.filter((p) => p.field.startsWith('featureGates')).map((p) => p.message);
  }
}

const CASES: { name: string; gates: string; accepted: boolean }[] = [
  { name: 'HugepageAwareEviction off', gates: '  HugepageAwareEviction: false\n', accepted: true },
  { name: 'KubeletSeparateDiskGC off', gates: '  KubeletSeparateDiskGC: false\n', accepted: true },
  { name: 'the memory-backed volumes alpha gate on', gates: '  InPlacePodVerticalScalingMemoryBackedVolumes: true\n', accepted: true },
  {
    name: 'PodLevelResources off with its dependents',
    gates: '  PodLevelResources: false\n  InPlacePodLevelResourcesVerticalScaling: false\n  PodLevelResourcesFixDefaulting: false\n  PodLevelResourcesFixKubeletQOSClass: false\n',
    accepted: true,
  },
  { name: 'PodLevelResources off alone', gates: '  PodLevelResources: false\n', accepted: false },
  { name: 'an unknown gate', gates: '  HugePageAwareEviction: false\n', accepted: false },
  { name: 'a locked gate against its default', gates: '  InPlacePodVerticalScaling: false\n', accepted: false },
  { name: 'a GA gate at its locked value', gates: '  KubeletPSI: true\n', accepted: true },
  { name: 'AllAlpha on', gates: '  AllAlpha: true\n', accepted: false },
  { name: 'AllBeta off', gates: '  AllBeta: false\n', accepted: true },
  { name: 'AllAlpha on, AllBeta off, GenericWorkload on', gates: '  AllAlpha: true\n  AllBeta: false\n  GenericWorkload: true\n', accepted: false },
];

(skipReason === null || required ? describe : describe.skip)('featureGates: the real kubelet and the agent agree (needs KEA_KUBELET_BIN)', () => {
  if (skipReason !== null) {
    test('the kubelet binary is there', () => {
      throw new Error(`KEA_E2E_REQUIRED=1 but: ${skipReason}`);
    });
    return;
  }
  const kubelet = binaries.ok ? binaries.binaries.kubelet : '';
  for (const tc of CASES) {
    test(tc.name, () => {
      const fromKubelet = kubeletVerdict(kubelet, tc.gates);
      const fromAgent = agentVerdict(tc.gates);
      expect({ accepted: fromKubelet === null }).toEqual({ accepted: tc.accepted });
      if (fromKubelet === null) {
        expect(fromAgent).toEqual([]);
        return;
      }
      // The kubelet joins its errors as "[a, b]" in map order; every one must be the agent's, and nothing else.
      expect(fromAgent.length).toBeGreaterThan(0);
      let rest = fromKubelet;
      for (const message of fromAgent) {
        expect(rest).toContain(message);
        rest = rest.replace(message, '');
      }
      expect(rest.replace(/[[\], ]/g, '')).toBe('');
    });
  }
});

if (skipReason !== null && !required) console.log(`skipped featureGates against the real kubelet: ${skipReason}`);
