// The kill thread's work (kill-thread.ts runs it; the main side is kill-path.ts): one epoll set that
// holds the eventfds of the registered memory points and a wake-up eventfd, one blocking
// epoll_wait on this thread, and, when the kernel signals the wake point of a hard memory
// threshold, the plan the engine armed carried out without the main thread: one reading of the
// cgroup's usage and memory.stat confirms that the working set is past the threshold, the usage
// of every pod that could have overtaken the victim since it was ranked is read (the victim must
// still rank first on this moment's figures), the node lock is checked against the file it held,
// the shared word is swapped from armed to fired, and the victim's containers are signalled
// through pidfds, each process proven inside them first (process-signaller.ts). Everything else (the API, the Events, the logs) is the main thread's,
// told afterwards.

import type { HostFs } from '../host/host-fs.js';
import { parseCounter } from '../host/memory-limit.js';
import { inactiveFileKey, memoryStatValue, workingSetBytes } from '../host/memory-stat.js';
import { errorMessage } from '../errors.js';
import { EPOLLIN, type EpollFd, type EventFd, type FileFd, type NativeEvents } from '../../native/native-events.js';
import type { ProcessHandles } from '../../native/process-handles.js';
import { CONTROL_WORD, controlWord, generationOf, KillState, stateOf, WAKE_VERDICTS, type CrossingOutcome, type FromThread, type ThreadPlan, type ThreadRival, type ThreadThreshold, type ToThread, type WatchRole } from './kill-protocol.js';
import { ProcessSignaller } from './process-signaller.js';

export interface ArmedKillDeps {
  readonly native: NativeEvents;
  /** The host door the signaller reads cgroup.procs and /proc through. */
  readonly fs: HostFs;
  readonly handles: ProcessHandles;
  /** The shared words (kill-protocol.ts): which plan may fire, and how many wake crossings were judged. */
  readonly control: Int32Array;
  /** The main thread's wake-up eventfd (it owns it): written after each message it sends. */
  readonly wake: EventFd;
  readonly post: (message: FromThread) => void;
  /** The next message from the main thread, undefined when there is none. */
  readonly receive: () => ToThread | undefined;
  /** The monotonic clock, in nanoseconds (process.hrtime). */
  readonly nowNs: () => bigint;
  /** The `dev:ino` of the file at a path now, null when there is none (the node lock's check). */
  readonly fileId: (path: string) => string | null;
}

const WAKE_TOKEN = 0;
const MAX_EVENTS = 8;
// memory.stat of a cgroup is a few dozen lines; usage_in_bytes one number.
const STAT_BUFFER_BYTES = 8192;
const USAGE_BUFFER_BYTES = 64;
/** How many verdicts the first plan's warm-up reaches (about 10 µs each, on this thread, plus a read per rival)... */
const WARM_UP_VERDICTS = 500;
/** ...and, on a node of many pods, how many rivals' reads at most: fewer verdicts then. */
const WARM_UP_RIVAL_READS = 50_000;

type Verdict = { readonly act: 'none' } | { readonly act: 'decline'; readonly reason: string } | { readonly act: 'fire'; readonly usageBytes: bigint; readonly workingSetBytes: bigint };
const NOTHING: Verdict = { act: 'none' };

interface Watch {
  readonly description: string;
  readonly role: WatchRole;
  readonly fd: EventFd;
}

/** A threshold of the installed plan, with the descriptors it is confirmed through. */
interface InstalledThreshold extends ThreadThreshold {
  readonly usageFd: FileFd;
  readonly statFd: FileFd;
}

/**
 * A rival of the installed plan, with the descriptor of its usage, null when it could not be opened
 * (its memory.stat is opened only when needed), and its point as a number: at 1,000 pods the
 * rivals are read at every crossing, and numbers parse and compare in a fraction of BigInt's time.
 */
interface InstalledRival extends ThreadRival {
  readonly usageFd: FileFd | null;
  readonly overtakingBytes: number;
}

interface Installed {
  readonly generation: number;
  readonly plan: ThreadPlan;
  readonly thresholds: ReadonlyMap<string, InstalledThreshold>;
  readonly rivals: readonly InstalledRival[];
  readonly victimUsageFd: FileFd;
  readonly victimStatFd: FileFd;
  readonly signaller: ProcessSignaller;
}

const decoder = new TextDecoder();

export class ArmedKill {
  private readonly epoll: EpollFd;
  private readonly watches = new Map<number, Watch>();
  private nextToken = WAKE_TOKEN + 1;
  private installed: Installed | null = null;
  /** Kept-open files by path, shared by the plans that read them (the node's files never change). */
  private readonly files = new Map<string, FileFd>();
  private readonly statBuffer = new Uint8Array(STAT_BUFFER_BYTES);
  private readonly usageBuffer = new Uint8Array(USAGE_BUFFER_BYTES);
  private stopped = false;
  private warm = false;

