// Finds every kernel OOM kill on the node within milliseconds and reports each once, with what
// the kernel said about it. Three sources, measured here (docs/oom-kills.md):
// - the kernel log (/dev/kmsg, in the node's one epoll set): the only source of the victim's PID,
//   process name, constraint and both cgroups, read 4 to 13 ms after the kill; the line naming the
//   cgroups is rate-limited by the kernel (10 OOM reports per 5 s), the kill line is not;
// - the OOM notification: on cgroup v1 an eventfd on each container cgroup's memory.oom_control,
//   which the kernel signals when an OOM starts in the container or any ancestor, before it picks a
//   victim (so before the log); on cgroup v2 memory.events of the pods' cgroup (and of the node's,
//   when it is not the root), which changes on every kill below it;
// - the `oom_kill` counters of the container cgroups, read after each notification and on a
//   periodic scan: the authority on how many kills each cgroup took, and the safety net for a
//   node-wide OOM on cgroup v1, which notifies no cgroup. The scan reads them only when the
//   machine's own count of OOM kills (/proc/vmstat `oom_kill`, raised by the kernel with every
//   cgroup's) has moved: an idle node costs one read instead of one per container.
// A kill the counters found waits a little for its log line (kernelLogWaitMs) so it is reported
// once with everything; a log line whose kill the counters already account for is not reported twice.

import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { CgroupLevel, KernelOomKill, OomCgroup, OomKillSource, OomKillWatcher } from '../daemon/ports.js';
import { containerIdCandidates } from '../api/container-id.js';
import { errorMessage } from '../errors.js';
import type { HostFs } from '../host/host-fs.js';
import { parseOomKillCount, type KernelLogRecord, type KilledProcessLine, type OomKillLine, type OomLogLine } from '../host/kernel-log.js';
import { placeInPodTree } from '../host/pod-cgroup-names.js';
import { EPOLLIN, type EventFd, type NativeEvents } from '../../native/native-events.js';
import type { EpollLoop, EpollWatch } from './epoll-loop.js';
import { MemoryEventsWatch } from './memory-events-watch.js';
import { KernelLogReader } from './kernel-log-reader.js';
import { listContainerCgroups, readCgroupMemory, readOomKillCount, type CgroupVersionOfMemory } from './oom-cgroup-files.js';
import { registerOomControl } from './oom-control.js';
import type { SharedEpollLoop } from './shared-epoll-loop.js';

export interface OomKillWatcherOptions {
  readonly version: CgroupVersionOfMemory;
  /** The memory hierarchy's root on the agent's filesystem (`/host/sys/fs/cgroup/memory` on v1). */
  readonly memoryRoot: string;
  /** The node cgroup, relative to memoryRoot (`''`: the root, on a real node). */
  readonly nodeCgroup: string;
  /** The pods' cgroup, relative to memoryRoot (`kubepods`, `kubepods.slice`). */
  readonly podCgroupRoot: string;
  /** The kernel log device, or null not to read it. */
  readonly kernelLogPath: string | null;
  /** How often the pod tree is walked again and every counter re-read (when the machine's count moved). */
  readonly scanIntervalMs: number;
  /**
   * A file whose `oom_kill` line counts every OOM kill on the machine (/proc/vmstat, Linux 4.13
   * and later), or null to re-read every counter on every scan.
   */
  readonly machineKillCountPath: string | null;
  /** How long a kill found by the counters waits for its kernel log line. */
  readonly kernelLogWaitMs: number;
  readonly fs: HostFs;
  readonly native: NativeEvents;
  readonly loop: SharedEpollLoop;
  readonly clock: Clock;
  /** CLOCK_MONOTONIC in µs (process.hrtime), to place the kernel log's timestamps (µs since boot). */
  readonly monotonicUs: () => bigint;
  readonly logger: Logger;
}

// After a notification the kill lands once the kernel has printed its report, milliseconds later.
const RESCAN_DELAYS_MS = [5, 25, 100, 500, 2000];
// `oom-kill:` lines kept at most while they wait for their `Killed process` line (printed right
// after), the oldest let go first.
const MAX_DETAILS_KEPT = 64;
// The memory.events counters of an OOM: the kernel counts `oom` when it runs out, and `oom_kill`
// (`oom_group_kill` with memory.oom.group) for each kill in the cgroup's tree.
const OOM_EVENT_KEYS = new Set(['oom', 'oom_kill', 'oom_group_kill']);

