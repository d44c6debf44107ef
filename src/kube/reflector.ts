// Keeps a local copy of one kind of object (the node's pods, or the node itself) through the client
// library's ListWatch, and makes it survive what the library alone does not. The library's loop
// relists after a 410 Gone and re-watches after a clean close, but it stops for good on any other
// error (a failed list, a refused connection, a 5xx on the watch): the reflector restarts it with
// exponential backoff and jitter. It also asks the server to end each watch after a few minutes,
// aborts a watch the server forgot to end, paces watches that close at once, and reports every
// change as (old, new) from its own store so listeners see the state they saw last.

import type { KubernetesListObject, KubernetesObject, ListWatch, Watch } from '@kubernetes/client-node';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { errorMessage } from '../errors.js';
import { Backoff, WATCH_BACKOFF, backoffDelayMs, type BackoffPolicy } from '../api/backoff.js';
import type { ClientLibrary, KubeConfig } from './client-library.js';

type WatchCallback = (phase: string, apiObj: unknown, watchObj?: unknown) => void;
type WatchQuery = Record<string, string | number | boolean | undefined>;

/** The metadata the reflector needs from any object it keeps. */
export interface WireObject {
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

export interface ReflectorOptions<T extends WireObject> {
  /** For logs: `pods`, `node`. */
  readonly resource: string;
  readonly lib: ClientLibrary;
  readonly kubeConfig: KubeConfig;
  /** The collection's path, `/api/v1/pods`. */
  readonly path: string;
  readonly fieldSelector: string;
  /** Lists the collection (objects in wire form); throws on failure. */
  readonly list: () => Promise<{ readonly resourceVersion: string; readonly items: readonly T[] }>;
  readonly onChange: (oldObject: T | null, newObject: T | null) => void;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly backoff?: BackoffPolicy | undefined;
  readonly random?: (() => number) | undefined;
  /** Each watch asks the server to end it after `min * (1 + random)` seconds (client-go: 5 min). */
  readonly minWatchTimeoutSeconds?: number | undefined;
}

const DEFAULT_MIN_WATCH_TIMEOUT_SECONDS = 300;
// How long past its own timeoutSeconds a watch may stay open before the client ends it.
const WATCH_DEADLINE_GRACE_MS = 30_000;
// A watch that ends sooner than this without delivering anything counts as failing at once.
const SHORT_WATCH_MS = 1_000;

export class Reflector<T extends WireObject> {
  private readonly store = new Map<string, T>();
  private snapshot: readonly T[] | null = null;
  private readonly listWatch: ListWatch<KubernetesObject>;
  private readonly backoff: Backoff;
  private readonly policy: BackoffPolicy;
  private readonly random: () => number;
  private readonly stopController = new AbortController();
  private started = false;
  private stopped = false;
  private cancelRestart: (() => void) | null = null;
  private listedSinceWatch = false;
  private isSynced = false;
  private shortWatches = 0;
  private syncWaiters: ((synced: boolean) => void)[] = [];
  private firstAttemptWaiters: (() => void)[] = [];
  private firstAttemptDone = false;

  constructor(private readonly options: ReflectorOptions<T>) {
    this.policy = options.backoff ?? WATCH_BACKOFF;
    this.random = options.random ?? Math.random;
    this.backoff = new Backoff(this.policy, this.random);
    const { lib } = options;
    this.listWatch = new lib.ListWatch<KubernetesObject>(options.path, this.makeWatch(), () => this.listOnce(), false, undefined, options.fieldSelector);
    this.listWatch.on('add', (obj) => this.apply(obj as unknown as T));
    this.listWatch.on('update', (obj) => this.apply(obj as unknown as T));
    this.listWatch.on('delete', (obj) => this.remove(obj as unknown as T));
    this.listWatch.on('error', (err: unknown) => this.onError(err));
  }

  /** True once a list has been received and applied. */
  get synced(): boolean {
    return this.isSynced;
  }

  /** The objects, latest state; the same array until something changes. */
  items(): readonly T[] {
    this.snapshot ??= Object.freeze([...this.store.values()]);
    return this.snapshot;
  }

