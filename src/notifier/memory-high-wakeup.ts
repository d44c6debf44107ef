// The opt-in kernel wake-up of the cgroup v2 notifier (`notifier.memoryHighWakeup`): the kubepods
// cgroup's memory.high is set just above the usage at which its working set crosses the nearest
// allocatable threshold, and its memory.events.local is watched for `high`. When the pods' charges
// pass that point, the kernel counts a `high` event on kubepods and notifies the file
// (mm/memcontrol.c reclaim_high → memcg_memory_event), so the agent wakes on the crossing, as the
// memcg v1 threshold wakes it; `.local` leaves out the `high` events of the containers below (the
// kubelet's MemoryQoS gives containers a memory.high of their own).
//
// memory.high changes what the kernel does past it: charges there are reclaimed and throttled
// (docs/notifier.md measures by how much), which is why it is off by default. So the agent also
// owns undoing it:
// - it sets memory.high only where it is `max` (nobody else's; the kubelet's MemoryQoS writes
//   memory.min on kubepods, never memory.high) and only with the cgroupfs driver: with the
//   systemd driver, systemd owns kubepods.slice's memory attributes and rewrites them;
// - before each write it records what it writes and what was there in an extended attribute of
//   the cgroup (`trusted.kube-eviction-agent.memory-high`), and the next start restores a value a
//   killed agent left, if it is still the one recorded;
// - it restores `max` on stop, at process exit, while the agent does not act (a dry run: the
//   throttling would then hold the pods in place of the kubelet's eviction and the kernel's OOM
//   kill), and whenever the point it would set is at or past memory.max; and it never writes over a
//   value it did not write (someone changed it: it stops).
// Writes go off the main thread: lowering memory.high below the usage makes the writer reclaim.

import { join } from 'node:path';
import type { Logger } from '../api/logger.js';
import { errorMessage } from '../errors.js';
import type { FileFd, NativeEvents } from '../../native/native-events.js';
import type { EpollLoop } from './epoll-loop.js';
import { crossingWorkingSetBytes } from './fast-check-schedule.js';
import type { MemoryThresholdFigures } from '../api/memory-thresholds.js';
import { MemoryEventsWatch } from './memory-events-watch.js';

/** The extended attribute that records a memory.high the agent set. */
export const MEMORY_HIGH_XATTR = 'trusted.kube-eviction-agent.memory-high';
const PAGE_BYTES = 4096n;
const UNLIMITED = 'max';

export interface MemoryHighWakeupOptions {
  /** The kubepods cgroup's directory. */
  readonly cgroupDir: string;
  readonly native: NativeEvents;
  readonly loop: EpollLoop;
  readonly logger: Logger;
  /** kubepods counted a `high` event: check now. */
  readonly onHigh: () => void;
}

interface Marker {
  readonly original: string;
  readonly written: string;
}

export class MemoryHighWakeup {
  private readonly options: MemoryHighWakeupOptions;
  private readonly highPath: string;
  private events: MemoryEventsWatch | null = null;
  /** What this agent last wrote (null: nothing of its own is in place). */
  private written: string | null = null;
  /** The value the next write should put in place, and whether one is in flight. */
  private wanted: string = UNLIMITED;
  private writing: Promise<void> | null = null;
  private gaveUp = false;
  private readonly onExit = (): void => this.restoreSync();

  private constructor(options: MemoryHighWakeupOptions) {
    this.options = options;
    this.highPath = join(options.cgroupDir, 'memory.high');
  }

  /**
   * Restores what a previous run left, checks that memory.high is free, and watches
   * memory.events.local. Null (and the reason logged) when the wake-up cannot be used here.
   */
  static start(options: MemoryHighWakeupOptions): MemoryHighWakeup | null {
    const wakeup = new MemoryHighWakeup(options);
    try {
      wakeup.recover();
      const current = wakeup.readHigh();
      if (current !== UNLIMITED) {
        options.logger.warn('the memory.high wake-up stays off: kubepods has a memory.high the agent did not set', { path: wakeup.highPath, memoryHigh: current });
        return null;
      }
      wakeup.events = MemoryEventsWatch.open(options.loop, options.native, join(options.cgroupDir, 'memory.events.local'), {
        onChange: ({ increased }) => {
          if (increased.includes('high')) options.onHigh();
        },
        onEnded: (reason) => options.logger.warn('the memory.high wake-up ended', { reason }),
      });
    } catch (error) {
      options.logger.warn('the memory.high wake-up stays off', { path: wakeup.highPath, error: errorMessage(error) });
      return null;
    }
    process.on('exit', wakeup.onExit);
    return wakeup;
  }

  /** The memory.high in place that this agent wrote, if any. */
  get armedValue(): string | null {
    return this.written;
  }

