// The cgroup v2 notifier, where memcg thresholds do not exist. Two sources wake the loop: a PSI
// trigger on the node cgroup's memory.pressure (and the kubepods cgroup's, when it has one), held in
// the same single-wait epoll set as everything else and reported as EPOLLPRI; and a cheap check every
// fastCheckIntervalMs that reads memory.current and memory.stat and compares the working set with
// `capacity - threshold` of each memory threshold, reporting each crossing, in either direction.
// PSI reports memory stalls, which happen before the working set reaches a threshold when the page
// cache is thrashing; the fast check catches growth that stalls nothing.

import { join } from 'node:path';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { Summary } from '../api/summary.js';
import type { Threshold } from '../api/threshold.js';
import type { MemoryThresholdNotifier, NotifierEvent } from '../daemon/ports.js';
import { errorMessage, NativeError } from '../errors.js';
import { EPOLLERR, EPOLLPRI, type FileFd, type NativeEvents } from '../../native/native-events.js';
import { cgroupWorkingSetSource, readWorkingSetBytes, rootWorkingSetSource, type ReadText, type WorkingSetSource } from './cgroup-v2-memory.js';
import { DEFAULT_EPOLL_LOOP_OPTIONS, EpollLoop, type EpollLoopOptions, type EpollWatch } from './epoll-loop.js';
import { computeMemoryThresholds, isProblem, workingSetMeetsThreshold, type MemorySignal, type MemoryThresholdFigures } from './memory-thresholds.js';
import { NotifierLifecycle } from './notifier-lifecycle.js';
import { openPsiTrigger, unprivilegedWindowMs } from './psi-trigger.js';

const ERRNO_EINVAL = 22;

export interface PsiNotifierOptions {
  /** The cgroup v2 mount point (`/sys/fs/cgroup`). */
  readonly cgroupRoot: string;
  /** The node cgroup, relative to cgroupRoot (`''` = the root cgroup). */
  readonly nodeCgroup: string;
  /** The kubepods cgroup, relative to cgroupRoot. */
  readonly podCgroupRoot: string;
  /** Where /proc is: a root cgroup without memory.pressure uses `<procRoot>/pressure/memory`. */
  readonly procRoot: string;
  readonly psiStallThresholdMs: number;
  readonly psiWindowMs: number;
  readonly fastCheckIntervalMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly native: NativeEvents;
  readonly readText: ReadText;
  /** Whether a file exists (the root cgroup's memory.current and memory.pressure, the kubepods memory.pressure). */
  readonly fileExists: (path: string) => boolean;
  readonly loop?: EpollLoopOptions;
}

/** One armed PSI trigger, as reported by psiTriggers(). */
export interface ArmedPsiTrigger {
  readonly description: string;
  readonly pressurePath: string;
  /** The window the kernel accepted (wider than configured when it lacks CAP_SYS_RESOURCE). */
  readonly windowMs: number;
}

interface Trigger extends ArmedPsiTrigger {
  readonly watch: EpollWatch;
}

export const PSI_DESCRIPTION = 'psi memory pressure';
export const PSI_ALLOCATABLE_DESCRIPTION = 'psi allocatable memory pressure';

export class PsiNotifier extends NotifierLifecycle implements MemoryThresholdNotifier {
  readonly mode = 'psi' as const;
  private readonly options: PsiNotifierOptions;
  private loop: EpollLoop | null = null;
  private readonly triggers: Trigger[] = [];
  /** The latest figures per threshold description, from updateThresholds. */
  private figures = new Map<string, MemoryThresholdFigures>();
  /** Whether each threshold was met at the last fast check. */
  private readonly met = new Map<string, boolean>();
  private readonly sources = new Map<MemorySignal, WorkingSetSource>();
  private cancelFastCheck: (() => void) | null = null;
  private checking: Promise<void> | null = null;
  private triggerArming: Promise<unknown> = Promise.resolve();

  constructor(options: PsiNotifierOptions) {
    super(options.logger, 'memory threshold not watched', 'key');
    this.options = options;
  }

