// The cgroup v2 notifier, where memcg thresholds do not exist. Three sources wake the loop: a PSI
// trigger on the node cgroup's memory.pressure (and the kubepods cgroup's, when it has one), held in
// the same single-wait epoll set as everything else and reported as EPOLLPRI; the fast check
// (working-set-fast-check.ts), which reads the working set of each watched cgroup at an interval
// that shrinks as it nears a threshold and reports each crossing, in either direction; and, when
// `memoryHighWakeup` is on, a `high` event of the kubepods cgroup, whose memory.high it sets at
// the crossing (memory-high-wakeup.ts). PSI reports memory stalls, which happen before the working
// set reaches a threshold when the page cache is thrashing; the fast check catches growth that
// stalls nothing.

import { join } from 'node:path';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { Summary } from '../api/summary.js';
import type { Threshold } from '../api/threshold.js';
import type { MemoryThresholdNotifier, NotifierEvent } from '../daemon/ports.js';
import { errorMessage, NativeError } from '../errors.js';
import { EPOLLERR, EPOLLPRI, type FileFd, type NativeEvents } from '../../native/native-events.js';
import type { OpenFileDoor } from '../host/kept-open-file.js';
import { CgroupMemoryReader, cgroupWorkingSetSource, rootWorkingSetSource } from './cgroup-v2-memory.js';
import type { EpollLoop, EpollLoopOptions, EpollWatch } from './epoll-loop.js';
import type { FastCheckTiming } from './fast-check-schedule.js';
import { MemoryHighWakeup } from './memory-high-wakeup.js';
import { computeMemoryThresholds, isProblem, type MemorySignal, type MemoryThresholdFigures } from '../api/memory-thresholds.js';
import { NotifierLifecycle } from './notifier-lifecycle.js';
import { openPsiTrigger, unprivilegedWindowMs } from './psi-trigger.js';
import { SharedEpollLoop } from './shared-epoll-loop.js';
import { WorkingSetFastCheck, type FastCheckOutcome } from './working-set-fast-check.js';