interface Watched {
  readonly path: string;
  readonly dir: string;
  readonly podUid: string;
  readonly name: string;
  /** The kills accounted for so far. */
  count: bigint;
  /** v1: the memory.oom_control eventfd. */
  watch: EpollWatch | null;
}

/** A kill from the kernel log. */
interface LogKill {
  readonly killed: KilledProcessLine;
  readonly details: OomKillLine | null;
  readonly atMs: number;
  readonly readAtMs: number;
}

/** A kill the counters found, waiting for its log line. */
interface CounterKill {
  readonly cgroup: Watched;
  readonly foundAtMs: number;
  readonly source: OomKillSource;
  cancel: () => void;
}

export class KernelOomKillWatcher implements OomKillWatcher {
  private readonly log: Logger;
  private loop: EpollLoop | null = null;
  private onKill: ((kill: KernelOomKill) => void) | null = null;
  private stopped = false;
  private readonly watched = new Map<string, Watched>();
  private readonly groupWatches: MemoryEventsWatch[] = [];
  private kernelLog: KernelLogReader | null = null;
  private readonly detailsByPid = new Map<number, OomKillLine>();
  private readonly waitingForLog: CounterKill[] = [];
  private lastSignal: { atMs: number; source: OomKillSource } | null = null;
  private cancelScan: (() => void) | null = null;
  private cancelRescans: (() => void) | null = null;
  private activeSources: OomKillSource[] = [];
  /** The machine's OOM kill count at the last periodic scan (null: unknown). */
  private machineKills: bigint | null = null;
  private counterReadOwed = false;

  constructor(private readonly options: OomKillWatcherOptions) {
    this.log = options.logger.child({ component: 'oom-kill-watcher' });
  }

  sources(): readonly OomKillSource[] {
    return this.activeSources;
  }

  start(onKill: (kill: KernelOomKill) => void): void {
    if (this.onKill !== null || this.stopped) return;
    this.onKill = onKill;
    const { options } = this;
    this.loop = options.loop.acquire();
    if (this.loop === null) this.log.error('cannot create the epoll set; OOM kills are found by the periodic scan only', { error: options.loop.failureReason ?? 'the epoll loop is stopped' });
    const sources: OomKillSource[] = [];
    if (this.loop !== null && options.kernelLogPath !== null) {
      try {
        this.kernelLog = KernelLogReader.open(options.native, this.loop, options.kernelLogPath, this.log, (line, record) => this.onLogLine(line, record));
        sources.push('kernel-log');
      } catch (error) {
        this.log.warn('cannot read the kernel log (it needs the /dev/kmsg device in the container, and CAP_SYSLOG where kernel.dmesg_restrict is 1: the default DaemonSet grants neither, the privileged fallback both); OOM kills are attributed from the cgroups, without the process', {
          path: options.kernelLogPath,
          error: errorMessage(error),
        });
      }
    }
    // The counters as they are now: kills before the start are not reported.
    this.machineKills = this.readMachineKillCount();
    this.refreshCgroups(true);
    if (this.loop !== null) {
      if (options.version === 'v1') sources.push('oom-control');
      else if (this.watchMemoryEvents()) sources.push('memory-events');
      this.loop.start();
    }
    sources.push('counter-scan');
    this.activeSources = sources;
    this.log.info('watching for kernel OOM kills', { sources, cgroups: this.watched.size });
    this.scheduleScan();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.onKill = null;
    this.cancelScan?.();
    this.cancelRescans?.();
    for (const pending of this.waitingForLog.splice(0)) pending.cancel();
    this.kernelLog?.close();
    for (const watched of this.watched.values()) if (watched.watch !== null) this.loop?.unwatch(watched.watch);
    for (const watch of this.groupWatches.splice(0)) watch.close();
    this.watched.clear();
    if (this.loop !== null) await this.options.loop.release();
  }

  /** Walks the pod tree and re-reads every counter now (the periodic scan; tests call it). */
  scanNow(): void {
    this.refreshCgroups(false);
    this.scan('counter-scan');
  }

  /**
   * The periodic scan: the pod tree is walked every time (a new container's notification is armed
   * within one interval), the counters read only when the machine's count of kills has moved.
   * The kernel raises that count a moment before the victim cgroup's, so after a move the
   * counters are read on this scan and on the next one too.
   */
  private periodicScan(): void {
    const machineKills = this.readMachineKillCount();
    const moved = machineKills === null || machineKills !== this.machineKills;
    this.machineKills = machineKills;
    if (!moved && !this.counterReadOwed) {
      this.refreshCgroups(false);
      return;
    }
    this.counterReadOwed = moved;
    this.scanNow();
  }

