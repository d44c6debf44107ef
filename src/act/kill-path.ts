// The kill path, main side (the KillPath port): the thread that carries the plan out (kill-thread.ts,
// started at the first plan), the memcg registrations it waits on, and the shared word that decides
// who acts. Registering a point waits for an RCU grace period in the kernel, so it is made here, on
// the libuv pool, by the re-arming policy the notifier follows (src/api/rearm-policy.ts), and the
// eventfd is handed to the thread once registered; the thread never waits for the kernel but in its
// epoll_wait. The victim's container cgroups are found here, by the terminator, when the plan is armed.
//
// Stopping writes the thread's wake-up eventfd: the thread closes what it holds and ends, well
// under a second; a registration still in flight is closed when it completes.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { podKey } from '../api/pod.js';
import { rearmDecision, type ArmedThresholdState } from '../api/rearm-policy.js';
import type { KillPath, KillPathPlan, KillPathReport, KillPathThreshold } from '../daemon/ports.js';
import { errorMessage } from '../errors.js';
import { createLibcNativeEvents } from '../../native/libc-native-events.js';
import { registerMemcgThreshold } from '../../native/memcg-threshold.js';
import type { EventFd, NativeEvents } from '../../native/native-events.js';
import { CONTROL_WORD, controlWord, generationOf, KillState, nextGeneration, SHARED_WORDS, stateOf, WAKE_VERDICTS, type FromThread, type ThreadPlan, type ThreadRival, type ToThread, type WatchRole } from './kill-protocol.js';
import type { KillThreadData } from './kill-thread.js';
import type { PodTerminator } from './pod-terminator.js';

export interface KillPathContext {
  /** The cgroup v1 memory hierarchy's mount point (`/sys/fs/cgroup/memory`). */
  readonly memoryMount: string;
  /** The node cgroup (memory.available) and the kubepods cgroup (allocatableMemory.available), relative to it. */
  readonly nodeCgroup: string;
  readonly podCgroupRoot: string;
  /** The agent's terminator: it finds the victim's containers and the other pods' cgroups, and keeps ended what the thread signalled. */
  readonly terminator: Pick<PodTerminator, 'prepare' | 'podCgroupDirs'>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly native?: NativeEvents;
}

/** How long the main thread waits for a kill being carried out to be reported (it takes microseconds). */
const COLLECT_WAIT_MS = 200;
/**
 * How long the main thread stands aside, its own notification of a crossing in hand, for the
 * thread to judge it: the thread takes 0.5 to 5 ms from its wake-up (most of it reading the pods
 * that could have overtaken the victim), but on a busy node the two
 * would race for the same core, and a main thread that ran its shortcut first answered the
 * crossing a millisecond or more later than the thread would have.
 */
const STAND_ASIDE_MS = 20;
/** How long a stop waits for the thread to end before ending it by force. */
const STOP_WAIT_MS = 1000;

// The thread's script: this module's compiled sibling, or, when this module runs from its
// TypeScript source (the test runner), the build's copy.
function threadScript(): URL {
  const sibling = new URL('./kill-thread.js', import.meta.url);
  if (existsSync(fileURLToPath(sibling))) return sibling;
  return new URL('../../dist/src/act/kill-thread.js', import.meta.url);
}

interface Registered extends ArmedThresholdState {
  crossedSinceArmed: boolean;
}

interface Thread {
  readonly worker: Worker;
  readonly port: MessagePort;
  readonly wake: EventFd;
  readonly exited: Promise<void>;
}

export class ThreadedKillPath implements KillPath {
  private readonly native: NativeEvents;
  private readonly log: Logger;
  private readonly control = new Int32Array(new SharedArrayBuffer(SHARED_WORDS * Int32Array.BYTES_PER_ELEMENT));
  private thread: Thread | null = null;
  private threadFailure: string | null = null;
  private onReport: ((report: KillPathReport) => void) | null = null;
  private generation = 0;
  /** The plans that may still report, by generation (the armed one, and the one replacing it). */
  private readonly plans = new Map<number, KillPathPlan>();
  /** What is registered for each point (`role description`), and the registrations in flight. */
  private readonly registered = new Map<string, Registered>();
  private readonly registering = new Map<string, Promise<void>>();
  /** The points the latest plan wants. */
  private wanted = new Set<string>();
  private stopping: Promise<void> | null = null;
  /** The wake crossings the thread had judged when the main thread last heard of one itself. */
  private verdictsAtNotification = 0;

  constructor(private readonly context: KillPathContext) {
    this.native = context.native ?? createLibcNativeEvents();
    this.log = context.logger.child({ component: 'kill-path' });
  }

