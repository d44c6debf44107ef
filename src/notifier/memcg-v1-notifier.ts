// The cgroup v1 memory threshold notifier: the kubelet's KernelMemcgNotification without its
// latency. Each memory.available / allocatableMemory.available threshold, hard and soft, is an
// eventfd registered on memory.usage_in_bytes of the node cgroup or the kubepods cgroup; all of them
// sit in one epoll set with one outstanding wait (epoll-loop.ts), and a crossing reaches onEvent as
// soon as the pool thread returns. Values come from the latest observation (memory-thresholds.ts)
// and are re-armed by the rules in rearm-policy.ts.

import { join } from 'node:path';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { Summary } from '../api/summary.js';
import type { Threshold } from '../api/threshold.js';
import type { MemoryThresholdNotifier, NotifierEvent } from '../daemon/ports.js';
import { errorMessage } from '../errors.js';
import { EPOLLERR, EPOLLHUP, EPOLLIN, type EventFd, type NativeEvents } from '../../native/native-events.js';
import type { EpollLoop, EpollLoopOptions, EpollWatch } from './epoll-loop.js';
import { registerMemcgThreshold } from '../../native/memcg-threshold.js';
import { computeMemoryThresholds, isProblem, type MemorySignal, type MemoryThresholdFigures } from '../api/memory-thresholds.js';
import { NotifierLifecycle } from './notifier-lifecycle.js';
import { rearmDecision } from '../api/rearm-policy.js';
import { SharedEpollLoop } from './shared-epoll-loop.js';

/** One page: a point moved past usage it was crossed at. */
const PAGE_BYTES = 4096n;

export interface MemcgV1NotifierOptions {
  /** The cgroup v1 memory hierarchy's mount point (`/sys/fs/cgroup/memory`). */
  readonly memoryMount: string;
  /** The node cgroup, relative to the mount point (`''` = the root cgroup), watched for memory.available. */
  readonly nodeCgroup: string;
  /** The kubepods cgroup, relative to the mount point, watched for allocatableMemory.available. */
  readonly podCgroupRoot: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly native: NativeEvents;
  readonly loop?: EpollLoopOptions;
  /** The node's one epoll loop, shared with the OOM kill watcher; a loop of its own without it. */
  readonly sharedLoop?: SharedEpollLoop;
}

/** One armed threshold, as reported by armedThresholds(). */
export interface ArmedMemcgThreshold {
  readonly description: string;
  readonly cgroupPath: string;
  readonly memcgThresholdBytes: bigint;
  readonly armedAtMs: number;
}

interface Armed extends ArmedMemcgThreshold {
  readonly watch: EpollWatch;
  crossedSinceArmed: boolean;
}

export class MemcgV1Notifier extends NotifierLifecycle implements MemoryThresholdNotifier {
  readonly mode = 'memcg-v1' as const;
  private readonly options: MemcgV1NotifierOptions;
  private readonly shared: SharedEpollLoop;
  private loop: EpollLoop | null = null;
  private loopUnavailable = false;
  private readonly armed = new Map<string, Armed>();
  /** Registrations in flight, per threshold: at most one each, so a threshold's arms never race. */
  private readonly arming = new Map<string, Promise<void>>();
  /** The thresholds the latest updateThresholds asked for. */
  private wanted = new Set<string>();

  constructor(options: MemcgV1NotifierOptions) {
    super(options.logger, 'memory threshold not armed', 'description');
    this.options = options;
    this.shared = options.sharedLoop ?? new SharedEpollLoop(options.native, options.logger, options.loop);
  }

  start(onEvent: (event: NotifierEvent) => void): void {
    if (!this.beginStart(onEvent)) return;
    const loop = this.ensureLoop();
    if (loop === null) return;
    loop.start();
    this.logger.info('created memoryThresholdNotifier', { mode: this.mode, nodeCgroup: this.cgroupPath('memory.available'), podCgroup: this.cgroupPath('allocatableMemory.available') });
  }

  /** memcg v1 thresholds only watch: the kernel does the same whether the agent acts or not. */
  setActing(_acting: boolean): void {}

  /**
   * Decides at once what to arm; the registrations themselves complete asynchronously (see
   * settled()). A threshold whose registration is still in flight is reconsidered at the next call.
   */
  updateThresholds(summary: Summary, thresholds: readonly Threshold[]): void {
    if (this.stopRequested) return;
    const loop = this.ensureLoop();
    if (loop === null) return;
    const computations = computeMemoryThresholds(summary, thresholds);
    this.wanted = new Set(computations.map((c) => c.target.description));
    for (const [description, armed] of this.armed) {
      if (this.wanted.has(description)) continue;
      loop.unwatch(armed.watch);
      this.armed.delete(description);
      this.problemResolved(description);
      this.logger.info('disarmed memory threshold', { description });
    }
    const nowMs = this.options.clock.nowMs();
    for (const computation of computations) {
      const description = computation.target.description;
      if (isProblem(computation)) {
        this.reportOnce(description, computation.problem);
        continue;
      }
      if (this.arming.has(description)) continue;
      const current = this.armed.get(description) ?? null;
      let target = computation;
      let decision = rearmDecision(current, computation.memcgThresholdBytes, nowMs);
      // Usage crossed this very point, yet the pass it woke found the threshold not met (the page
      // cache grew, or usage stands exactly at it): the kernel signals nothing more while usage
      // stays at or above a point, so the point moves one page up, where the next page charged is seen.
      if (decision === 'unchanged' && current !== null && current.crossedSinceArmed) {
        target = { ...computation, memcgThresholdBytes: computation.memcgThresholdBytes + PAGE_BYTES };
        decision = 'rearm';
      }
      if (decision === 'unchanged' || decision === 'too-soon') {
        this.problemResolved(description);
        continue;
      }
      // Never rejects: a registration nobody awaits must not become an unhandled rejection.
      const arming = this.arm(loop, target, nowMs)
        .catch((error: unknown) => this.logger.error('arming a memory threshold failed', { description, error: errorMessage(error) }))
        .finally(() => this.arming.delete(description));
      this.arming.set(description, arming);
    }
  }