  private readMachineKillCount(): bigint | null {
    const path = this.options.machineKillCountPath;
    if (path === null) return null;
    try {
      return parseOomKillCount(this.options.fs.readSmallFile(path));
    } catch {
      return null;
    }
  }

  // ---- the pod tree -----------------------------------------------------------------------

  /** Adds the container cgroups that appeared, drops those gone. `atStart`: counts as they are are history. */
  private refreshCgroups(atStart: boolean): void {
    const { fs, memoryRoot, podCgroupRoot, version } = this.options;
    const present = new Set<string>();
    for (const container of listContainerCgroups(fs, memoryRoot, podCgroupRoot)) {
      present.add(container.path);
      if (this.watched.has(container.path)) continue;
      const dir = `${memoryRoot}${container.path}`;
      // A cgroup that appeared after the start has had all its kills since then.
      const count = atStart ? (readOomKillCount(fs, version, dir) ?? 0n) : 0n;
      const watched: Watched = { ...container, dir, count, watch: null };
      this.watched.set(container.path, watched);
      if (version === 'v1') this.armOomControl(watched);
    }
    for (const [path, watched] of this.watched) {
      if (present.has(path)) continue;
      if (watched.watch !== null) this.loop?.unwatch(watched.watch);
      this.watched.delete(path);
    }
  }

  /**
   * A container cgroup the log names before the walk found it (a container started since): watched
   * from now on, its counter taken as it is, so the kill reported from the log is not found again.
   */
  private watchNew(path: string): Watched | null {
    const place = placeInPodTree(`/${this.options.podCgroupRoot}`, path);
    if (place?.level !== 'container' || place.podUid === null || place.containerCgroup === null) return null;
    const dir = `${this.options.memoryRoot}${path}`;
    const count = readOomKillCount(this.options.fs, this.options.version, dir);
    if (count === null) return null;
    const watched: Watched = { path, dir, podUid: place.podUid, name: place.containerCgroup, count: count - 1n, watch: null };
    this.watched.set(path, watched);
    if (this.options.version === 'v1') this.armOomControl(watched);
    return watched;
  }

  private armOomControl(watched: Watched): void {
    const loop = this.loop;
    if (loop === null || this.stopped) return;
    let eventFd: EventFd;
    try {
      eventFd = registerOomControl(this.options.native, watched.dir);
    } catch (error) {
      this.log.debug('cannot arm the OOM notification of a container cgroup', { cgroup: watched.path, error: errorMessage(error) });
      return;
    }
    watched.watch = loop.watch(eventFd, EPOLLIN, () => {
      const signalled = this.options.native.readEventFd(eventFd);
      if (signalled === 0n) return;
      // The kernel also signals a removed cgroup: then there is nothing to scan.
      if (!this.options.fs.exists(watched.dir)) {
        if (watched.watch !== null) loop.unwatch(watched.watch);
        this.watched.delete(watched.path);
        return;
      }
      this.onOomSignal('oom-control');
    });
  }

  // v2: memory.events of the pods' cgroup counts every kill below it; the node's too, when the
  // node is not the root (the root has no memory.events). Only its OOM counters start a scan: the
  // `high` and `max` counts move all the time on a node under memory.high throttling.
  private watchMemoryEvents(): boolean {
    const { memoryRoot, podCgroupRoot, nodeCgroup, native } = this.options;
    const loop = this.loop;
    if (loop === null) return false;
    const dirs = [podCgroupRoot, ...(nodeCgroup === '' ? [] : [nodeCgroup])].map((cgroup) => `${memoryRoot}/${cgroup}`);
    for (const dir of dirs) {
      try {
        const watch = MemoryEventsWatch.open(loop, native, `${dir}/memory.events`, {
          onChange: ({ increased }) => {
            if (increased.some((key) => OOM_EVENT_KEYS.has(key))) this.onOomSignal('memory-events');
          },
          onEnded: (reason) => {
            this.groupWatches.splice(this.groupWatches.indexOf(watch), 1);
            this.log.warn('memory.events is no longer watched', { dir, reason });
          },
        });
        this.groupWatches.push(watch);
      } catch (error) {
        this.log.warn('cannot watch memory.events', { dir, error: errorMessage(error) });
      }
    }
    return this.groupWatches.length > 0;
  }