  start(onReport: (report: KillPathReport) => void): void {
    this.onReport = onReport;
  }

  get armed(): boolean {
    return stateOf(Atomics.load(this.control, CONTROL_WORD)) === KillState.armed;
  }

  arm(plan: KillPathPlan): string | null {
    if (this.stopping !== null) return 'the kill path is stopping';
    const prepared = this.context.terminator.prepare(plan.victim);
    if (!prepared.ok) return prepared.reason;
    if (prepared.value.containers.length === 0) return `no container of ${podKey(plan.victim)} found in its cgroup yet`;
    const rivals: ThreadRival[] = [];
    const rivalDirs = this.context.terminator.podCgroupDirs(plan.rivals.map((r) => r.pod));
    for (const [i, rival] of plan.rivals.entries()) {
      const dir = rivalDirs[i] ?? null;
      // A pod whose memory cannot be read at the crossing could rank first unseen.
      if (dir === null) return `no cgroup of ${podKey(rival.pod)} found to read its memory at the crossing`;
      rivals.push({ key: podKey(rival.pod), usagePath: join(dir, 'memory.usage_in_bytes'), statPath: join(dir, 'memory.stat'), overtakingWorkingSetBytes: rival.overtakingWorkingSetBytes });
    }
    const thread = this.ensureThread();
    if (thread === null) return `the kill path's thread cannot run: ${this.threadFailure ?? 'unknown'}`;
    // A plan that fired is reported before another is armed (its report names it).
    this.collect();
    if (stateOf(Atomics.load(this.control, CONTROL_WORD)) === KillState.fired) return 'a kill is being carried out';
    const generation = nextGeneration(this.generation);
    for (;;) {
      const word = Atomics.load(this.control, CONTROL_WORD);
      // An armed plan stays armed until the thread has this one ready; otherwise nothing fires until then.
      if (stateOf(word) === KillState.armed) break;
      if (Atomics.compareExchange(this.control, CONTROL_WORD, word, controlWord(generation, KillState.pending)) === word) break;
    }
    this.generation = generation;
    const armedNow = generationOf(Atomics.load(this.control, CONTROL_WORD));
    for (const kept of [...this.plans.keys()]) if (kept !== armedNow) this.plans.delete(kept);
    this.plans.set(generation, plan);
    const threadPlan: ThreadPlan = {
      victim: { key: podKey(plan.victim), uid: plan.victim.metadata.uid ?? '' },
      podDir: prepared.value.podDir,
      containers: prepared.value.containers,
      signal: plan.gracePeriodMs > 0 ? 'SIGTERM' : 'SIGKILL',
      thresholds: plan.thresholds.map((t) => ({
        description: t.description,
        usagePath: join(this.cgroupPath(t), 'memory.usage_in_bytes'),
        statPath: join(this.cgroupPath(t), 'memory.stat'),
        wakeUsageBytes: t.wakeUsageBytes,
        workingSetLimitBytes: t.workingSetLimitBytes,
      })),
      rivals,
      victimWorkingSetBytes: plan.victimWorkingSetBytes,
      victimShrinkAllowanceBytes: plan.victimShrinkAllowanceBytes,
      lock: plan.lock,
      place: prepared.value.place,
    };
    this.send(thread, { kind: 'plan', generation, plan: threadPlan });
    this.registerPoints(thread, plan.thresholds);
    return null;
  }

  disarm(): boolean {
    for (;;) {
      const word = Atomics.load(this.control, CONTROL_WORD);
      const state = stateOf(word);
      if (state === KillState.idle) return true;
      if (state === KillState.fired || state === KillState.reported) return false;
      if (Atomics.compareExchange(this.control, CONTROL_WORD, word, controlWord(generationOf(word), KillState.idle)) === word) return true;
    }
  }

  standAside(description: string): void {
    const thread = this.thread;
    if (thread === null) return;
    const judged = Atomics.load(this.control, WAKE_VERDICTS);
    // Judged since the main thread last heard of a crossing: that was this one.
    const alreadyJudged = judged !== this.verdictsAtNotification;
    this.verdictsAtNotification = judged;
    if (!alreadyJudged && this.armed && this.plans.get(generationOf(Atomics.load(this.control, CONTROL_WORD)))?.thresholds.some((t) => t.description === description) === true) {
      // Asleep, so the thread has the core; woken by its verdict, or at the bound.
      Atomics.wait(this.control, WAKE_VERDICTS, judged, STAND_ASIDE_MS);
      this.verdictsAtNotification = Atomics.load(this.control, WAKE_VERDICTS);
    }
    this.collect();
  }

