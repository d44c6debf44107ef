// The machine's benchmark lock (flock(1) on a file, as the shell commands take it): shared for
// heavy set-up, exclusive while figures are measured. Held by a child `flock` process until
// released, so a long run can hold the exclusive lock only for its measured phases.

import { spawn } from 'node:child_process';
import { trackChild } from './cleanup.js';

/** Waits for the lock; resolves with its release. */
export async function holdLock(file: string, mode: 'shared' | 'exclusive'): Promise<() => Promise<void>> {
  const child = trackChild(spawn('flock', [mode === 'shared' ? '-s' : '-x', file, 'sh', '-c', 'echo held; exec cat >/dev/null'], { stdio: ['pipe', 'pipe', 'inherit'] }));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('held')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`flock ${file} exited (${code}) before the lock was held`)));
  });
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    child.stdin.end();
    await exited;
  };
}