  /** Resolves once every registration started so far has completed (armed, or failed and reported). */
  async settled(): Promise<void> {
    while (this.arming.size > 0) await Promise.all(this.arming.values());
  }

  stop(): Promise<void> {
    // In-flight registrations finish first (a registration write cannot be cancelled), then close their eventfds.
    return this.stopOnce(async () => {
      await this.settled();
      // The loop may go on for another holder: this notifier's descriptors go now.
      for (const armed of this.armed.values()) this.loop?.unwatch(armed.watch);
      this.armed.clear();
      if (this.loop !== null) await this.shared.release();
    });
  }

  /** What is armed now, for logs, `explain` and tests. */
  armedThresholds(): readonly ArmedMemcgThreshold[] {
    return [...this.armed.values()].map(({ description, cgroupPath, memcgThresholdBytes, armedAtMs }) => ({ description, cgroupPath, memcgThresholdBytes, armedAtMs }));
  }

  private async arm(loop: EpollLoop, figures: MemoryThresholdFigures, nowMs: number): Promise<void> {
    const description = figures.target.description;
    const cgroupPath = this.cgroupPath(figures.target.signal);
    let eventFd: EventFd;
    let usageAfterBytes: bigint | null;
    try {
      ({ eventFd, usageAfterBytes } = await registerMemcgThreshold(this.options.native, cgroupPath, figures.memcgThresholdBytes));
    } catch (error) {
      // The previous registration, if any, stays armed: a stale point beats none.
      this.reportOnce(description, `cannot arm the threshold on ${cgroupPath}: ${errorMessage(error)}`);
      return;
    }
    if (this.stopRequested || !this.wanted.has(description)) {
      this.options.native.close(eventFd);
      return;
    }
    let armed: Armed | null = null;
    try {
      const watch = loop.watch(eventFd, EPOLLIN, (events) => {
        if (armed !== null) this.onReady(armed, events);
      });
      armed = { description, cgroupPath, memcgThresholdBytes: figures.memcgThresholdBytes, armedAtMs: nowMs, watch, crossedSinceArmed: false };
    } catch (error) {
      this.reportOnce(description, `cannot watch the threshold on ${cgroupPath}: ${errorMessage(error)}`);
      return;
    }
    // The new registration is in place before the old one goes, so there is no unwatched gap.
    const previous = this.armed.get(description);
    if (previous !== undefined) loop.unwatch(previous.watch);
    this.armed.set(description, armed);
    this.problemResolved(description);
    this.logger.info('armed memory threshold', {
      description,
      cgroup: cgroupPath,
      memcgThresholdBytes: figures.memcgThresholdBytes.toString(),
      capacityBytes: figures.capacityBytes.toString(),
      inactiveFileBytes: figures.inactiveFileBytes.toString(),
      rearm: previous !== undefined,
    });
    // Usage passed the point while the registration waited for the kernel: the kernel will not
    // signal a crossing that has already happened, so it is reported as one now. Without this, a
    // notification that came just before the working set crossed (the page cache had grown since
    // arming) re-armed a point the leak then passed unseen, and nothing woke the agent until the
    // OOM killer.
    if (usageAfterBytes !== null && usageAfterBytes >= figures.memcgThresholdBytes) {
      this.logger.debug(`eviction manager: ${description} already passed when armed`, { usageBytes: usageAfterBytes.toString() });
      this.crossed(armed);
    }
  }

  private onReady(armed: Armed, events: number): void {
    if (this.armed.get(armed.description) !== armed) return;
    let crossings: bigint;
    try {
      // The counter accumulates (both directions, several crossings): read it to reset it, every time.
      crossings = this.options.native.readEventFd(armed.watch.fd as EventFd);
    } catch (error) {
      this.logger.error('cannot read a memory threshold eventfd', { description: armed.description, error: errorMessage(error) });
      return;
    }
    if (crossings === 0n && (events & (EPOLLERR | EPOLLHUP)) === 0) return;
    this.logger.debug(`eviction manager: ${armed.description} crossed`, { crossings: crossings.toString() });
    this.crossed(armed);
  }

  private crossed(armed: Armed): void {
    // Usage moved past an armed point: every armed value may now be stale, so each may re-arm at once.
    for (const other of this.armed.values()) other.crossedSinceArmed = true;
    const event: NotifierEvent = { description: armed.description, atMs: this.options.clock.nowMs() };
    this.onEvent?.(event);
  }

  private ensureLoop(): EpollLoop | null {
    if (this.loop !== null) return this.loop;
    if (this.loopUnavailable) return null;
    this.loop = this.shared.acquire();
    if (this.loop === null) {
      this.loopUnavailable = true;
      this.logger.error('cannot create the epoll set; memory threshold notifications are off', { error: this.shared.failureReason ?? 'the epoll loop is stopped' });
    }
    return this.loop;
  }

  private cgroupPath(signal: MemorySignal): string {
    return join(this.options.memoryMount, signal === 'memory.available' ? this.options.nodeCgroup : this.options.podCgroupRoot);
  }
}
