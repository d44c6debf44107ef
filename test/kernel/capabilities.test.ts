// The agent's capabilities on the real kernel: every host-facing feature run from the compiled
// tree under capsh with exactly the DaemonSet's capabilities works, and with one of them taken away
// the feature that needs it fails with a coded one-sentence message naming it, never a stack trace,
// while the others still work. Needs root, capsh, setpriv and the cgroup v1 memory and freezer
// hierarchies; builds nothing (it runs the repository's dist/, which `npm test` builds first).

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { agentContainer, loadManifest } from '../deploy/manifest.js';
import { capabilityCheckUnavailable, REPO_ROOT, runWithCapabilities, STACK_FRAME, type CapabilityRun } from '../helpers/capability-check.js';

const DIST = join(REPO_ROOT, 'dist');
const unavailable = capabilityCheckUnavailable() ?? (existsSync(join(DIST, 'src', 'main.js')) ? null : 'dist/ is not built (npm run build)');
const required = process.env.KEA_E2E_REQUIRED === '1' && process.env.KEA_CAPABILITY_SET === undefined;
const daemonSetCapabilities = (agentContainer(loadManifest()).securityContext as { capabilities: { add: string[] } }).capabilities.add;

function skipped(name: string): boolean {
  if (unavailable === null) return false;
  if (required) throw new Error(`KEA_E2E_REQUIRED=1 but the capability check cannot run: ${unavailable}`);
  console.log(`skipped: ${name}: ${unavailable}`);
  return true;
}

function describeRun(run: CapabilityRun): string {
  return `exit ${run.status}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
}

const okSteps = (run: CapabilityRun): string[] => Object.entries(run.results).filter(([, r]) => r.ok).map(([name]) => name).sort();
const codedLines = (run: CapabilityRun): string[] => run.log.filter((l) => l.code === 'EVA_ERR_CAPABILITY').map((l) => l.msg);

const EVERY_STEP = ['freeze', 'memcg-threshold', 'observe', 'oom-score-adj', 'psi-trigger', 'read-proc-cgroup', 'start', 'terminate'];

test('the DaemonSet adds exactly CAP_KILL and CAP_DAC_READ_SEARCH', () => {
  expect([...daemonSetCapabilities].sort()).toEqual(['DAC_READ_SEARCH', 'KILL']);
});

test("with exactly the DaemonSet's capabilities every feature works; only oom_score_adj below -997 is refused, naming CAP_SYS_RESOURCE (root, capsh, cgroup v1)", async () => {
  if (skipped('the DaemonSet\'s set')) return;
  const run = await runWithCapabilities({ distRoot: DIST, nodeBin: process.execPath, capabilities: daemonSetCapabilities });
  expect(run.status === 0 ? '' : describeRun(run)).toBe('');
  expect(run.stderr).toContain(`running with ${daemonSetCapabilities.map((c) => `cap_${c.toLowerCase()}`).join(',')}`);
  expect(okSteps(run)).toEqual(EVERY_STEP.filter((s) => s !== 'oom-score-adj'));
  // The pod process of another user was killed, its volume measured (64 KiB file, directory blocks).
  expect(run.otherUserProcessSurvived).toBe(false);
  expect(run.results.observe?.volumeBytes).toBeGreaterThanOrEqual(64 * 1024);
  expect(run.results.observe?.problems).toEqual([]);
  // Without CAP_SYS_RESOURCE the kernel takes only 2 s multiples as a PSI window.
  expect(run.results['psi-trigger']?.windowMs).toBe(2000);
  expect(codedLines(run)).toEqual([expect.stringMatching(/^Setting oom_score_adj to -999 was refused \(EACCES\): this needs CAP_SYS_RESOURCE, which the agent's container lacks; it stays at -?\d+$/)]);
  expect(`${run.stdout}${run.stderr}`).not.toMatch(STACK_FRAME);
}, 120_000);

interface OneFewer {
  readonly drop: string;
  readonly failing: string[];
  readonly messages: RegExp[];
  readonly survives: boolean;
}

const oneFewer: OneFewer[] = [
  {
    drop: 'KILL',
    failing: ['start', 'terminate'],
    messages: [
      /^Local termination \(actions\.localTermination\) cannot signal pod processes that run as another user: this needs CAP_KILL, which the agent's container lacks; /,
      /^Signalling 1 process\(es\) of pod "capabilities\/victim" \(19 characters\) was refused \(EPERM\): this needs CAP_KILL, which the agent's container lacks; the pod is left to the API server and the kubelet$/,
    ],
    survives: true,
  },
  {
    drop: 'DAC_READ_SEARCH',
    failing: ['observe', 'start'],
    messages: [/^The disk usage of pod volumes, logs and writable layers that another user owns cannot be measured: this needs CAP_DAC_READ_SEARCH, which the agent's container lacks; /],
    survives: false,
  },
];

for (const tc of oneFewer) {
  test(`without CAP_${tc.drop}, the feature that needs it fails with a coded sentence naming it, and every other feature still works (root, capsh, cgroup v1)`, async () => {
    if (skipped(`without CAP_${tc.drop}`)) return;
    const run = await runWithCapabilities({ distRoot: DIST, nodeBin: process.execPath, capabilities: daemonSetCapabilities.filter((c) => c !== tc.drop) });
    expect(run.status === 0 ? '' : describeRun(run)).toBe('');
    expect(okSteps(run)).toEqual(EVERY_STEP.filter((s) => s !== 'oom-score-adj' && !tc.failing.includes(s)));
    expect(run.results.start?.missing).toEqual([`CAP_${tc.drop}`]);
    const coded = codedLines(run).filter((m) => !m.startsWith('Setting oom_score_adj'));
    expect(coded).toEqual(tc.messages.map((m) => expect.stringMatching(m)));
    expect(run.otherUserProcessSurvived).toBe(tc.survives);
    if (tc.drop === 'DAC_READ_SEARCH') {
      expect(run.results.observe?.problems).toEqual([expect.stringMatching(/^volume cache of pod capabilities\/victim not measured: EACCES \(reading what another user owns needs CAP_DAC_READ_SEARCH\)$/)]);
    }
    expect(`${run.stdout}${run.stderr}`).not.toMatch(STACK_FRAME);
  }, 120_000);
}
