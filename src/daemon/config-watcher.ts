// Hot reload of the configuration file. A ConfigMap mount updates by swapping a symlink in the
// file's directory, so the directory is watched, not the file; changes are debounced and the
// content compared, so one update reloads once. A watch can stop without a word (its directory
// replaced or unmounted, an inotify error), so the file is also re-read on a period and applied
// when its content changed; a watch that failed is re-armed then. An invalid new file keeps the
// old configuration and is reported to the caller (logs, metrics, an Event); so does one the
// caller holds back. Either is remembered, so the same content is reported once.

import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from '../api/logger.js';
import { errorMessage } from '../errors.js';

/**
 * What a reload did: a new file applied whole, applied but for fields that need a restart, held
 * back by the caller (its thresholds would evict now), rejected, or no change.
 */
export type ReloadResult = 'applied' | 'requires-restart' | 'held' | 'unchanged' | 'rejected';

/** What applying a valid new text did. */
export type ApplyResult = 'applied' | 'requires-restart' | 'held';

/** How often the file is re-read whatever the watch says. */
export const CONFIG_REREAD_INTERVAL_MS = 30_000;

export interface ConfigWatcherDeps {
  readonly path: string;
  /** Validates and applies the new text (or holds it back, reporting why); throws to reject it. */
  readonly apply: (text: string) => Promise<ApplyResult> | ApplyResult;
  readonly onRejected: (err: unknown) => Promise<void> | void;
  readonly logger: Logger;
  readonly debounceMs?: number;
  readonly rereadIntervalMs?: number;
}

const contentHash = (text: string): string => createHash('sha256').update(text).digest('hex');

export class ConfigWatcher {
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private reread: NodeJS.Timeout | null = null;
  private lastHash: string;
  private reloading: Promise<unknown> = Promise.resolve();
  private readonly deps: ConfigWatcherDeps;

  constructor(deps: ConfigWatcherDeps, currentText: string) {
    this.deps = deps;
    this.lastHash = contentHash(currentText);
  }

  start(): void {
    if (this.reread !== null) return;
    this.watchDirectory();
    this.reread = setInterval(() => {
      // Re-armed every period: a watch on a directory that was replaced reports nothing, ever.
      this.watcher?.close();
      this.watchDirectory();
      this.queueReload();
    }, this.deps.rereadIntervalMs ?? CONFIG_REREAD_INTERVAL_MS);
    this.reread.unref();
  }

  private queueReload(): void {
    this.reloading = this.reloading
      .then(() => this.reload())
      .catch((err: unknown) => this.deps.logger.error('configuration reload failed', { err: errorMessage(err) }));
  }

  private watchDirectory(): void {
    const file = basename(this.deps.path);
    this.watcher = null;
    let watcher: FSWatcher;
    try {
      watcher = watch(dirname(this.deps.path), (_event, name) => this.changed(name, file));
    } catch (err) {
      this.deps.logger.warn('watching the configuration file failed; re-reading it periodically', { err: errorMessage(err) });
      return;
    }
    watcher.on('error', (err) => {
      this.deps.logger.warn('watching the configuration file failed; re-reading it periodically', { err: err.message });
      watcher.close();
      if (this.watcher === watcher) this.watcher = null;
    });
    this.watcher = watcher;
  }

  private changed(name: string | null, file: string): void {
    // ConfigMap updates rename `..data`; plain edits name the file itself.
    if (name !== null && name !== file && !name.startsWith('..')) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.queueReload();
    }, this.deps.debounceMs ?? 200);
    this.timer.unref();
  }

  /** Reads the file and applies it if it changed. Also used directly by tests. */
  async reload(): Promise<ReloadResult> {
    let text: string;
    try {
      text = await readFile(this.deps.path, 'utf8');
    } catch (err) {
      await this.deps.onRejected(err);
      return 'rejected';
    }
    const hash = contentHash(text);
    if (hash === this.lastHash) return 'unchanged';
    try {
      const result = await this.deps.apply(text);
      this.lastHash = hash;
      return result;
    } catch (err) {
      // Remember the rejected content too, so the same bad file is reported once, not on every event.
      this.lastHash = hash;
      await this.deps.onRejected(err);
      return 'rejected';
    }
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.reread !== null) clearInterval(this.reread);
    this.watcher?.close();
    this.watcher = null;
    await this.reloading;
  }
}
