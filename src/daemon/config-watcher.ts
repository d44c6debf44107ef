// Hot reload of the configuration file. A ConfigMap mount updates by swapping a symlink in the
// file's directory, so the directory is watched, not the file; changes are debounced and the
// content compared, so one update reloads once. An invalid new file keeps the old configuration
// and is reported to the caller (logs, metrics, an Event).

import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from '../api/logger.js';

export interface ConfigWatcherDeps {
  readonly path: string;
  /** Validates and applies the new text; throws to reject it. */
  readonly apply: (text: string) => Promise<void> | void;
  readonly onRejected: (err: unknown) => Promise<void> | void;
  readonly logger: Logger;
  readonly debounceMs?: number;
}

export class ConfigWatcher {
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastText: string | null = null;
  private reloading: Promise<unknown> = Promise.resolve();
  private readonly deps: ConfigWatcherDeps;

  constructor(deps: ConfigWatcherDeps, currentText: string) {
    this.deps = deps;
    this.lastText = currentText;
  }

  start(): void {
    if (this.watcher !== null) return;
    const file = basename(this.deps.path);
    this.watcher = watch(dirname(this.deps.path), (_event, name) => {
      // ConfigMap updates rename `..data`; plain edits name the file itself.
      if (name !== null && name !== file && !name.startsWith('..')) return;
      if (this.timer !== null) clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        this.timer = null;
        this.reloading = this.reloading.then(() => this.reload());
      }, this.deps.debounceMs ?? 200);
      this.timer.unref();
    });
    this.watcher.on('error', (err) => this.deps.logger.warn('watching the configuration file failed', { err: err.message }));
  }

  /** Reads the file and applies it if it changed. Also used directly by tests. */
  async reload(): Promise<'applied' | 'unchanged' | 'rejected'> {
    let text: string;
    try {
      text = await readFile(this.deps.path, 'utf8');
    } catch (err) {
      await this.deps.onRejected(err);
      return 'rejected';
    }
    if (text === this.lastText) return 'unchanged';
    try {
      await this.deps.apply(text);
      this.lastText = text;
      return 'applied';
    } catch (err) {
      // Remember the rejected text too, so the same bad file is reported once, not on every event.
      this.lastText = text;
      await this.deps.onRejected(err);
      return 'rejected';
    }
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.watcher?.close();
    this.watcher = null;
    await this.reloading;
  }
}