  // ---- finding kills ----------------------------------------------------------------------

  private onOomSignal(source: OomKillSource): void {
    this.lastSignal = { atMs: this.options.clock.nowMs(), source };
    this.scan(source);
    // The kill lands after the kernel's report is printed: look again shortly, a few times.
    this.cancelRescans?.();
    let step = 0;
    const next = (): void => {
      const delayMs = RESCAN_DELAYS_MS[step++];
      if (delayMs === undefined || this.stopped) {
        this.cancelRescans = null;
        return;
      }
      this.cancelRescans = this.options.clock.after(delayMs, () => {
        this.scan(source);
        next();
      });
    };
    next();
  }

  /** Reads every watched counter; each kill not yet accounted for is reported (or waits for its log line). */
  private scan(source: OomKillSource): void {
    if (this.stopped) return;
    for (const watched of this.watched.values()) {
      const count = readOomKillCount(this.options.fs, this.options.version, watched.dir);
      if (count === null || count <= watched.count) continue;
      const kills = Number(count - watched.count);
      watched.count = count;
      for (let i = 0; i < kills; i++) this.counterKill(watched, source);
    }
  }

  private counterKill(cgroup: Watched, source: OomKillSource): void {
    const nowMs = this.options.clock.nowMs();
    if (this.kernelLog === null) {
      this.emit(this.counterOnly(cgroup, source, nowMs));
      return;
    }
    const pending: CounterKill = { cgroup, foundAtMs: nowMs, source, cancel: () => undefined };
    pending.cancel = this.options.clock.after(this.options.kernelLogWaitMs, () => {
      const at = this.waitingForLog.indexOf(pending);
      if (at < 0) return;
      this.waitingForLog.splice(at, 1);
      this.emit(this.counterOnly(cgroup, source, pending.foundAtMs));
    });
    this.waitingForLog.push(pending);
  }

  private onLogLine(line: OomLogLine, record: KernelLogRecord): void {
    if (line.kind === 'oom-kill') {
      this.detailsByPid.set(line.pid, line);
      if (this.detailsByPid.size > MAX_DETAILS_KEPT) this.detailsByPid.delete(this.detailsByPid.keys().next().value as number);
      return;
    }
    const details = this.detailsByPid.get(line.pid) ?? null;
    this.detailsByPid.delete(line.pid);
    const readAtMs = this.options.clock.nowMs();
    const kill: LogKill = { killed: line, details, atMs: this.kernelTimeMs(record.timestampUs, readAtMs), readAtMs };
    const victimPath = details?.taskCgroup ?? null;
    if (victimPath !== null) {
      // The counter was raised before the line was printed: account for the kill there.
      const waiting = this.takeWaiting((p) => p.cgroup.path === victimPath);
      const watched = this.watched.get(victimPath) ?? this.watchNew(victimPath);
      // The kernel raises the counter before it prints the line; accounted for here even if a
      // read raced it, so a later scan does not report the kill again.
      if (waiting === null && watched !== null) watched.count += 1n;
      this.emit(this.fromLog(kill, waiting?.source ?? 'kernel-log'));
      return;
    }
    // The kernel rate-limited the line naming the cgroup: the counters say where the kill was.
    this.scan('kernel-log');
    const waiting = this.takeWaiting(() => true);
    this.emit(this.fromLog(kill, waiting?.source ?? 'kernel-log', waiting?.cgroup.path ?? null));
  }

  private takeWaiting(match: (pending: CounterKill) => boolean): CounterKill | null {
    const at = this.waitingForLog.findIndex(match);
    if (at < 0) return null;
    const [pending] = this.waitingForLog.splice(at, 1);
    pending?.cancel();
    return pending ?? null;
  }

  // ---- the reports ------------------------------------------------------------------------

  private fromLog(kill: LogKill, source: OomKillSource, victimPathFromCounters: string | null = null): KernelOomKill {
    const { details, killed } = kill;
    const victimPath = details?.taskCgroup ?? victimPathFromCounters;
    const oomPath = details === null ? null : details.oomCgroup;
    return {
      atMs: kill.atMs,
      detectedAtMs: kill.readAtMs,
      source,
      oomSignalledAtMs: this.signalledNear(kill.atMs),
      constraint: details?.constraint ?? null,
      scope: killed.scope,
      victim: victimPath === null ? null : this.describe(victimPath),
      oomCgroup: oomPath === null ? (killed.scope === 'node' ? null : this.inferOomCgroup(victimPath)) : this.describe(oomPath),
      oomCgroupInferred: oomPath === null && killed.scope !== 'node',
      pid: killed.pid,
      process: killed.process,
      rssBytes: killed.rssBytes,
    };
  }

