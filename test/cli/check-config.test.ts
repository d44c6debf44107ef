// `check-config` as an operator runs it: the effective thresholds of a valid file, every problem
// of an invalid one, and the exit status. The tables run the command in process; the shipped
// kubelet file, a YAML syntax error and a missing file go through the built command line.

import { join } from 'node:path';
import { checkConfigText, checkConfigTextThroughCli, REPO_ROOT, runCli } from './run-cli.js';

describe('check-config', () => {
  test('a valid file prints the effective thresholds, defaults and allocatable copies included', async () => {
    const result = await checkConfigText('evictionSoft:\n  memory.available: 1Gi\nevictionSoftGracePeriod:\n  memory.available: 30s\nmergeDefaultEvictionSettings: true\nevictionHard:\n  memory.available: 500Mi\n');
    expect(result.status).toBe(0);
    for (const expected of ['memory.available', 'allocatableMemory.available', 'nodefs.available', 'imagefs.inodesFree', '500Mi', '1Gi', '30s', '10%']) {
      expect(result.stdout).toContain(expected);
    }
  });

  test('the feature gates in force are printed; an unknown gate fails as the kubelet fails', async () => {
    const kubelet = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';
    const valid = await checkConfigText(`${kubelet}featureGates:\n  HugepageAwareEviction: false\n`);
    expect(valid.status).toBe(0);
    expect(valid.stdout).toContain('feature gates that change a decision (kubelet v1.37.2):');
    expect(valid.stdout).toMatch(/HugepageAwareEviction\s+false\s+set in the file/);
    expect(valid.stdout).toMatch(/PodLevelResources\s+true\s+default \(beta\)/);
    const unknown = await checkConfigText(`${kubelet}featureGates:\n  HugePageAwareEviction: false\n`);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('unrecognized feature gate: HugePageAwareEviction');
  });

  test('the PSI node conditions: off by default; on, the settings and whether this host can have them', async () => {
    expect((await checkConfigText('')).stdout).toContain('PSI node conditions: off (psiConditions.enabled is false)\n');
    const on = await checkConfigText('psiConditions:\n  enabled: true\n  io:\n    enabled: false\n');
    expect(on.status).toBe(0);
    expect(on.stdout).toContain('PSI node conditions: on, the "full" line of the pods\' cgroup: memory avg10 >= 10% and avg60 >= 10%; I/O off\n');
    expect(on.stdout).toContain('  conditions: kube-eviction-agent.io/KubepodsMemoryContentionPressure\n');
    // This machine runs cgroup v1; a cgroup v2 host with PSI says "available".
    expect(on.stdout).toMatch(/\n {2}on this host: (available \(.*memory\.pressure, .*io\.pressure\)|NOT AVAILABLE, none will be reported: .+)\n/);
  });

  test('psiConditions: a bad threshold names its field and line', async () => {
    const result = await checkConfigText('psiConditions:\n  memory:\n    avg10Threshold: 150\n  cpu:\n    avg10Threshold: 5\n');
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/psiConditions\.memory\.avg10Threshold.*3.*must be above 0 and at most 100: 150/);
    expect(result.stderr).toMatch(/psiConditions\.cpu.*is not supported: CPU pressure also rises when a pod is throttled/);
  });

  test('the shipped kubelet configuration is accepted, its other fields listed as ignored', () => {
    const result = runCli(['check-config', join(REPO_ROOT, 'examples/config/kubelet-config.yaml')]);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/KubeletConfiguration/);
    expect(result.stdout).toMatch(/ignored/i);
  });

  // Every error case of the kubelet's ParseThresholdConfig, each with the kubelet's wording.
  const invalid: { name: string; yaml: string; message: RegExp }[] = [
    { name: 'invalid-signal', yaml: 'evictionHard:\n  mem.available: 1Gi\n', message: /evictionHard\["mem\.available"\].*unsupported eviction signal mem\.available/ },
    { name: 'soft-no-grace-period', yaml: 'evictionSoft:\n  memory.available: 1Gi\n', message: /grace period must be specified for the soft eviction threshold memory\.available/ },
    { name: 'neg-threshold-percent', yaml: 'evictionHard:\n  memory.available: "-5%"\n', message: /eviction percentage threshold memory\.available must be >= 0%: -5%/ },
    { name: 'over-100-percent', yaml: 'evictionHard:\n  memory.available: "150%"\n', message: /eviction percentage threshold memory\.available must be <= 100%: 150%/ },
    { name: 'invalid-percent', yaml: 'evictionHard:\n  memory.available: "foo%"\n', message: /evictionHard\["memory\.available"\]/ },
    { name: 'zero-quantity', yaml: 'evictionHard:\n  memory.available: "0"\n', message: /eviction threshold memory\.available must be positive: 0/ },
    { name: 'negative-quantity', yaml: 'evictionHard:\n  memory.available: "-1Gi"\n', message: /eviction threshold memory\.available must be positive/ },
    { name: 'invalid-quantity', yaml: 'evictionHard:\n  memory.available: "100MB"\n', message: /quantities must match the regular expression/ },
    { name: 'invalid-grace-period', yaml: 'evictionSoft:\n  memory.available: 1Gi\nevictionSoftGracePeriod:\n  memory.available: soon\n', message: /evictionSoftGracePeriod\["memory\.available"\]/ },
    { name: 'neg-grace-period', yaml: 'evictionSoft:\n  memory.available: 1Gi\nevictionSoftGracePeriod:\n  memory.available: -1s\n', message: /invalid eviction grace period specified: -1s, must be a positive value/ },
    { name: 'grace-period-invalid-signal', yaml: 'evictionSoftGracePeriod:\n  mem.available: 30s\n', message: /unsupported eviction signal mem\.available/ },
    { name: 'neg-reclaim', yaml: 'evictionMinimumReclaim:\n  memory.available: "-300Mi"\n', message: /negative eviction minimum reclaim specified for memory\.available/ },
    { name: 'zero-percent-reclaim', yaml: 'evictionMinimumReclaim:\n  memory.available: "0%"\n', message: /eviction percentage minimum reclaim memory\.available must be positive: 0%/ },
    { name: 'reclaim-invalid-signal', yaml: 'evictionMinimumReclaim:\n  mem.available: 1Gi\n', message: /unsupported eviction signal mem\.available/ },
    { name: 'unknown-top-level-key', yaml: 'evictonHard:\n  memory.available: 1Gi\n', message: /evictonHard/ },
    { name: 'yaml-syntax-error-names-the-line', yaml: 'evictionHard:\n  memory.available: 1Gi\n bad: [\n', message: /config\.yaml:3:\d+: /i },
  ];
  test('through the command line: an invalid file exits 1 and names the line', async () => {
    const result = await checkConfigTextThroughCli('evictionHard:\n  memory.available: 1Gi\n bad: [\n');
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/config\.yaml:3:\d+: /);
  });

  for (const tc of invalid) {
    test(`rejects ${tc.name}`, async () => {
      const result = await checkConfigText(tc.yaml);
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(tc.message);
    });
  }

  test('every problem in a file is reported, not only the first', async () => {
    const result = await checkConfigText('evictionHard:\n  mem.available: 1Gi\n  nodefs.available: "0"\nevictionSoft:\n  memory.available: 1Gi\n');
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/3 problems/);
    expect(result.stderr).toMatch(/unsupported eviction signal mem\.available/);
    expect(result.stderr).toMatch(/eviction threshold nodefs\.available must be positive: 0/);
    expect(result.stderr).toMatch(/grace period must be specified/);
  });

  test('0% and 100% disable a threshold instead of failing', async () => {
    const result = await checkConfigText('evictionHard:\n  memory.available: 100Mi\n  nodefs.available: "0%"\nevictionSoft:\n  nodefs.inodesFree: "100%"\n');
    expect(result.status).toBe(0);
    expect(result.stdout).not.toMatch(/nodefs\.available/);
  });

  // Valid, as the kubelet takes them, but one character from the disabling "100%": said first, loudly.
  test('a threshold met on every pass is called out before the table, with its field and line; the file stays valid', async () => {
    const result = await checkConfigText('evictionHard:\n  memory.available: "100.0%"\n  nodefs.available: "99.95%"\n  imagefs.available: "100%"\n');
    expect(result.status).toBe(0);
    const [heading, first, second] = result.stdout.split('\n').slice(2);
    expect(heading).toBe('WARNING: 2 thresholds are met on (nearly) every pass: pods would be evicted continuously');
    expect(first).toMatch(/^ {2}! evictionHard\["memory\.available"\] \(line 2\): "100\.0%" is the whole capacity: the threshold is met on \(nearly\) every pass, so pods are evicted for memory\.available continuously\. Only the exact "100%" disables a threshold/);
    expect(second).toMatch(/^ {2}! evictionHard\["nodefs\.available"\] \(line 3\): "99\.95%" is within 0\.1% of the whole capacity/);
    expect(result.stdout).toMatch(/memory\.available +hard +100\.0% .*user; MET ON \(NEARLY\) EVERY PASS/);
    // The exact "100%" disables, without a word.
    expect(result.stdout).not.toMatch(/imagefs\.available/);
  });

  test('"0.0%" is a warning: kept, and never met', async () => {
    const result = await checkConfigText('evictionHard:\n  memory.available: 100Mi\n  pid.available: "0.0%"\n');
    expect(result.status).toBe(0);
    expect(result.stdout).not.toMatch(/WARNING/);
    expect(result.stdout).toMatch(/warnings:\n(.*\n)* {2}evictionHard\["pid\.available"\] \(line 3\): "0\.0%" is a threshold of zero, never met; unlike the exact "0%"/);
  });

  test('a quantity beyond 2^63-1 is refused at once, with its field and line', async () => {
    // Before the bound this took 32 s and ended in a bare "Maximum BigInt size exceeded".
    const result = await checkConfigText('evictionHard:\n  memory.available: "1e400000000"\n');
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/evictionHard\["memory\.available"\] \(line 2\): quantity too large: at most 9223372036854775807/);
  });

  test('a missing file is an error', () => {
    const result = runCli(['check-config', '/nonexistent/kea.yaml']);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/cannot be read|ENOENT|no such file/i);
  });
});