const ERRNO_EPERM = 1;
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
  readonly fastCheck: FastCheckTiming;
  /** Set kubepods' memory.high at the allocatable crossing and wake on its `high` events (opt-in). */
  readonly memoryHighWakeup: boolean;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly native: NativeEvents;
  /** Where the fast check's files are read (kept open). */
  readonly files: OpenFileDoor;
  /** Whether a file exists (the root cgroup's memory.current and memory.pressure, the kubepods memory.pressure). */
  readonly fileExists: (path: string) => boolean;
  readonly loop?: EpollLoopOptions;
  /** The node's one epoll loop, shared with the OOM kill watcher; a loop of its own without it. */
  readonly sharedLoop?: SharedEpollLoop;
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
  private readonly shared: SharedEpollLoop;
  private loop: EpollLoop | null = null;
  private readonly triggers: Trigger[] = [];
  /** The latest figures per threshold description, from updateThresholds. */
  private figures = new Map<string, MemoryThresholdFigures>();
  private readonly readers = new Map<MemorySignal, CgroupMemoryReader>();
  private readonly fastCheck: WorkingSetFastCheck;
  private memoryHigh: MemoryHighWakeup | null = null;
  private acting = true;
  private triggerArming: Promise<unknown> = Promise.resolve();

  constructor(options: PsiNotifierOptions) {
    super(options.logger, 'memory threshold not watched', 'key');
    this.options = options;
    this.shared = options.sharedLoop ?? new SharedEpollLoop(options.native, options.logger, options.loop);
    this.fastCheck = new WorkingSetFastCheck({
      timing: options.fastCheck,
      clock: options.clock,
      logger: options.logger,
      readerFor: (signal) => this.readerFor(signal),
      onCrossing: (description, met, workingSetBytes) => {
        this.logger.debug(`eviction manager: ${description} crossed`, { workingSetBytes: workingSetBytes.toString(), met });
        this.onEvent?.({ description, atMs: this.options.clock.nowMs() });
      },
      problem: (key, problem) => (problem === null ? this.problemResolved(key) : this.reportOnce(key, problem)),
    });
  }

  start(onEvent: (event: NotifierEvent) => void): void {
    if (!this.beginStart(onEvent)) return;
    this.loop = this.shared.acquire();
    if (this.loop === null) this.logger.error('cannot create the epoll set; PSI triggers and the memory.high wake-up are off, the fast check still runs', { error: this.shared.failureReason ?? 'the epoll loop is stopped' });
    const loop = this.loop;
    if (loop !== null) {
      const arms = [this.armTrigger(loop, PSI_DESCRIPTION, this.pressurePath(this.options.nodeCgroup))];
      const podPressure = join(this.options.cgroupRoot, this.options.podCgroupRoot, 'memory.pressure');
      if (this.options.fileExists(podPressure)) arms.push(this.armTrigger(loop, PSI_ALLOCATABLE_DESCRIPTION, podPressure));
      if (this.options.memoryHighWakeup) this.startMemoryHighWakeup(loop);
      loop.start();
      this.triggerArming = Promise.all(arms)
        .then(() => {
          this.logger.info('created memoryThresholdNotifier', {
            mode: this.mode,
            psiTriggers: this.triggers.map((t) => t.pressurePath),
            fastCheckMinIntervalMs: this.options.fastCheck.minIntervalMs,
            fastCheckMaxIntervalMs: this.options.fastCheck.maxIntervalMs,
            fastCheckAllocationBytesPerSecond: this.options.fastCheck.allocationBytesPerSecond,
            memoryHighWakeup: this.memoryHigh !== null,
          });
        })
        .catch((error: unknown) => this.logger.error('arming a PSI trigger failed', { error: errorMessage(error) }));
    }
    this.fastCheck.start();
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
    this.figures = next;
    this.fastCheck.setFigures(next);
    this.armMemoryHigh();
  }

  /**
   * The memory.high wake-up throttles the pods past the crossing to buy time for the eviction that
   * follows. While the agent does not act (a dry run) no eviction follows, and the throttling would
   * hold the pods there in place of the kubelet's eviction and the kernel's OOM kill: memory.high
   * goes back to `max`, and the fast check watches the allocatable threshold itself.
   */
  setActing(acting: boolean): void {
    this.acting = acting;
    if (this.memoryHigh === null) return;
    this.fastCheck.setKernelWatched('allocatableMemory.available', acting);
    if (acting) this.armMemoryHigh();
    else this.memoryHigh.disarm();
  }

  /** Resolves once the PSI triggers asked for at start are armed (or failed and reported). */
  async settled(): Promise<void> {
    await this.triggerArming;
  }

  stop(): Promise<void> {
    return this.stopOnce(async () => {
      this.fastCheck.stop();
      // Undone first: nothing of the agent's may stay on the kubepods cgroup.
      await this.memoryHigh?.stop();
      // A trigger write in flight cannot be cancelled: let it finish, then close everything.
      await this.triggerArming.then(async () => {
        // The loop may go on for another holder: this notifier's descriptors go now.
        for (const trigger of this.triggers) this.loop?.unwatch(trigger.watch);
        if (this.loop !== null) await this.shared.release();
      });
      this.triggers.length = 0;
      for (const reader of this.readers.values()) reader.close();
      this.readers.clear();
    });
  }

  /** The armed PSI triggers, for logs and tests. */
  psiTriggers(): readonly ArmedPsiTrigger[] {
    return this.triggers.map(({ description, pressurePath, windowMs }) => ({ description, pressurePath, windowMs }));
  }

  /** The kubepods memory.high the notifier set and keeps, or null (off, not armed, or refused). */
  memoryHighArmed(): string | null {
    return this.memoryHigh?.armedValue ?? null;
  }

  /** How many checks ran, and how many of them read memory.stat (for logs and tests). */
  fastCheckCounts(): { readonly checks: number; readonly statReads: number } {
    return { checks: this.fastCheck.checks, statReads: this.fastCheck.statReads };
  }

  /**
   * One fast check now: reads each watched cgroup's memory and reports every threshold whose
   * met/unmet state changed since the last check (a threshold starts unmet, so one already met when
   * first checked is reported once).
   */
  checkNow(): FastCheckOutcome {
    return this.fastCheck.checkNow();
  }

  private startMemoryHighWakeup(loop: EpollLoop): void {
    // systemd owns a slice's memory attributes (MemoryHigh=) and rewrites them behind the agent.
    if (this.options.podCgroupRoot.endsWith('.slice')) {
      this.logger.warn('the memory.high wake-up stays off with the systemd cgroup driver: systemd owns the kubepods slice\'s memory.high', { podCgroupRoot: this.options.podCgroupRoot });
      return;
    }
    this.memoryHigh = MemoryHighWakeup.start({
      cgroupDir: join(this.options.cgroupRoot, this.options.podCgroupRoot),
      native: this.options.native,
      loop,
      logger: this.logger,
      onHigh: () => {
        if (this.stopRequested) return;
        this.logger.debug('eviction manager: kubepods memory.high reached');
        this.fastCheck.checkNow();
        // The cache may have grown past the point instead: move it with the fresh reading.
        this.armMemoryHigh(true);
      },
    });
    this.fastCheck.setKernelWatched('allocatableMemory.available', this.memoryHigh !== null && this.acting);
  }

  private armMemoryHigh(fresh = false): void {
    if (this.memoryHigh === null || !this.acting) return;
    const allocatable = [...this.figures.values()].filter((f) => f.target.signal === 'allocatableMemory.available');
    const capacityBytes = allocatable[0]?.capacityBytes ?? null;
    let reading: { usageBytes: bigint; workingSetBytes: bigint } | undefined;
    if (fresh) {
      try {
        reading = this.readerFor('allocatableMemory.available').read();
      } catch {
        reading = undefined;
      }
    }
    // A threshold met keeps the point where it is: the throttling past it is what buys the time.
    if (allocatable.some((f) => this.fastCheck.isMet(f.target.description))) return;
    this.memoryHigh.arm(allocatable, capacityBytes, reading);
  }

  private readerFor(signal: MemorySignal): CgroupMemoryReader {
    const known = this.readers.get(signal);
    if (known !== undefined) return known;
    const relative = signal === 'memory.available' ? this.options.nodeCgroup : this.options.podCgroupRoot;
    const cgroupDir = join(this.options.cgroupRoot, relative);
    // The root cgroup has no memory.current: its usage is emulated from its memory.stat, as the observer does.
    const source = relative === '' && !this.options.fileExists(join(cgroupDir, 'memory.current')) ? rootWorkingSetSource(cgroupDir) : cgroupWorkingSetSource(cgroupDir);
    const reader = new CgroupMemoryReader(this.options.files, source);
    this.readers.set(signal, reader);
    return reader;
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
        // Before Linux 6.5 only CAP_SYS_RESOURCE may open a pressure file for writing.
        const hint = error instanceof NativeError && error.errno === ERRNO_EPERM ? ' (on kernels before 6.5, arming a PSI trigger needs CAP_SYS_RESOURCE)' : '';
        this.reportOnce(description, `cannot arm the PSI trigger on ${pressurePath}: ${errorMessage(error)}${hint}`);
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