  /**
   * Sets memory.high just above the usage at which the working set crosses the nearest of
   * `figures` (kubepods' allocatable thresholds), the inactive page cache taken from the figures
   * or, when given, a fresher reading; `max` when that point is at or past `limitBytes`.
   */
  arm(figures: readonly MemoryThresholdFigures[], limitBytes: bigint | null, fresher?: { readonly usageBytes: bigint; readonly workingSetBytes: bigint }): void {
    if (this.gaveUp || figures.length === 0) return;
    const nearest = figures.reduce((a, b) => (crossingWorkingSetBytes(b) < crossingWorkingSetBytes(a) ? b : a));
    const inactiveFileBytes = fresher === undefined ? nearest.inactiveFileBytes : fresher.usageBytes - fresher.workingSetBytes;
    // Just above: one page past the usage of the crossing, page-aligned as the kernel keeps it.
    const pointBytes = ((crossingWorkingSetBytes(nearest) + inactiveFileBytes) / PAGE_BYTES + 1n) * PAGE_BYTES;
    this.want(limitBytes !== null && pointBytes >= limitBytes ? UNLIMITED : pointBytes.toString());
  }

  /** Puts `max` back (if memory.high is still what this agent wrote); the next arm() sets it again. */
  disarm(): void {
    if (!this.gaveUp) this.want(UNLIMITED);
  }

  /** Puts `max` back (if memory.high is still what this agent wrote) and stops watching. */
  async stop(): Promise<void> {
    this.gaveUp = true;
    this.events?.close();
    this.events = null;
    await this.writing;
    this.restoreSync();
    process.off('exit', this.onExit);
  }

  private want(value: string): void {
    this.wanted = value;
    if (this.writing !== null) return;
    this.writing = this.writeWanted().finally(() => (this.writing = null));
  }

  // Writes until what is in place is what is wanted (the wish may change during a write).
  private async writeWanted(): Promise<void> {
    while (!this.gaveUp && (this.written ?? UNLIMITED) !== this.wanted) {
      const value = this.wanted;
      try {
        if (!this.stillOurs()) return;
        if (value === UNLIMITED) {
          await this.writeHigh(UNLIMITED);
          this.options.native.removeXattr(this.options.cgroupDir, MEMORY_HIGH_XATTR);
          this.written = null;
        } else {
          this.options.native.setXattr(this.options.cgroupDir, MEMORY_HIGH_XATTR, JSON.stringify({ original: UNLIMITED, written: value } satisfies Marker));
          await this.writeHigh(value);
          this.written = value;
        }
        this.options.logger.debug('kubepods memory.high set', { memoryHigh: value });
      } catch (error) {
        this.options.logger.warn('cannot set kubepods memory.high; the memory.high wake-up stops', { path: this.highPath, memoryHigh: value, error: errorMessage(error) });
        this.gaveUp = true;
        this.restoreSync();
        return;
      }
    }
  }

  // memory.high is what this agent left there (or max): anything else is someone else's now.
  private stillOurs(): boolean {
    const current = this.readHigh();
    if (current === (this.written ?? UNLIMITED)) return true;
    this.options.logger.warn('kubepods memory.high was changed by someone else; the memory.high wake-up stops and leaves it', { path: this.highPath, memoryHigh: current, wrote: this.written });
    this.gaveUp = true;
    this.written = null;
    this.options.native.removeXattr(this.options.cgroupDir, MEMORY_HIGH_XATTR);
    return false;
  }

  // A previous run killed before it could restore: put back what it recorded, if its value is still there.
  private recover(): void {
    const raw = this.options.native.getXattr(this.options.cgroupDir, MEMORY_HIGH_XATTR);
    if (raw === null) return;
    const marker = parseMarker(raw);
    const current = this.readHigh();
    if (marker !== null && current === marker.written) {
      this.writeHighSync(marker.original);
      this.options.logger.info('restored the kubepods memory.high a previous run left', { path: this.highPath, was: current, restored: marker.original });
    }
    this.options.native.removeXattr(this.options.cgroupDir, MEMORY_HIGH_XATTR);
  }

  // Synchronous, for stop and process exit: writing `max` never reclaims.
  private restoreSync(): void {
    if (this.written === null) return;
    try {
      if (this.readHigh() === this.written) this.writeHighSync(UNLIMITED);
      this.options.native.removeXattr(this.options.cgroupDir, MEMORY_HIGH_XATTR);
    } catch (error) {
      this.options.logger.error('cannot restore kubepods memory.high', { path: this.highPath, memoryHigh: this.written, error: errorMessage(error) });
    }
    this.written = null;
  }

  private readHigh(): string {
    const { native } = this.options;
    const fd = native.openFile(this.highPath, 'read');
    try {
      const buffer = new Uint8Array(64);
      return new TextDecoder().decode(buffer.subarray(0, native.readFromStart(fd, buffer))).trim();
    } finally {
      native.close(fd);
    }
  }

  private async writeHigh(value: string): Promise<void> {
    const fd = this.options.native.openFile(this.highPath, 'write');
    try {
      await this.options.native.writeFileAsync(fd, new TextEncoder().encode(value));
    } finally {
      this.options.native.close(fd);
    }
  }

  private writeHighSync(value: string): void {
    const fd: FileFd = this.options.native.openFile(this.highPath, 'write');
    try {
      this.options.native.writeFile(fd, new TextEncoder().encode(value));
    } finally {
      this.options.native.close(fd);
    }
  }
}

function parseMarker(raw: string): Marker | null {
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return null;
    const { original, written } = parsed as Record<string, unknown>;
    // Only values memory.high can hold: a byte count or max.
    const valid = (v: unknown): v is string => typeof v === 'string' && /^(max|\d{1,20})$/.test(v);
    return valid(original) && valid(written) ? { original, written } : null;
  } catch {
    return null;
  }
}