  private counterOnly(cgroup: Watched, source: OomKillSource, foundAtMs: number): KernelOomKill {
    return {
      atMs: foundAtMs,
      detectedAtMs: this.options.clock.nowMs(),
      source,
      oomSignalledAtMs: this.signalledNear(foundAtMs),
      constraint: null,
      scope: null,
      victim: this.describe(cgroup.path),
      oomCgroup: this.inferOomCgroup(cgroup.path),
      oomCgroupInferred: true,
      pid: null,
      process: null,
      rssBytes: null,
    };
  }

  /** The notification that announced this OOM, if one came in the seconds before. */
  private signalledNear(atMs: number): number | null {
    const signal = this.lastSignal;
    return signal !== null && signal.atMs <= atMs + 1000 && atMs - signal.atMs <= 5000 ? signal.atMs : null;
  }

  /**
   * Without the kernel's word, the cgroup at its limit: the deepest on the victim's path whose
   * highest usage reached its limit (that is what made the kernel OOM there); null when none did,
   * which is a node-wide OOM.
   */
  private inferOomCgroup(victimPath: string | null): OomCgroup | null {
    if (victimPath === null) return null;
    const parts = victimPath.split('/').filter((p) => p !== '');
    for (let depth = parts.length; depth >= 1; depth--) {
      const path = `/${parts.slice(0, depth).join('/')}`;
      const memory = readCgroupMemory(this.options.fs, this.options.version, `${this.options.memoryRoot}${path}`);
      if (memory?.limitBytes != null && memory.peakBytes !== null && memory.peakBytes >= memory.limitBytes) return this.describe(path, memory);
    }
    return null;
  }

  private describe(path: string, memory = readCgroupMemory(this.options.fs, this.options.version, `${this.options.memoryRoot}${path}`)): OomCgroup {
    const { podCgroupRoot, nodeCgroup } = this.options;
    const place = placeInPodTree(`/${podCgroupRoot}`, path);
    let level: CgroupLevel;
    if (place !== null) level = place.level;
    else level = path.replace(/\/+$/, '') === `/${nodeCgroup}`.replace(/\/+$/, '') ? 'node' : 'outside';
    return {
      path,
      level,
      podUid: place?.podUid ?? null,
      containerIds: place?.containerCgroup === null || place?.containerCgroup === undefined ? [] : containerIdCandidates(place.containerCgroup),
      memory,
    };
  }

  /**
   * Whether a kill is this node's: everything is when the node is the root cgroup; when it is a
   * cgroup of its own (a sandbox), only victims inside it (the kernel log is the machine's).
   */
  private onThisNode(kill: KernelOomKill): boolean {
    const node = this.options.nodeCgroup.replace(/^\/+|\/+$/g, '');
    if (node === '') return true;
    const path = kill.victim?.path;
    return path !== undefined && (path === `/${node}` || path.startsWith(`/${node}/`));
  }

  /** A kernel log timestamp (µs since boot, the kernel's local clock) as ms since the epoch. */
  private kernelTimeMs(timestampUs: number, nowMs: number): number {
    const ageMs = Number(this.options.monotonicUs() - BigInt(timestampUs)) / 1000;
    // The kernel's clock and CLOCK_MONOTONIC drift apart by a few ms: never report a kill in the future.
    return Math.round(nowMs - Math.max(0, ageMs));
  }

  private emit(kill: KernelOomKill): void {
    if (this.stopped || !this.onThisNode(kill)) return;
    try {
      this.onKill?.(kill);
    } catch (error) {
      this.log.error('reporting an OOM kill failed', { error: errorMessage(error) });
    }
  }

  private scheduleScan(): void {
    if (this.stopped) return;
    this.cancelScan = this.options.clock.after(this.options.scanIntervalMs, () => {
      this.cancelScan = null;
      try {
        this.periodicScan();
      } catch (error) {
        this.log.error('the OOM kill scan failed', { error: errorMessage(error) });
      }
      this.scheduleScan();
    });
  }
}