  constructor(private readonly deps: ArmedKillDeps) {
    this.epoll = deps.native.createEpoll();
    try {
      deps.native.addToEpoll(this.epoll, deps.wake, EPOLLIN, WAKE_TOKEN);
    } catch (error) {
      deps.native.close(this.epoll);
      throw error;
    }
  }

  /**
   * One turn: waits (blocking this thread, at most `timeoutMs`) for the kernel or the main thread,
   * acts on the kernel's events first, then on the main thread's messages. False once stopped, with
   * every descriptor it owns closed.
   */
  step(timeoutMs: number): boolean {
    if (this.stopped) return false;
    let ready;
    try {
      ready = this.deps.native.waitEpollBlocking(this.epoll, MAX_EVENTS, timeoutMs);
    } catch (error) {
      this.deps.post({ kind: 'error', message: `epoll_wait failed; the kill path stops: ${errorMessage(error)}` });
      this.close();
      return false;
    }
    const wokeAtNs = this.deps.nowNs();
    for (const event of ready) {
      if (event.token === WAKE_TOKEN) {
        this.deps.native.readEventFd(this.deps.wake);
        continue;
      }
      const watch = this.watches.get(event.token);
      if (watch === undefined) continue;
      try {
        this.woken(watch, wokeAtNs);
      } catch (error) {
        this.deps.post({ kind: 'error', message: errorMessage(error) });
      }
    }
    for (let message = this.deps.receive(); message !== undefined; message = this.deps.receive()) this.guarded(() => this.apply(message));
    if (this.stopped) this.close();
    return !this.stopped;
  }

  private guarded(work: () => void): void {
    try {
      work();
    } catch (error) {
      this.deps.post({ kind: 'error', message: errorMessage(error) });
    }
  }

  private apply(message: ToThread): void {
    switch (message.kind) {
      case 'plan':
        this.install(message.generation, message.plan);
        return;
      case 'watch':
        this.watch(message.description, message.role, message.eventFd as EventFd);
        // Usage was past the point once registered: the kernel will not signal it, so it is confirmed now.
        if (message.passed) this.deps.post({ kind: 'crossed', description: message.description, role: 'wake', outcome: this.confirm(message.description, this.deps.nowNs()) });
        return;
      case 'unwatch':
        for (const [token, watch] of this.watches) if (watch.description === message.description && watch.role === message.role) this.unwatch(token);
        return;
      case 'stop':
        this.stopped = true;
        return;
    }
  }

  private watch(description: string, role: WatchRole, fd: EventFd): void {
    const token = this.nextToken++;
    try {
      this.deps.native.addToEpoll(this.epoll, fd, EPOLLIN, token);
    } catch (error) {
      this.deps.native.close(fd);
      throw error;
    }
    // The new registration is in the set before the old one goes: no moment unwatched.
    for (const [other, watch] of this.watches) if (watch.description === description && watch.role === role) this.unwatch(other);
    this.watches.set(token, { description, role, fd });
  }

  private unwatch(token: number): void {
    const watch = this.watches.get(token);
    if (watch === undefined) return;
    this.watches.delete(token);
    this.quietly(() => this.deps.native.removeFromEpoll(this.epoll, watch.fd));
    this.quietly(() => this.deps.native.close(watch.fd));
  }

  // Opens what the plan reads (reusing what is open), closes what no plan reads any more, then
  // makes the plan the armed one, unless the main thread took it back or moved on meanwhile.
  private install(generation: number, plan: ThreadPlan): void {
    const thresholds = new Map<string, InstalledThreshold>();
    for (const threshold of plan.thresholds) thresholds.set(threshold.description, { ...threshold, usageFd: this.file(threshold.usagePath), statFd: this.file(threshold.statPath) });
    const victimUsagePath = `${plan.podDir}/memory.usage_in_bytes`;
    const victimStatPath = `${plan.podDir}/memory.stat`;
    // A rival's cgroup may be gone already (the pod change is on its way): that plan then declines.
    const rivals = plan.rivals.map((rival) => ({ ...rival, usageFd: this.fileIfAny(rival.usagePath), overtakingBytes: Number(rival.overtakingWorkingSetBytes) }));
    const installed: Installed = {
      generation,
      plan,
      thresholds,
      rivals,
      victimUsageFd: this.file(victimUsagePath),
      victimStatFd: this.file(victimStatPath),
      signaller: ProcessSignaller.at(plan.place, this.deps.fs, this.deps.handles),
    };
    const used = new Set([victimUsagePath, victimStatPath, ...plan.thresholds.flatMap((t) => [t.usagePath, t.statPath]), ...plan.rivals.flatMap((r) => [r.usagePath, r.statPath])]);
    for (const [path, fd] of this.files) {
      if (used.has(path)) continue;
      this.files.delete(path);
      this.quietly(() => this.deps.native.close(fd));
    }
    this.installed = installed;
    if (!this.warm) this.warmUp(installed);
    const { control } = this.deps;
    for (;;) {
      const word = Atomics.load(control, CONTROL_WORD);
      const state = stateOf(word);
      // Armed in the place of the plan armed before (which could fire until now), or of none.
      const replaces = (state === KillState.pending && generationOf(word) === generation) || (state === KillState.armed && generationOf(word) !== generation);
      if (!replaces) return;
      if (Atomics.compareExchange(control, CONTROL_WORD, word, controlWord(generation, KillState.armed)) === word) return;
    }
  }

