// cgroup v2 guest, from a checkout under /tmp: the guest mounts its own /tmp, and a checkout that
// lives there (a clone into /tmp, as CI's may be) must stay visible at its own path, or every guest
// suite fails with `cd: ... No such file or directory`. A copy of the built checkout under /tmp runs
// the guest runner from one of its subdirectories; in the guest the agent's own commands, from that
// copy, read the copy's examples and print what they print on the host.

import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../cli/run-cli.js';
import { scaledTimeoutMs } from '../helpers/timeout-scale.js';
import { guestUnavailable } from './cgroup-v2/guest-run.js';

const unavailable = guestUnavailable();
const required = process.env.KEA_CGROUP_V2_REQUIRED === '1';
const TIMEOUT_MS = scaledTimeoutMs(180_000);

// The agent's commands the guest runs from the copy, with what each must print (the host's run).
const COMMANDS: readonly (readonly string[])[] = [
  ['check-config', 'examples/memory-pressure.config.yaml'],
  ['replay', '--config', 'examples/memory-pressure.config.yaml', 'examples/memory-pressure.jsonl'],
];

// check-config's node lock line says whether the lock directory is the host's here, which the
// guest and the machine answer differently by design; every other line must be the same.
function withoutMachineLines(output: string): string {
  return output
    .split('\n')
    .filter((line) => !line.startsWith('node lock: '))
    .join('\n');
}

const describeGuest = unavailable !== null && !required ? describe.skip : describe;
if (unavailable !== null && !required) console.log(`skipping the checkout-under-/tmp guest test: ${unavailable}`);

describeGuest('cgroup v2 guest: a checkout under /tmp stays visible at its own path (QEMU guest)', () => {
  test('the guest runner started from a subdirectory of a checkout under /tmp runs the checkout\'s commands there', () => {
    if (unavailable !== null) throw new Error(`KEA_CGROUP_V2_REQUIRED=1 but the guest cannot run: ${unavailable}`);
    const checkout = mkdtempSync('/tmp/kea-checkout-');
    try {
      for (const part of ['package.json', 'scripts', 'examples', 'dist']) cpSync(join(REPO_ROOT, part), join(checkout, part), { recursive: true });
      // node_modules as hard links (a checkout that is itself under /tmp is hidden in the guest, so
      // a link to it would not resolve there); a symbolic link where /tmp is another filesystem.
      if (spawnSync('cp', ['-al', join(REPO_ROOT, 'node_modules'), join(checkout, 'node_modules')]).status !== 0) {
        rmSync(join(checkout, 'node_modules'), { recursive: true, force: true });
        symlinkSync(join(REPO_ROOT, 'node_modules'), join(checkout, 'node_modules'));
      }
      const subdirectory = join(checkout, 'examples', 'run-here');
      mkdirSync(subdirectory);
      const expected = COMMANDS.map((args) => withoutMachineLines(spawnSync(process.execPath, [join(checkout, 'dist/src/main.js'), ...args], { cwd: checkout, encoding: 'utf8' }).stdout));
      expected.forEach((output) => expect(output.length).toBeGreaterThan(0));
      // In the guest: the current directory, then each command from the checkout's root.
      const script = ['pwd', ...COMMANDS.map((args) => `(cd ${checkout} && ${[process.execPath, 'dist/src/main.js', ...args].join(' ')}); echo "== exit $?"`)].join('\n');
      const run = spawnSync('bash', [join(checkout, 'scripts/cgroup-v2-guest.sh'), '--timeout', String(Math.ceil(TIMEOUT_MS / 1000)), '--', 'bash', '-c', script], { cwd: subdirectory, encoding: 'utf8', timeout: TIMEOUT_MS + 30_000 });
      expect({ status: run.status, stderr: run.status === 0 ? '' : run.stderr.slice(-4000) }).toEqual({ status: 0, stderr: '' });
      const [pwd, ...rest] = run.stdout.split('\n');
      expect(pwd).toBe(subdirectory);
      const outputs = rest.join('\n').split(/^== exit (\d+)\n?/m);
      // split with a capture group: [output0, exit0, output1, exit1, ''].
      expect(outputs.filter((_, i) => i % 2 === 1)).toEqual(COMMANDS.map(() => '0'));
      expect(outputs.filter((_, i) => i % 2 === 0).slice(0, COMMANDS.length).map(withoutMachineLines)).toEqual(expected);
    } finally {
      rmSync(checkout, { recursive: true, force: true });
    }
  }, TIMEOUT_MS + 60_000);
});
