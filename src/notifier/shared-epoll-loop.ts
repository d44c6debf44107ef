// The one epoll loop of the node's kernel watchers (the memory threshold notifier and the OOM kill
// watcher), shared: a blocking epoll_wait holds one of libuv's four pool threads, so every
// descriptor of every watcher sits in one set behind one outstanding wait. The loop is created by
// its first holder, started by whichever holder starts first (start is idempotent), and stopped
// when its last holder lets go; each holder removes its own descriptors before letting go.

import type { Logger } from '../api/logger.js';
import { errorMessage } from '../errors.js';
import { createLibcNativeEvents } from '../../native/libc-native-events.js';
import type { NativeEvents } from '../../native/native-events.js';
import { DEFAULT_EPOLL_LOOP_OPTIONS, EpollLoop, type EpollLoopOptions } from './epoll-loop.js';

export class SharedEpollLoop {
  private loop: EpollLoop | null = null;
  private failure: string | null = null;
  private holders = 0;

  constructor(
    private readonly native: NativeEvents,
    private readonly logger: Logger,
    private readonly options: EpollLoopOptions = DEFAULT_EPOLL_LOOP_OPTIONS,
  ) {}

  /**
   * The loop, created on the first call (not started: the holder starts it when it is ready for
   * events); null when the kernel refused an epoll set (see failure) or the loop was stopped. Every
   * call that returns a loop is paired with one release().
   */
  acquire(): EpollLoop | null {
    if (this.failure !== null) return null;
    if (this.loop === null) {
      try {
        this.loop = new EpollLoop(this.native, this.logger, this.options);
      } catch (error) {
        this.failure = errorMessage(error);
        return null;
      }
    }
    if (this.loop.isStopping) return null;
    this.holders++;
    return this.loop;
  }

  /** Why the epoll set could not be created, or null. */
  get failureReason(): string | null {
    return this.failure;
  }

  /** One holder lets go; the last one stops the loop (waking its wait) and closes what is left. */
  async release(): Promise<void> {
    if (this.holders === 0 || this.loop === null) return;
    this.holders--;
    if (this.holders === 0) await this.loop.stop();
  }

  /** How many descriptors the loop watches (0 without a loop). */
  get watchCount(): number {
    return this.loop?.watchCount ?? 0;
  }
}

/** The node's loop on the real kernel (libc is loaded on first use). */
export function createSharedEpollLoop(logger: Logger): SharedEpollLoop {
  return new SharedEpollLoop(createLibcNativeEvents(), logger.child({ component: 'epoll-loop' }));
}