  // The first plan's verdicts, reached many times over on its real files as if every threshold
  // were met, acting on none: the code a crossing runs is then compiled and optimized rather than
  // interpreted (from the wake-up to the signal, measured 100 to 500 µs on the first crossings of
  // a cold thread). Once per thread: it stays warm.
  private warmUp(installed: Installed): void {
    this.warm = true;
    const verdicts = Math.max(20, Math.min(WARM_UP_VERDICTS, Math.floor(WARM_UP_RIVAL_READS / (installed.rivals.length + 1))));
    for (let i = 0; i < verdicts; i++) {
      for (const threshold of installed.thresholds.values()) this.verdict(installed, { ...threshold, wakeUsageBytes: 0n, workingSetLimitBytes: -1n });
    }
  }

  private file(path: string): FileFd {
    let fd = this.files.get(path);
    if (fd === undefined) {
      fd = this.deps.native.openFile(path, 'read');
      this.files.set(path, fd);
    }
    return fd;
  }

  private fileIfAny(path: string): FileFd | null {
    try {
      return this.file(path);
    } catch {
      return null;
    }
  }

  private woken(watch: Watch, wokeAtNs: bigint): void {
    const outcome = watch.role === 'wake' ? this.confirm(watch.description, wokeAtNs) : 'approach';
    // The counter accumulates (crossings both ways): read to reset it, every time, once the crossing was acted on.
    this.deps.native.readEventFd(watch.fd);
    this.deps.post({ kind: 'crossed', description: watch.description, role: watch.role, outcome });
    if (watch.role !== 'wake') return;
    // Judged: a main thread standing aside for it goes on.
    Atomics.add(this.deps.control, WAKE_VERDICTS, 1);
    Atomics.notify(this.deps.control, WAKE_VERDICTS);
  }

  // A crossing of a wake point: fire when the plan is armed, the working set is past the threshold,
  // and nothing says the victim may no longer be the engine's choice.
  private confirm(description: string, wokeAtNs: bigint): CrossingOutcome {
    const installed = this.installed;
    if (installed === null) return 'not armed';
    const { control } = this.deps;
    const armedWord = controlWord(installed.generation, KillState.armed);
    if (Atomics.load(control, CONTROL_WORD) !== armedWord) return 'not armed';
    const threshold = installed.thresholds.get(description);
    if (threshold === undefined) return 'not armed';
    const verdict = this.verdict(installed, threshold);
    if (verdict.act === 'none') return 'not met';
    if (verdict.act === 'decline') {
      this.deps.post({ kind: 'declined', generation: installed.generation, description, reason: verdict.reason });
      return 'declined';
    }
    if (Atomics.compareExchange(control, CONTROL_WORD, armedWord, controlWord(installed.generation, KillState.fired)) !== armedWord) return 'not armed';
    const issuedAtNs = this.deps.nowNs();
    const { plan } = installed;
    const outcome = installed.signaller.signalTrees(plan.containers, plan.signal, new Set(), { release: plan.signal === 'SIGKILL' });
    this.deps.post({
      kind: 'fired',
      generation: installed.generation,
      description,
      usageBytes: verdict.usageBytes,
      workingSetBytes: verdict.workingSetBytes,
      wokeAtNs,
      issuedAtNs,
      signalled: outcome.signalled,
      refusals: outcome.refusals,
    });
    // The report is queued: a main thread waiting on the word may take it now.
    Atomics.store(control, CONTROL_WORD, controlWord(installed.generation, KillState.reported));
    Atomics.notify(control, CONTROL_WORD);
    return 'fired';
  }