  start(onEvent: (event: NotifierEvent) => void): void {
    if (!this.beginStart(onEvent)) return;
    try {
      this.loop = new EpollLoop(this.options.native, this.logger, this.options.loop ?? DEFAULT_EPOLL_LOOP_OPTIONS);
    } catch (error) {
      this.logger.error('cannot create the epoll set; PSI triggers are off, the fast check still runs', { error: errorMessage(error) });
    }
    const loop = this.loop;
    if (loop !== null) {
      const arms = [this.armTrigger(loop, PSI_DESCRIPTION, this.pressurePath(this.options.nodeCgroup))];
      const podPressure = join(this.options.cgroupRoot, this.options.podCgroupRoot, 'memory.pressure');
      if (this.options.fileExists(podPressure)) arms.push(this.armTrigger(loop, PSI_ALLOCATABLE_DESCRIPTION, podPressure));
      this.triggerArming = Promise.all(arms)
        .then(() => {
          this.logger.info('created memoryThresholdNotifier', {
            mode: this.mode,
            psiTriggers: this.triggers.map((t) => t.pressurePath),
            fastCheckIntervalMs: this.options.fastCheckIntervalMs,
          });
        })
        .catch((error: unknown) => this.logger.error('arming a PSI trigger failed', { error: errorMessage(error) }));
      loop.start();
    }
    this.scheduleFastCheck();
  }

  updateThresholds(summary: Summary, thresholds: readonly Threshold[]): void {
    if (this.stopRequested) return;
    const next = new Map<string, MemoryThresholdFigures>();
    for (const computation of computeMemoryThresholds(summary, thresholds)) {
      const description = computation.target.description;
      if (isProblem(computation)) {
        this.reportOnce(description, computation.problem);
        // Keep checking against the last good figures, as the kubelet keeps its last armed notifier.
        const previous = this.figures.get(description);
        if (previous !== undefined) next.set(description, previous);
        continue;
      }
      this.problemResolved(description);
      next.set(description, computation);
    }
    for (const description of this.met.keys()) if (!next.has(description)) this.met.delete(description);
    this.figures = next;
  }

  /** Resolves once the PSI triggers asked for at start are armed (or failed and reported). */
  async settled(): Promise<void> {
    await this.triggerArming;
  }

  stop(): Promise<void> {
    return this.stopOnce(async () => {
      this.cancelFastCheck?.();
      this.cancelFastCheck = null;
      // A trigger write in flight cannot be cancelled: let it finish, then close everything.
      const loopStopped = this.triggerArming.then(() => this.loop?.stop());
      await Promise.all([loopStopped, this.checking ?? Promise.resolve()]);
      this.triggers.length = 0;
    });
  }

  /** The armed PSI triggers, for logs and tests. */
  psiTriggers(): readonly ArmedPsiTrigger[] {
    return this.triggers.map(({ description, pressurePath, windowMs }) => ({ description, pressurePath, windowMs }));
  }

  /**
   * One fast check now: reads each watched cgroup's working set and reports every threshold whose
   * met/unmet state changed since the last check (a threshold starts unmet, so one already met when
   * first checked is reported once).
   */
  async checkNow(): Promise<void> {
    const bySignal = new Map<MemorySignal, MemoryThresholdFigures[]>();
    for (const figures of this.figures.values()) {
      const list = bySignal.get(figures.target.signal) ?? [];
      list.push(figures);
      bySignal.set(figures.target.signal, list);
    }
    for (const [signal, list] of bySignal) {
      const workingSetBytes = await this.readWorkingSet(signal);
      if (workingSetBytes === null || this.stopRequested) continue;
      for (const figures of list) {
        const description = figures.target.description;
        // The figures may have been replaced while reading; compare with the current ones.
        const current = this.figures.get(description);
        if (current === undefined) continue;
        const met = workingSetMeetsThreshold(current, workingSetBytes);
        if (met === (this.met.get(description) ?? false)) continue;
        this.met.set(description, met);
        this.logger.debug(`eviction manager: ${description} crossed`, { workingSetBytes: workingSetBytes.toString(), met });
        this.onEvent?.({ description, atMs: this.options.clock.nowMs() });
      }
    }
  }

  private scheduleFastCheck(): void {
    if (this.stopRequested) return;
    this.cancelFastCheck = this.options.clock.after(this.options.fastCheckIntervalMs, () => {
      this.cancelFastCheck = null;
      // The next check is scheduled when this one ends, so slow reads never pile up.
      this.checking = this.checkNow()
        .catch((error: unknown) => this.logger.error('the memory fast check failed', { error: errorMessage(error) }))
        .finally(() => {
          this.checking = null;
          this.scheduleFastCheck();
        });
    });
  }

