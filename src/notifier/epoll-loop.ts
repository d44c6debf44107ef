// One epoll set, one wake-up eventfd, and exactly one outstanding epoll_wait off the main thread.
// A blocking wait holds one of libuv's four pool threads, so every notifier descriptor shares this
// single wait instead of taking a thread each. Descriptors are added and removed while the wait is
// outstanding (Linux allows epoll_ctl concurrently with epoll_wait); stop() writes to the wake-up
// eventfd so the outstanding call returns at once, then closes every descriptor it owns.

import type { Logger } from '../api/logger.js';
import { errorMessage } from '../errors.js';
import type { EpollFd, EventFd, FileFd, NativeEvents, ReadyEvent } from '../../native/native-events.js';
import { EPOLLIN } from '../../native/native-events.js';

/** A descriptor registered with the loop. The loop owns the descriptor from then on. */
export interface EpollWatch {
  readonly token: number;
  readonly fd: EventFd | FileFd;
}

export interface EpollLoopOptions {
  /** The epoll_wait timeout: the longest the pool thread is held before the loop re-checks its state. */
  readonly waitTimeoutMs: number;
  /** The epoll_wait buffer, in events; more ready descriptors are returned by the next wait. */
  readonly maxEvents: number;
}

export const DEFAULT_EPOLL_LOOP_OPTIONS: EpollLoopOptions = { waitTimeoutMs: 10_000, maxEvents: 16 };

const WAKE_TOKEN = 0;

interface Registration {
  readonly watch: EpollWatch;
  readonly onReady: (events: number) => void;
}

export class EpollLoop {
  private readonly native: NativeEvents;
  private readonly logger: Logger;
  private readonly options: EpollLoopOptions;
  private readonly epoll: EpollFd;
  private readonly wake: EventFd;
  private readonly registrations = new Map<number, Registration>();
  private nextToken = WAKE_TOKEN + 1;
  private running: Promise<void> | null = null;
  private stopping = false;
  private stopped: Promise<void> | null = null;

  /** Creates the epoll set and its wake-up eventfd; throws a NativeError when the kernel refuses. */
  constructor(native: NativeEvents, logger: Logger, options: EpollLoopOptions = DEFAULT_EPOLL_LOOP_OPTIONS) {
    this.native = native;
    this.logger = logger;
    this.options = options;
    this.epoll = native.createEpoll();
    try {
      this.wake = native.createEventFd();
    } catch (error) {
      native.close(this.epoll);
      throw error;
    }
    try {
      native.addToEpoll(this.epoll, this.wake, EPOLLIN, WAKE_TOKEN);
    } catch (error) {
      native.close(this.wake);
      native.close(this.epoll);
      throw error;
    }
  }

  /** How many descriptors are registered (the wake-up eventfd not counted). */
  get watchCount(): number {
    return this.registrations.size;
  }

  /** True once stop() was called. */
  get isStopping(): boolean {
    return this.stopping;
  }

  /**
   * Adds `fd` to the set; `onReady` runs on the main thread with the returned event bits each time the
   * wait reports it. Takes ownership of `fd`: it is closed on unwatch, on stop, or here if adding fails.
   */
  watch(fd: EventFd | FileFd, events: number, onReady: (events: number) => void): EpollWatch {
    if (this.stopping) {
      this.closeQuietly(fd);
      throw new Error('the epoll loop is stopped');
    }
    const watch: EpollWatch = { token: this.nextToken++, fd };
    try {
      this.native.addToEpoll(this.epoll, fd, events, watch.token);
    } catch (error) {
      this.closeQuietly(fd);
      throw error;
    }
    this.registrations.set(watch.token, { watch, onReady });
    return watch;
  }

  /** Removes and closes a watched descriptor. A no-op for one already removed. */
  unwatch(watch: EpollWatch): void {
    if (this.registrations.get(watch.token)?.watch !== watch) return;
    this.registrations.delete(watch.token);
    try {
      this.native.removeFromEpoll(this.epoll, watch.fd);
    } catch (error) {
      this.logger.warn('cannot remove a descriptor from the epoll set', { fd: watch.fd, error: errorMessage(error) });
    }
    this.closeQuietly(watch.fd);
  }

  /** Starts the wait loop. Idempotent; a no-op once stopping. */
  start(): void {
    if (this.running !== null || this.stopping) return;
    this.running = this.run();
  }

  /** Wakes the outstanding wait, waits for it to return, then closes every descriptor. Idempotent. */
  stop(): Promise<void> {
    if (this.stopped !== null) return this.stopped;
    this.stopping = true;
    if (this.running !== null) {
      try {
        this.native.signalEventFd(this.wake, 1n);
      } catch (error) {
        // The wait still returns at its timeout.
        this.logger.warn('cannot wake the epoll wait; stopping at its timeout', { error: errorMessage(error) });
      }
    }
    this.stopped = (this.running ?? Promise.resolve()).then(() => this.closeAll());
    return this.stopped;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let ready: readonly ReadyEvent[];
      try {
        ready = await this.native.waitEpoll(this.epoll, this.options.maxEvents, this.options.waitTimeoutMs);
      } catch (error) {
        this.logger.error('epoll_wait failed; memory threshold notifications stop until restart', { error: errorMessage(error) });
        return;
      }
      if (this.stopping) return;
      for (const event of ready) this.dispatch(event);
    }
  }

  private dispatch(event: ReadyEvent): void {
    if (event.token === WAKE_TOKEN) {
      this.native.readEventFd(this.wake);
      return;
    }
    // A descriptor unwatched while the wait was outstanding: its token is gone, so its event is dropped.
    const registration = this.registrations.get(event.token);
    if (registration === undefined) return;
    try {
      registration.onReady(event.events);
    } catch (error) {
      this.logger.error('a notifier event handler failed', { error: errorMessage(error) });
    }
  }

  private closeAll(): void {
    for (const { watch } of this.registrations.values()) this.closeQuietly(watch.fd);
    this.registrations.clear();
    this.closeQuietly(this.wake);
    this.closeQuietly(this.epoll);
  }

  private closeQuietly(fd: EpollFd | EventFd | FileFd): void {
    try {
      this.native.close(fd);
    } catch (error) {
      this.logger.warn('cannot close a descriptor', { fd, error: errorMessage(error) });
    }
  }
}
