// The configuration watcher on real files: an edit is applied once; a directory replaced under
// the watch (as a ConfigMap volume or an operator's `mv` can do) silences the watch, and the
// periodic re-read still applies the new content, once.

import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigWatcher } from '../../../src/daemon/config-watcher.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { waitFor } from '../../helpers/wait-for.js';

let dir = '';
let watcher: ConfigWatcher | null = null;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kea-watch-'));
});
afterEach(async () => {
  await watcher?.stop();
  watcher = null;
  rmSync(dir, { recursive: true, force: true });
});

function watch(path: string, initial: string, rereadIntervalMs: number): string[] {
  const applied: string[] = [];
  watcher = new ConfigWatcher(
    {
      path,
      apply: (text) => {
        applied.push(text);
        return 'applied';
      },
      onRejected: () => {},
      logger: new RecordingLogger(),
      debounceMs: 20,
      rereadIntervalMs,
    },
    initial,
  );
  watcher.start();
  return applied;
}

test('an edit is applied once, through the watch, long before the re-read period', async () => {
  const path = join(dir, 'config.yaml');
  writeFileSync(path, 'a: 1\n');
  const applied = watch(path, 'a: 1\n', 60_000);
  writeFileSync(path, 'a: 2\n');
  await waitFor('the edit applied', () => applied.length > 0, 5_000);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(applied).toEqual(['a: 2\n']);
});

test('the directory replaced under the watch: the periodic re-read applies the new content, once', async () => {
  const configDir = join(dir, 'config');
  mkdirSync(configDir);
  const path = join(configDir, 'config.yaml');
  writeFileSync(path, 'a: 1\n');
  const applied = watch(path, 'a: 1\n', 300);
  // The watched directory goes away and another takes its name: the watch sees nothing of it.
  renameSync(configDir, join(dir, 'old'));
  mkdirSync(configDir);
  writeFileSync(path, 'a: 3\n');
  await waitFor('the new file applied', () => applied.length > 0);
  // Later edits in the new directory reach the re-armed watch, or the next re-read.
  writeFileSync(path, 'a: 4\n');
  await waitFor('the next edit applied', () => applied.length > 1);
  await new Promise((resolve) => setTimeout(resolve, 700));
  expect(applied).toEqual(['a: 3\n', 'a: 4\n']);
});