  private async readWorkingSet(signal: MemorySignal): Promise<bigint | null> {
    const source = this.workingSetSource(signal);
    try {
      const workingSetBytes = await readWorkingSetBytes(this.options.readText, source);
      this.problemResolved(`read ${signal}`);
      return workingSetBytes;
    } catch (error) {
      this.reportOnce(`read ${signal}`, `cannot read the working set: ${errorMessage(error)}`);
      return null;
    }
  }

  private workingSetSource(signal: MemorySignal): WorkingSetSource {
    const known = this.sources.get(signal);
    if (known !== undefined) return known;
    const relative = signal === 'memory.available' ? this.options.nodeCgroup : this.options.podCgroupRoot;
    const cgroupDir = join(this.options.cgroupRoot, relative);
    // The root cgroup has no memory.current: its usage is emulated from its memory.stat, as the observer does.
    const source: WorkingSetSource =
      relative === '' && !this.options.fileExists(join(cgroupDir, 'memory.current')) ? rootWorkingSetSource(cgroupDir) : cgroupWorkingSetSource(cgroupDir);
    this.sources.set(signal, source);
    return source;
  }

  private pressurePath(cgroup: string): string {
    const path = join(this.options.cgroupRoot, cgroup, 'memory.pressure');
    // The root cgroup's pressure is the system-wide one; older kernels have no root memory.pressure.
    if (cgroup === '' && !this.options.fileExists(path)) return join(this.options.procRoot, 'pressure', 'memory');
    return path;
  }

  private async armTrigger(loop: EpollLoop, description: string, pressurePath: string): Promise<void> {
    const { native, psiStallThresholdMs, psiWindowMs } = this.options;
    let fd: FileFd;
    let windowMs = psiWindowMs;
    try {
      fd = await openPsiTrigger(native, pressurePath, psiStallThresholdMs, windowMs);
    } catch (error) {
      const widenedMs = unprivilegedWindowMs(windowMs);
      if (!(error instanceof NativeError && error.errno === ERRNO_EINVAL) || widenedMs === null) {
        this.reportOnce(description, `cannot arm the PSI trigger on ${pressurePath}: ${errorMessage(error)}`);
        return;
      }
      // EINVAL for a valid window means no CAP_SYS_RESOURCE: the kernel wants a multiple of 2 s.
      try {
        fd = await openPsiTrigger(native, pressurePath, psiStallThresholdMs, widenedMs);
      } catch (retryError) {
        this.reportOnce(description, `cannot arm the PSI trigger on ${pressurePath}: ${errorMessage(error)}; with a ${widenedMs} ms window: ${errorMessage(retryError)}`);
        return;
      }
      windowMs = widenedMs;
      this.logger.warn('the kernel refused the PSI window; without CAP_SYS_RESOURCE it must be a multiple of 2 s, so a wider one is used', {
        pressurePath,
        psiWindowMs,
        windowMs,
      });
    }
    if (this.stopRequested) {
      this.options.native.close(fd);
      return;
    }
    let trigger: Trigger | null = null;
    try {
      const watch = loop.watch(fd, EPOLLPRI, (events) => {
        if (trigger !== null) this.onPressure(loop, trigger, events);
      });
      trigger = { description, pressurePath, windowMs, watch };
      this.triggers.push(trigger);
    } catch (error) {
      this.reportOnce(description, `cannot watch the PSI trigger on ${pressurePath}: ${errorMessage(error)}`);
    }
  }

  private onPressure(loop: EpollLoop, trigger: Trigger, events: number): void {
    if ((events & EPOLLERR) !== 0) {
      // The cgroup was removed (or the trigger is broken): it will not fire again.
      loop.unwatch(trigger.watch);
      this.triggers.splice(this.triggers.indexOf(trigger), 1);
      this.logger.warn('a PSI trigger stopped working', { description: trigger.description, pressurePath: trigger.pressurePath });
      return;
    }
    if ((events & EPOLLPRI) === 0) return;
    this.logger.debug(`eviction manager: ${trigger.description}`, { pressurePath: trigger.pressurePath });
    this.onEvent?.({ description: trigger.description, atMs: this.options.clock.nowMs() });
  }
}