  /** Starts listing and watching; resolves after the first list attempt, whether it worked or not. */
  start(): Promise<void> {
    if (!this.started && !this.stopped) {
      this.started = true;
      this.options.logger.debug('starting watch', { resource: this.options.resource, path: this.options.path, fieldSelector: this.options.fieldSelector });
      this.listWatch.start().catch((err: unknown) => this.onError(err));
    }
    return this.firstAttempt();
  }

  /** Resolves true once synced, or false if stopped first. */
  whenSynced(): Promise<boolean> {
    if (this.isSynced) return Promise.resolve(true);
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /** Stops for good; idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stopController.abort();
    this.cancelRestart?.();
    this.cancelRestart = null;
    this.finishFirstAttempt();
    for (const waiter of this.syncWaiters.splice(0)) waiter(false);
    await this.listWatch.stop();
  }

  private firstAttempt(): Promise<void> {
    if (this.firstAttemptDone) return Promise.resolve();
    return new Promise((resolve) => this.firstAttemptWaiters.push(resolve));
  }

  private finishFirstAttempt(): void {
    this.firstAttemptDone = true;
    for (const waiter of this.firstAttemptWaiters.splice(0)) waiter();
  }

  private async listOnce(): Promise<KubernetesListObject<KubernetesObject>> {
    const listed = await this.options.list();
    this.listedSinceWatch = true;
    this.backoff.reset();
    this.options.logger.debug('listed', { resource: this.options.resource, count: listed.items.length, resourceVersion: listed.resourceVersion });
    return { metadata: { resourceVersion: listed.resourceVersion }, items: listed.items as unknown as KubernetesObject[] };
  }

  // The ListWatch calls watch() right after applying a list, so that is where "synced" is known
  // (awaiting start() would also wait for the watch's response headers).
  private makeWatch(): Watch {
    const { lib, kubeConfig } = this.options;
    const open = (inner: (query: WatchQuery, callback: WatchCallback, done: (err: unknown) => void) => Promise<AbortController>, query: WatchQuery, callback: WatchCallback, done: (err: unknown) => void) =>
      this.openWatch(inner, query, callback, done);
    class GuardedWatch extends lib.Watch {
      override watch(path: string, query: WatchQuery, callback: WatchCallback, done: (err: unknown) => void): Promise<AbortController> {
        return open((q, cb, d) => super.watch(path, q, cb, d), query, callback, done);
      }
    }
    return new GuardedWatch(kubeConfig);
  }

  private async openWatch(
    inner: (query: WatchQuery, callback: WatchCallback, done: (err: unknown) => void) => Promise<AbortController>,
    query: WatchQuery,
    callback: WatchCallback,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const { clock, logger, resource } = this.options;
    if (this.listedSinceWatch) {
      this.listedSinceWatch = false;
      this.markSynced();
    }
    this.finishFirstAttempt();
    try {
      if (this.shortWatches > 0 && !this.stopped) {
        const delayMs = backoffDelayMs(this.shortWatches - 1, this.policy, this.random);
        logger.debug('pacing a watch that ended at once', { resource, delayMs });
        await clock.sleep(delayMs, this.stopController.signal);
      }
      // Stopped: hand the ListWatch a dead request and never call done, so it does not go on.
      if (this.stopped) return abortedController();

      const minSeconds = this.options.minWatchTimeoutSeconds ?? DEFAULT_MIN_WATCH_TIMEOUT_SECONDS;
      const timeoutSeconds = Math.max(1, Math.floor(minSeconds * (1 + this.random())));
      const startedAtMs = clock.nowMs();
      let delivered = 0;
      let finished = false;
      let endQuietly = false;
      let controller: AbortController | null = null;
      let cancelDeadline = (): void => {};
      const finish = (err: unknown): void => {
        if (finished) return;
        finished = true;
        cancelDeadline();
        const livedMs = clock.nowMs() - startedAtMs;
        this.shortWatches = delivered === 0 && livedMs < SHORT_WATCH_MS ? this.shortWatches + 1 : 0;
        // A watch that held for a while was a working connection, even if quiet.
        if (livedMs >= SHORT_WATCH_MS) this.backoff.reset();
        if (err !== null && err !== undefined && !endQuietly) logger.debug('watch ended with an error', { resource, error: errorMessage(err) });
        done(endQuietly ? null : err);
      };
      const onEvent: WatchCallback = (phase, apiObj, watchObj) => {
        if (phase === 'ERROR') {
          const status = apiObj as { code?: number; reason?: string; message?: string } | undefined;
          logger.info('watch ended by the server', { resource, status: status?.code, reason: status?.reason, message: status?.message });
          callback(phase, apiObj, watchObj);
          // The server closes the stream after an ERROR event; closing it here as well means a
          // server that does not still gets a relist (410) or a re-watch.
          endQuietly = true;
          controller?.abort();
          return;
        }
        delivered++;
        this.backoff.reset();
        callback(phase, apiObj, watchObj);
      };
      controller = await inner({ ...query, allowWatchBookmarks: true, timeoutSeconds }, onEvent, finish);
      // Stopped while connecting: the ListWatch already let go of its previous request.
      if (endQuietly || this.stopped) controller.abort();
      if (!finished) {
        const watched = controller;
        cancelDeadline = clock.after(timeoutSeconds * 1000 + WATCH_DEADLINE_GRACE_MS, () => {
          logger.info('watch outlived its timeout; reconnecting', { resource, timeoutSeconds });
          endQuietly = true;
          watched.abort();
        });
      }
      return controller;
    } catch (err) {
      // The library's loop would otherwise end in an unhandled rejection.
      done(err);
      return abortedController();
    }
  }

  private onError(err: unknown): void {
    if (this.stopped) return;
    this.finishFirstAttempt();
    if (this.cancelRestart !== null) return;
    const delayMs = this.backoff.nextDelayMs();
    this.options.logger.warn('watch failed; restarting', { resource: this.options.resource, error: errorMessage(err), status: statusOf(err), attempt: this.backoff.attempts, retryInMs: delayMs });
    this.cancelRestart = this.options.clock.after(delayMs, () => {
      this.cancelRestart = null;
      if (this.stopped) return;
      this.listWatch.start().catch((error: unknown) => this.onError(error));
    });
  }

  private markSynced(): void {
    if (this.isSynced) return;
    this.isSynced = true;
    this.options.logger.info('synced', { resource: this.options.resource, count: this.store.size });
    for (const waiter of this.syncWaiters.splice(0)) waiter(true);
  }

  private apply(obj: T): void {
    const key = keyOf(obj);
    const old = this.store.get(key) ?? null;
    this.store.set(key, obj);
    this.snapshot = null;
    if (old !== null && old.metadata.uid !== undefined && obj.metadata.uid !== undefined && old.metadata.uid !== obj.metadata.uid) {
      // Deleted and recreated under the same name while disconnected: two objects, not one.
      this.notify(old, null);
      this.notify(null, obj);
      return;
    }
    this.notify(old, obj);
  }

  private remove(obj: T): void {
    const key = keyOf(obj);
    const known = this.store.get(key);
    if (known === undefined) return;
    this.store.delete(key);
    this.snapshot = null;
    // The delete event carries the final state; after a relist the last state seen is all there is.
    this.notify(obj.metadata.uid === undefined || obj.metadata.uid === known.metadata.uid ? obj : known, null);
  }

  private notify(oldObject: T | null, newObject: T | null): void {
    if (this.stopped) return;
    try {
      this.options.onChange(oldObject, newObject);
    } catch (err) {
      this.options.logger.error('a change listener failed', { resource: this.options.resource, error: errorMessage(err) });
    }
  }
}

function keyOf(obj: WireObject): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}

function abortedController(): AbortController {
  const controller = new AbortController();
  controller.abort();
  return controller;
}

function statusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const record = err as { status?: unknown; statusCode?: unknown; code?: unknown };
  for (const value of [record.status, record.statusCode, record.code]) if (typeof value === 'number') return value;
  return undefined;
}
