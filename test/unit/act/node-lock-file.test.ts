// The node lock file on the real kernel's flock (root not needed): two opens of one lock file
// exclude each other, even in one process; a holder killed with SIGKILL releases it at once (the
// util-linux `flock` command stands for another agent process); a broken lock leaves the old
// holder not holding; state and presence files read back as written, and garbage reads as null.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeLockFile, LOCK_FILE_NAME, STATE_FILE_NAME } from '../../../src/act/node-lock-file.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kea-node-lock-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

// util-linux 2.38 and later (--no-fork).
const hasFlockCommand = spawnSync('flock', ['--no-fork', '/dev/null', 'true']).status === 0;

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('two lock files on one directory: only one holds, and the other takes it once released', () => {
  const a = createNodeLockFile(join(dir, 'lock'));
  const b = createNodeLockFile(join(dir, 'lock'));
  expect(a.tryAcquire()).toBe(true);
  expect(a.held()).toBe(true);
  expect(b.tryAcquire()).toBe(false);
  expect(b.held()).toBe(false);
  a.release();
  a.release();
  expect(a.held()).toBe(false);
  expect(b.tryAcquire()).toBe(true);
  expect(b.held()).toBe(true);
  b.release();
});

(hasFlockCommand ? test : test.skip)('a holder killed with SIGKILL releases the lock: the next try takes it (util-linux flock as the other process)', async () => {
  const lockDir = join(dir, 'lock');
  const mine = createNodeLockFile(lockDir);
  // Created by us, so the child locks the same file; --no-fork makes the locking process the sleep itself, so nothing outlives the kill.
  expect(mine.tryAcquire()).toBe(true);
  mine.release();
  const child = spawn('flock', ['--exclusive', '--no-fork', join(lockDir, LOCK_FILE_NAME), 'sleep', '60'], { stdio: 'ignore' });
  // A probe that does not keep the lock, until the child holds it.
  const free = (): boolean => {
    const taken = mine.tryAcquire();
    if (taken) mine.release();
    return taken;
  };
  try {
    await until(() => !free(), 5000);
    expect(mine.tryAcquire()).toBe(false);
    const killedAtMs = Date.now();
    process.kill(child.pid as number, 'SIGKILL');
    await until(() => mine.tryAcquire(), 5000);
    console.log(`lock taken ${Date.now() - killedAtMs} ms after SIGKILL of its holder (polling every 5 ms)`);
    expect(mine.held()).toBe(true);
  } finally {
    child.kill('SIGKILL');
    mine.release();
  }
});

test('breaking the lock moves the file aside: the old holder no longer holds, a fresh lock is taken at once', () => {
  const hung = createNodeLockFile(dir);
  const standby = createNodeLockFile(dir);
  expect(hung.tryAcquire()).toBe(true);
  const id = standby.lockFileId();
  expect(id).not.toBeNull();
  expect(standby.tryAcquire()).toBe(false);
  // Only the file it saw: a lock file replaced meanwhile is not broken.
  expect(standby.breakLock('0:0')).toBe(false);
  expect(hung.held()).toBe(true);
  expect(standby.breakLock(id as string)).toBe(true);
  expect(hung.held()).toBe(false);
  expect(standby.tryAcquire()).toBe(true);
  expect(standby.held()).toBe(true);
  expect(standby.lockFileId()).not.toBe(id);
  hung.release();
  standby.release();
});

test('state and presence files read back as written; a missing, oversized or garbled file reads as null', () => {
  const lock = createNodeLockFile(dir);
  expect(lock.readState()).toBeNull();
  lock.writeState({ version: 1, n: 2 });
  expect(lock.readState()).toEqual({ version: 1, n: 2 });
  writeFileSync(join(dir, STATE_FILE_NAME), '{not json');
  expect(lock.readState()).toBeNull();
  writeFileSync(join(dir, STATE_FILE_NAME), 'x'.repeat(300 * 1024));
  expect(lock.readState()).toBeNull();
  lock.writePresence(11, { who: 'a' });
  lock.writePresence(12, { who: 'b' });
  writeFileSync(join(dir, 'standby-13.json'), 'garbage');
  expect(lock.readPresences(11)).toEqual([{ who: 'b' }]);
  lock.removePresence(12);
  expect(lock.readPresences(11)).toEqual([]);
  expect(existsSync(join(dir, 'standby-11.json'))).toBe(true);
});

test('a relative directory is refused; a directory that cannot be created makes tryAcquire throw', () => {
  expect(() => createNodeLockFile('run/kea')).toThrow('the node lock directory must be an absolute path: run/kea');
  writeFileSync(join(dir, 'file'), '');
  const lock = createNodeLockFile(join(dir, 'file', 'lock'));
  expect(() => lock.tryAcquire()).toThrow(/ENOTDIR/);
});
