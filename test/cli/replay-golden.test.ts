// Replay's output, byte for byte, on a generated recording that moves every signal through its
// thresholds (test/fixtures/replay-recording.ts): the expected lines under test/fixtures/replay-golden/
// were written by the replay of before its speed-ups, so any change to how lines are read,
// validated, decided or written that changes a single byte fails here. A deliberate change of the
// output regenerates them with KEA_UPDATE_REPLAY_GOLDEN=1 (and the diff is then reviewed).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GOLDEN_CONFIG, GOLDEN_KUBELET_CONFIG, goldenRecording } from '../fixtures/replay-recording.js';
import { REPO_ROOT, replay, replayThroughCli } from './run-cli.js';

const GOLDEN_DIR = join(REPO_ROOT, 'test/fixtures/replay-golden');
const STEPS = 400;
const PODS = 14;

const cases = [
  { name: 'agent configuration with the storm guard', file: 'agent.out.jsonl', config: GOLDEN_CONFIG, seed: 14, shows: ['"heldBack"', '"ownerStorms"', '"action":"cancelled"', '"gracePeriodSeconds":20', '"outcomes":[{', '"result":"relieved"'] },
  { name: 'kubelet configuration', file: 'kubelet.out.jsonl', config: GOLDEN_KUBELET_CONFIG, seed: 7, shows: ['"signal":"ephemeralpodfs.limit"', '"signal":"emptydirfs.limit"'] },
];

function expected(file: string, actual: string): string {
  const path = join(GOLDEN_DIR, file);
  if (process.env.KEA_UPDATE_REPLAY_GOLDEN === '1') writeFileSync(path, actual);
  return readFileSync(path, 'utf8');
}

describe('replay output is unchanged byte for byte', () => {
  test.each(cases)('$name, in process', async ({ file, config, seed, shows }) => {
    const recording = `${goldenRecording(STEPS, PODS, seed).join('\n')}\n`;
    const result = await replay(config, recording);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines).toHaveLength(STEPS + 1);
    // The recording does exercise what it claims to: evictions, held-back evictions, taint deletions.
    expect(result.stdout).toContain('"evictions":[{');
    expect(result.stdout).toContain('"action":"deleted"');
    for (const text of shows) expect(result.stdout).toContain(text);
    expect(result.stdout).toBe(expected(file, result.stdout));
  });

  test('the agent configuration through the built command line, with CRLF line ends and blank lines', async () => {
    const recording = `${goldenRecording(STEPS, PODS, 14).join('\r\n\r\n')}\r\n`;
    const result = await replayThroughCli(GOLDEN_CONFIG, recording);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(readFileSync(join(GOLDEN_DIR, 'agent.out.jsonl'), 'utf8'));
  });
});
