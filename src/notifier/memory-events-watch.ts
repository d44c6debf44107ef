// Watches one cgroup v2 `memory.events` or `memory.events.local` file and reports which of its
// counters went up (`low`, `high`, `max`, `oom`, `oom_kill`, `oom_group_kill`). The kernel notifies
// the file whenever it counts an event (mm/memcontrol.c memcg_memory_event → cgroup_file_notify →
// kernfs_notify), at most 100 times a second per file (a timer delivers the one held back, so none
// is lost); a descriptor held open then polls EPOLLERR|EPOLLPRI until it is read again
// (fs/kernfs/file.c kernfs_generic_poll), so the descriptor sits in the notifier's one epoll set
// and is read at offset 0 after every wake. `memory.events` counts the cgroup's descendants too;
// `memory.events.local` only the cgroup's own events (a `memory.high` the kubelet sets on a
// container with MemoryQoS raises `high` in every ancestor's memory.events, not in their .local).
// A removed cgroup reports EPOLLERR|EPOLLPRI for good and its file reads fail (ENODEV): the watch
// then ends and says so.

import { errorMessage } from '../errors.js';
import { parseMemoryStat } from '../host/memory-stat.js';
import { EPOLLPRI, type FileFd, type NativeEvents } from '../../native/native-events.js';
import type { EpollLoop, EpollWatch } from './epoll-loop.js';

/** The counters of one memory.events file, by key, exact. */
export type MemoryEventCounts = ReadonlyMap<string, bigint>;

export interface MemoryEventsChange {
  readonly counts: MemoryEventCounts;
  /** The keys whose count went up since the last read, in the file's order. */
  readonly increased: readonly string[];
}

export interface MemoryEventsWatchHandlers {
  /** Some counter went up. Runs on the main thread, right after the wake. */
  onChange(change: MemoryEventsChange): void;
  /** The file cannot be read any more (its cgroup was removed): the watch has ended. */
  onEnded(reason: string): void;
}

// memory.events holds six short lines; a page is plenty.
const READ_BUFFER_BYTES = 4096;
const decoder = new TextDecoder();

export class MemoryEventsWatch {
  private readonly buffer = new Uint8Array(READ_BUFFER_BYTES);
  private counts: MemoryEventCounts;
  private watch: EpollWatch | null = null;

  private constructor(
    private readonly loop: EpollLoop,
    private readonly native: NativeEvents,
    readonly path: string,
    private readonly fd: FileFd,
    private readonly handlers: MemoryEventsWatchHandlers,
  ) {
    // The first read sets the baseline (and clears a notification that came before the open).
    this.counts = this.read();
  }

  /**
   * Opens `path`, reads its counters, and adds it to the loop's epoll set. Throws (a NativeError)
   * when the file cannot be opened, read or watched; nothing is left open then.
   */
  static open(loop: EpollLoop, native: NativeEvents, path: string, handlers: MemoryEventsWatchHandlers): MemoryEventsWatch {
    const fd = native.openFile(path, 'read');
    let watch: MemoryEventsWatch;
    try {
      watch = new MemoryEventsWatch(loop, native, path, fd, handlers);
    } catch (error) {
      native.close(fd);
      throw error;
    }
    // From here the loop owns the descriptor (it closes it when adding fails, too).
    watch.watch = loop.watch(fd, EPOLLPRI, () => watch.onReady());
    return watch;
  }

  /** The counters as last read. */
  current(): MemoryEventCounts {
    return this.counts;
  }

  /** Whether the watch still runs. */
  get active(): boolean {
    return this.watch !== null;
  }

  /** Stops watching and closes the descriptor. Idempotent. */
  close(): void {
    if (this.watch === null) return;
    this.loop.unwatch(this.watch);
    this.watch = null;
  }

  private onReady(): void {
    if (this.watch === null) return;
    let counts: MemoryEventCounts;
    try {
      counts = this.read();
    } catch (error) {
      this.close();
      this.handlers.onEnded(`cannot read ${this.path}: ${errorMessage(error)}`);
      return;
    }
    const increased = [...counts].filter(([key, count]) => count > (this.counts.get(key) ?? 0n)).map(([key]) => key);
    this.counts = counts;
    if (increased.length > 0) this.handlers.onChange({ counts, increased });
  }

  private read(): MemoryEventCounts {
    const readBytes = this.native.readFromStart(this.fd, this.buffer);
    return parseMemoryStat(decoder.decode(this.buffer.subarray(0, readBytes)));
  }
}