  // What one reading of the threshold's cgroup says. The kernel signals crossings both ways: below
  // the wake point, the crossing was downwards.
  private verdict(installed: Installed, threshold: InstalledThreshold): Verdict {
    const usageBytes = this.counter(threshold.usageFd);
    if (usageBytes === null || usageBytes < threshold.wakeUsageBytes) return NOTHING;
    const workingSetBytes = this.workingSet(usageBytes, threshold.statFd);
    if (workingSetBytes === null || workingSetBytes <= threshold.workingSetLimitBytes) return NOTHING;
    const reason = this.distrust(installed);
    return reason === null ? { act: 'fire', usageBytes, workingSetBytes } : { act: 'decline', reason };
  }

  /**
   * Why the plan cannot be carried out on this reading, or null. The victim ranked first when the
   * plan was made; each rival would rank before it at a working set of its own, and sooner by as
   * much as the victim shrank since (or at once, once the victim fell back to its memory request).
   * So the victim is read, then each rival's usage, which bounds its working set from above; a
   * rival at or past its point has its working set read. The node's figures alone could not tell:
   * memory one pod freed and another took leaves them unchanged. Then the node lock: the file this
   * agent held when the plan was armed must still be the lock file.
   */
  private distrust(installed: Installed): string | null {
    const { plan } = installed;
    if (installed.rivals.length > 0) {
      const victimUsage = this.counter(installed.victimUsageFd);
      const victim = victimUsage === null ? null : this.workingSet(victimUsage, installed.victimStatFd);
      if (victim === null) return `the working set of ${plan.victim.key} cannot be read`;
      const shrink = plan.victimWorkingSetBytes > victim ? plan.victimWorkingSetBytes - victim : 0n;
      if (plan.victimShrinkAllowanceBytes !== null && shrink >= plan.victimShrinkAllowanceBytes) return `${plan.victim.key} fell back to its memory request since it was ranked`;
      const shrinkBytes = Number(shrink);
      for (const rival of installed.rivals) {
        const pointBytes = rival.overtakingBytes - shrinkBytes;
        const usage = rival.usageFd === null ? null : this.usage(rival.usageFd);
        if (usage !== null && usage < pointBytes) continue;
        const statFd = usage === null ? null : this.fileIfAny(rival.statPath);
        const workingSet = usage === null || statFd === null ? null : this.workingSet(BigInt(usage), statFd);
        if (workingSet === null) return `the working set of ${rival.key} cannot be read`;
        if (workingSet >= BigInt(pointBytes)) return `${rival.key} may rank before ${plan.victim.key} now: its working set ${workingSet} bytes is past the ${pointBytes} at which it would`;
      }
    }
    if (plan.lock !== null && this.deps.fileId(plan.lock.path) !== plan.lock.fileId) return `the node lock file ${plan.lock.path} is not the one this agent locked`;
    return null;
  }

  private counter(fd: FileFd): bigint | null {
    try {
      const read = this.deps.native.readFromStart(fd, this.usageBuffer);
      return parseCounter(decoder.decode(this.usageBuffer.subarray(0, read))) ?? null;
    } catch {
      return null;
    }
  }

  // A usage file's number, parsed from its bytes (no decoding, no BigInt); null when it cannot be read or holds no number.
  private usage(fd: FileFd): number | null {
    let read: number;
    try {
      read = this.deps.native.readFromStart(fd, this.usageBuffer);
    } catch {
      return null;
    }
    const buffer = this.usageBuffer;
    let value = 0;
    let digits = 0;
    for (; digits < read; digits++) {
      const c = buffer[digits] as number;
      if (c < 48 || c > 57) break;
      value = value * 10 + (c - 48);
    }
    return digits === 0 ? null : value;
  }

  // The working set as the observer computes it (cAdvisor): usage less the hierarchical inactive file pages.
  private workingSet(usageBytes: bigint, statFd: FileFd): bigint | null {
    try {
      const read = this.deps.native.readFromStart(statFd, this.statBuffer);
      const inactive = memoryStatValue(decoder.decode(this.statBuffer.subarray(0, read)), inactiveFileKey('v1'));
      return workingSetBytes(usageBytes, inactive ?? 0n);
    } catch {
      return null;
    }
  }

  private close(): void {
    for (const token of [...this.watches.keys()]) this.unwatch(token);
    for (const fd of this.files.values()) this.quietly(() => this.deps.native.close(fd));
    this.files.clear();
    this.installed = null;
    this.quietly(() => this.deps.native.close(this.epoll));
    this.stopped = true;
  }

  private quietly(work: () => void): void {
    try {
      work();
    } catch {
      // Closing a descriptor already gone: nothing is held either way.
    }
  }
}
