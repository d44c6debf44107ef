// The node lock on the host: `<directory>/node.lock`, held with an exclusive flock(2) for as long
// as this process acts, and released by the kernel when the process dies, however it dies; beside
// it `state.json`, which the holder rewrites at every heartbeat (who it is, when it last beat, the
// engine state a successor carries on from), and `standby-<pid>.json`, one per agent waiting. The
// files are small, written to a temporary name and renamed over, so a reader never sees half a
// file; every read is bounded in size. Nothing here decides: src/daemon/node-lock-gate.ts does.

import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import type { FileLocks } from '../../native/file-locks.js';
import { createLibcFileLocks } from '../../native/libc-file-locks.js';
import type { NodeLockFile } from '../daemon/ports.js';
import { AgentError, errorMessage } from '../errors.js';

export const LOCK_FILE_NAME = 'node.lock';
export const STATE_FILE_NAME = 'state.json';
const BROKEN_LOCK_FILE_NAME = 'node.lock.broken';
const PRESENCE_PREFIX = 'standby-';
// A state file is a few kilobytes; anything much larger is not one of ours.
const MAX_STATE_BYTES = 256 * 1024;
const MAX_PRESENCE_FILES = 64;

function fileId(stats: Stats): string {
  return `${stats.dev}:${stats.ino}`;
}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}

function readJson(path: string): unknown {
  let text: string;
  try {
    const stats = statSync(path);
    if (!stats.isFile() || stats.size > MAX_STATE_BYTES) return null;
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function writeAtomically(path: string, value: unknown): void {
  const text = JSON.stringify(value);
  if (text.length > MAX_STATE_BYTES) throw new AgentError('EVA_ERR_NODE_LOCK', `${path}: state of ${text.length} bytes exceeds ${MAX_STATE_BYTES}`);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o600 });
  renameSync(temporary, path);
}

export function createNodeLockFile(directory: string, locks: FileLocks = createLibcFileLocks()): NodeLockFile {
  if (!directory.startsWith('/')) throw new AgentError('EVA_ERR_NODE_LOCK', `the node lock directory must be an absolute path: ${directory}`);
  const lockPath = join(directory, LOCK_FILE_NAME);
  const statePath = join(directory, STATE_FILE_NAME);
  const presencePath = (pid: number): string => join(directory, `${PRESENCE_PREFIX}${pid}.json`);
  let fd: number | null = null;

  const release = (): void => {
    if (fd === null) return;
    const open = fd;
    fd = null;
    try {
      closeSync(open);
    } catch {
      // Closing can only fail on a descriptor already closed; the lock is gone either way.
    }
  };

  return {
    directory,
    path: lockPath,
    tryAcquire() {
      if (fd !== null) return true;
      mkdirSync(directory, { recursive: true, mode: 0o700 });
      // Opened close-on-exec (libuv's default), so no child process inherits the lock.
      const opened = openSync(lockPath, 'a', 0o600);
      let taken = false;
      try {
        taken = locks.tryLockExclusive(opened);
        // Locked, but the path may have been moved aside between the open and the lock (a lock being
        // broken): only the file the path names now counts.
        if (taken && fileId(fstatSync(opened)) !== safeId(lockPath)) taken = false;
      } finally {
        if (!taken) closeSync(opened);
      }
      if (taken) fd = opened;
      return taken;
    },
    held() {
      if (fd === null) return false;
      try {
        return fileId(fstatSync(fd)) === safeId(lockPath);
      } catch {
        return false;
      }
    },
    lockFileId: () => safeId(lockPath),
    breakLock(expectedId) {
      if (safeId(lockPath) !== expectedId) return false;
      try {
        renameSync(lockPath, join(directory, BROKEN_LOCK_FILE_NAME));
        return true;
      } catch (err) {
        if (isMissing(err)) return false;
        throw new AgentError('EVA_ERR_NODE_LOCK', `moving the lock file ${lockPath} aside failed: ${errorMessage(err)}`);
      }
    },
    release,
    readState: () => readJson(statePath),
    writeState: (state) => writeAtomically(statePath, state),
    writePresence: (pid, presence) => writeAtomically(presencePath(pid), presence),
    removePresence(pid) {
      rmSync(presencePath(pid), { force: true });
    },
    readPresences(ownPid) {
      let names: string[];
      try {
        names = readdirSync(directory);
      } catch {
        return [];
      }
      const own = `${PRESENCE_PREFIX}${ownPid}.json`;
      return names
        .filter((n) => n.startsWith(PRESENCE_PREFIX) && n.endsWith('.json') && n !== own)
        .slice(0, MAX_PRESENCE_FILES)
        .map((n) => readJson(join(directory, n)))
        .filter((v) => v !== null);
    },
  };
}

function safeId(path: string): string | null {
  try {
    return fileId(statSync(path));
  } catch {
    return null;
  }
}