  collect(): void {
    const thread = this.thread;
    if (thread === null) return;
    this.drain(thread);
    const word = Atomics.load(this.control, CONTROL_WORD);
    if (stateOf(word) !== KillState.fired) return;
    // Its signals are going out (microseconds): the report follows at once.
    Atomics.wait(this.control, CONTROL_WORD, word, COLLECT_WAIT_MS);
    this.drain(thread);
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.disarm();
      this.wanted = new Set();
      await this.settled();
      const thread = this.thread;
      if (thread === null) return;
      this.send(thread, { kind: 'stop' });
      let timer: NodeJS.Timeout | undefined;
      const ended = await Promise.race([thread.exited.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), STOP_WAIT_MS)))]);
      clearTimeout(timer);
      if (!ended) {
        this.log.error('the kill path thread did not stop in time; ending it', { waitedMs: STOP_WAIT_MS });
        await thread.worker.terminate();
      }
      this.drain(thread);
      thread.port.close();
      this.quietly(() => this.native.close(thread.wake));
      this.thread = null;
    })();
    return this.stopping;
  }

  /** Resolves once every registration started so far has completed (handed to the thread, or closed). */
  async settled(): Promise<void> {
    while (this.registering.size > 0) await Promise.all(this.registering.values());
  }

  private ensureThread(): Thread | null {
    if (this.thread !== null) return this.thread;
    if (this.threadFailure !== null) return null;
    let wake: EventFd | null = null;
    try {
      wake = this.native.createEventFd();
      const { port1, port2 } = new MessageChannel();
      const data: KillThreadData = { port: port2, control: this.control.buffer as SharedArrayBuffer, wake };
      const worker = new Worker(threadScript(), { workerData: data, transferList: [port2], name: 'kill-path' });
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.on('error', (error) => this.failed(`the kill path thread failed: ${errorMessage(error)}`));
      worker.once('exit', (code) => {
        if (this.stopping === null) this.failed(`the kill path thread ended (exit code ${code})`);
      });
      // Delivered as they come while the main thread is free; collect() takes them at once when it is not.
      port1.on('message', (message: FromThread) => this.receivedQuietly(message));
      // Neither keeps the process alive: the agent stops them.
      worker.unref();
      port1.unref();
      const thread: Thread = { worker, port: port1, wake, exited };
      this.thread = thread;
      return thread;
    } catch (error) {
      if (wake !== null) this.quietly(() => this.native.close(wake as EventFd));
      this.threadFailure = errorMessage(error);
      this.log.error('cannot start the kill path thread; memory notifications are answered by the main thread', { err: this.threadFailure });
      return null;
    }
  }

  // The thread is gone: nothing armed can fire, and the main thread answers every crossing.
  private failed(reason: string): void {
    if (this.threadFailure !== null) return;
    this.threadFailure = reason;
    this.disarm();
    this.log.error('the kill path stopped; memory notifications are answered by the main thread', { reason });
    this.onReport?.({ kind: 'failed', reason });
  }

  private send(thread: Thread, message: ToThread): void {
    thread.port.postMessage(message);
    try {
      this.native.signalEventFd(thread.wake, 1n);
    } catch (error) {
      this.log.warn('cannot wake the kill path thread; it reads the message at its next wake-up', { err: errorMessage(error) });
    }
  }

  private drain(thread: Thread): void {
    for (let received = receiveMessageOnPort(thread.port); received !== undefined; received = receiveMessageOnPort(thread.port)) this.receivedQuietly(received.message as FromThread);
  }

  private receivedQuietly(message: FromThread): void {
    try {
      this.received(message);
    } catch (error) {
      this.log.error('handling a kill path report failed', { err: errorMessage(error) });
    }
  }

  private received(message: FromThread): void {
    switch (message.kind) {
      case 'fired': {
        const plan = this.plans.get(message.generation);
        const threshold = plan?.thresholds.find((t) => t.description === message.description);
        if (plan === undefined || threshold === undefined) {
          this.log.error('the kill path reported a kill of a plan it no longer knows', { generation: message.generation });
          return;
        }
        const refused = message.refusals.length === 0 ? undefined : message.refusals.slice(0, 3).map((r) => (r.pid === 0 ? r.reason : `pid ${r.pid}: ${r.reason}`)).join('; ');
        this.onReport?.({
          kind: 'killed',
          plan,
          threshold,
          usageBytes: message.usageBytes,
          workingSetBytes: message.workingSetBytes,
          wokeAtMs: this.clockTimeOf(message.wokeAtNs),
          issuedAtMs: this.clockTimeOf(message.issuedAtNs),
          wokeAtNs: message.wokeAtNs,
          issuedAtNs: message.issuedAtNs,
          termination: refused === undefined ? { signalled: message.signalled } : { signalled: message.signalled, refused },
        });
        return;
      }
      case 'declined': {
        const plan = this.plans.get(message.generation);
        const threshold = plan?.thresholds.find((t) => t.description === message.description);
        if (plan !== undefined && threshold !== undefined) this.onReport?.({ kind: 'declined', plan, threshold, reason: message.reason });
        return;
      }
      case 'crossed': {
        const registered = this.registered.get(pointKey(message.role, message.description));
        if (registered !== undefined) registered.crossedSinceArmed = true;
        this.log.debug('kill path woken', { description: message.description, point: message.role, outcome: message.outcome });
        if (message.role === 'approach') {
          const threshold = this.plans.get(this.generation)?.thresholds.find((t) => t.description === message.description);
          if (threshold !== undefined) this.onReport?.({ kind: 'approach', threshold });
        }
        return;
      }
      case 'error':
        this.log.error('kill path thread', { err: message.message });
        return;
    }
  }

  // The wake and approach points the plan's thresholds want, registered by the re-arming policy;
  // those no plan wants any more are closed.
  private registerPoints(thread: Thread, thresholds: readonly KillPathThreshold[]): void {
    const nowMs = this.context.clock.nowMs();
    const points = thresholds.flatMap((t) => [
      { threshold: t, role: 'wake' as const, bytes: t.wakeUsageBytes },
      ...(t.approachUsageBytes === null ? [] : [{ threshold: t, role: 'approach' as const, bytes: t.approachUsageBytes }]),
    ]);
    this.wanted = new Set(points.map((p) => pointKey(p.role, p.threshold.description)));
    for (const [key] of this.registered) {
      if (this.wanted.has(key)) continue;
      this.registered.delete(key);
      const [role, ...description] = key.split(' ');
      this.send(thread, { kind: 'unwatch', role: role as WatchRole, description: description.join(' ') });
    }
    for (const { threshold, role, bytes } of points) {
      const key = pointKey(role, threshold.description);
      if (this.registering.has(key)) continue;
      const current = this.registered.get(key) ?? null;
      // Each point moves only with its value, never a page up as the notifier's does after a crossing
      // its pass found not met: the thread reads the working set itself, and a wake point above
      // the notifier's would let the main thread hear of the crossing first.
      const point = ['arm', 'rearm'].includes(rearmDecision(current, bytes, nowMs)) ? bytes : null;
      if (point === null) continue;
      const registration = this.register(thread, threshold, role, point, nowMs).finally(() => this.registering.delete(key));
      this.registering.set(key, registration);
    }
  }

  private async register(thread: Thread, threshold: KillPathThreshold, role: WatchRole, pointBytes: bigint, nowMs: number): Promise<void> {
    const key = pointKey(role, threshold.description);
    let eventFd: EventFd;
    let usageAfterBytes: bigint | null;
    try {
      ({ eventFd, usageAfterBytes } = await registerMemcgThreshold(this.native, this.cgroupPath(threshold), pointBytes));
    } catch (error) {
      // What was registered stays: a stale point beats none.
      this.log.warn('cannot register a kill path point', { description: threshold.description, role, err: errorMessage(error) });
      return;
    }
    if (this.stopping !== null || this.thread !== thread || !this.wanted.has(key)) {
      this.quietly(() => this.native.close(eventFd));
      return;
    }
    this.registered.set(key, { memcgThresholdBytes: pointBytes, armedAtMs: nowMs, crossedSinceArmed: false });
    const passed = role === 'wake' && usageAfterBytes !== null && usageAfterBytes >= pointBytes;
    this.send(thread, { kind: 'watch', description: threshold.description, role, eventFd, passed });
  }

  private cgroupPath(threshold: KillPathThreshold): string {
    return join(this.context.memoryMount, threshold.signal === 'memory.available' ? this.context.nodeCgroup : this.context.podCgroupRoot);
  }

  // A monotonic instant of the thread, on the injected clock.
  private clockTimeOf(ns: bigint): number {
    return this.context.clock.nowMs() - Number(process.hrtime.bigint() - ns) / 1e6;
  }

  private quietly(work: () => void): void {
    try {
      work();
    } catch {
      // A descriptor already closed.
    }
  }
}

function pointKey(role: WatchRole, description: string): string {
  return `${role} ${description}`;
}
