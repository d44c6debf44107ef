// A simulated kernel behind the NativeEvents port, so the notifier logic runs without root, cgroups
// or koffi. It keeps a descriptor table, eventfd counters, epoll sets, memcg threshold
// registrations made through cgroup.event_control (signalled on each crossing, in either direction,
// and once when the cgroup is removed, as the kernel does) and PSI triggers (validated like the
// kernel, raising EPOLLPRI on stall()), memcg OOM registrations on memory.oom_control (signalled
// for an OOM in the cgroup or any ancestor, as mem_cgroup_oom_notify walks the OOMing subtree), a
// kernel log (/dev/kmsg: one record per read, EPOLLIN while unread records remain, EPIPE after an
// overrun), and plain cgroup files (memory.current, memory.stat, memory.high, memory.events) that
// tests set and the code reads (through readFromStart or readFile, or the host door `files`, as the
// fast check reads them) and writes, with the kernfs notification of a file (EPOLLERR|EPOLLPRI
// until the descriptor reads it again) and the directories' extended attributes. It also records
// what a test needs to check: the writes, the open descriptors, the reads, and how many epoll_waits
// were ever outstanding at once.

import { NativeError } from '../../src/errors.js';
import type { OpenFileDoor } from '../../src/host/kept-open-file.js';
import {
  EPOLLERR,
  EPOLLIN,
  EPOLLPRI,
  type AnyFd,
  type EpollFd,
  type EventFd,
  type FileAccess,
  type FileFd,
  type NativeEvents,
  type ReadyEvent,
} from '../../native/native-events.js';

export const ENOENT = 2;
export const EBADF = 9;
export const EEXIST = 17;
export const EINVAL = 22;
export const EBUSY = 16;
export const EMFILE = 24;
export const ENODEV = 19;

type FakeDescriptor =
  | { readonly kind: 'epoll'; readonly watched: Map<number, { events: number; token: number }> }
  | { readonly kind: 'eventfd'; counter: bigint }
  | { readonly kind: 'file'; readonly path: string; readonly access: FileAccess; trigger: string | null; pressureRaised: boolean; broken: boolean; notified: boolean; logPosition: number };

interface Registration {
  readonly eventFd: number;
  readonly thresholdBytes: bigint;
}

interface FakeCgroup {
  usageBytes: bigint;
  registrations: Registration[];
  /** eventfds registered on memory.oom_control. */
  oomRegistrations: number[];
}

/** What a simulated kernel log holds: records in order; `first` is the sequence number of records[0] (older ones were overwritten). */
interface FakeKernelLog {
  readonly records: string[];
  first: number;
}

export const EPIPE = 32;

interface PendingWait {
  readonly epoll: number;
  readonly maxEvents: number;
  readonly resolve: (ready: readonly ReadyEvent[]) => void;
}

type Operation = keyof NativeEvents;

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** An fs error as node:fs throws it, with its code. */
function fsError(code: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${path}`), { code });
}

export class FakeNative implements NativeEvents {
  private readonly descriptors = new Map<number, FakeDescriptor>();
  private readonly cgroups = new Map<string, FakeCgroup>();
  private readonly pressureFiles = new Set<string>();
  private readonly kernelLogs = new Map<string, FakeKernelLog>();
  private readonly failures = new Map<Operation, number>();
  private readonly waits: PendingWait[] = [];
  private heldWrites: (() => void)[] | null = null;
  /** Every successful writeFile: the path written and the text. */
  readonly writes: { path: string; text: string }[] = [];
  /** How many waitEpoll calls were made, and the most ever outstanding at once. */
  waitCalls = 0;
  maxOutstandingWaits = 0;
  /** Descriptors ever created (for checking that a re-arm made a new eventfd). */
  createdFds = 0;
  /** False simulates a process without CAP_SYS_RESOURCE: PSI windows must be multiples of 2 s. */
  psiPrivileged = true;
  /** Plain files by path, their text as the kernel would generate it now. */
  private readonly plainFiles = new Map<string, string>();
  /** Paths whose file was removed with its cgroup: open descriptors fail with ENODEV. */
  private readonly removedFiles = new Set<string>();
  private readonly xattrs = new Map<string, Map<string, string>>();
  /** Every read of a plain file, by path, through either door. */
  readonly reads: string[] = [];
  /** The descriptors of the host door (node:fs numbers, apart from this table's). */
  private readonly doorFds = new Map<number, string>();
  private nextDoorFd = 1000;

  // --- the simulated machine -------------------------------------------------------------

  /** A cgroup v1 memory cgroup directory with its current usage. */
  addCgroup(path: string, usageBytes = 0n): void {
    this.cgroups.set(path, { usageBytes, registrations: [], oomRegistrations: [] });
  }

  /**
   * An OOM in the memory cgroup `path` (at its limit): every eventfd registered on memory.oom_control
   * of `path` or of a cgroup below it is signalled once, as the kernel notifies the OOMing subtree.
   */
  oom(path: string): void {
    for (const [cgroupPath, cgroup] of this.cgroups) {
      if (cgroupPath !== path && !cgroupPath.startsWith(`${path}/`)) continue;
      for (const eventFd of cgroup.oomRegistrations) this.addToCounter(eventFd, 1n);
    }
    this.pump();
  }

  /** The eventfds registered on a cgroup's memory.oom_control. */
  oomRegistrationCount(path: string): number {
    return this.cgroup(path).oomRegistrations.length;
  }

  /** A kernel log device (`/dev/kmsg`) holding no record yet. */
  addKernelLog(path: string): void {
    this.kernelLogs.set(path, { records: [], first: 0 });
  }

  /** Appends records (the `prio,seq,ts,flags;message` text) to a kernel log; readers see EPOLLIN. */
  printk(path: string, ...records: string[]): void {
    const log = this.kernelLogs.get(path);
    if (log === undefined) throw new Error(`no fake kernel log ${path}`);
    log.records.push(...records);
    this.pump();
  }

  /** Drops the oldest `count` records before any reader got them, as a full ring buffer does. */
  overwriteKernelLog(path: string, count: number): void {
    const log = this.kernelLogs.get(path);
    if (log === undefined) throw new Error(`no fake kernel log ${path}`);
    log.records.splice(0, count);
    log.first += count;
  }

  /** Changes a plain file and notifies it (memory.events): each open descriptor on it raises EPOLLPRI until it re-reads the file. */
  modifyFile(path: string, text: string): void {
    this.setFile(path, text);
    this.notifyFile(path);
  }

  /** Moves a cgroup's usage; every registration whose threshold lies between old and new is signalled once. */
  setUsage(path: string, usageBytes: bigint): void {
    const cgroup = this.cgroup(path);
    const before = cgroup.usageBytes;
    cgroup.usageBytes = usageBytes;
    for (const registration of cgroup.registrations) {
      // The kernel counts a threshold as passed when usage >= threshold.
      if (before >= registration.thresholdBytes !== usageBytes >= registration.thresholdBytes) this.addToCounter(registration.eventFd, 1n);
    }
    this.pump();
  }

  /** Removes a cgroup: the kernel signals each registered eventfd once and drops the registrations. */
  removeCgroup(path: string): void {
    const cgroup = this.cgroup(path);
    for (const registration of cgroup.registrations) this.addToCounter(registration.eventFd, 1n);
    for (const eventFd of cgroup.oomRegistrations) this.addToCounter(eventFd, 1n);
    this.cgroups.delete(path);
    this.pump();
  }

  /** A PSI pressure file that accepts triggers. */
  addPressureFile(path: string): void {
    this.pressureFiles.add(path);
  }

  /** A memory stall past every trigger armed on `path`: each trigger descriptor raises EPOLLPRI. */
  stall(path: string): void {
    for (const descriptor of this.descriptors.values()) {
      if (descriptor.kind === 'file' && descriptor.path === path && descriptor.trigger !== null) descriptor.pressureRaised = true;
    }
    this.pump();
  }

  /** The cgroup behind a trigger went away: its descriptors report EPOLLERR from now on. */
  breakPressureFile(path: string): void {
    for (const descriptor of this.descriptors.values()) {
      if (descriptor.kind === 'file' && descriptor.path === path) descriptor.broken = true;
    }
    this.pressureFiles.delete(path);
    this.pump();
  }

  /** Creates or replaces a plain file's text (no notification). */
  setFile(path: string, text: string): void {
    this.plainFiles.set(path, text);
    this.removedFiles.delete(path);
  }

  /** A plain file's text, as written last. */
  fileText(path: string): string | undefined {
    return this.plainFiles.get(path);
  }

  /** The kernel notifies a file (kernfs_notify): every descriptor open on it polls EPOLLERR|EPOLLPRI until it reads. */
  notifyFile(path: string): void {
    for (const descriptor of this.descriptors.values()) if (descriptor.kind === 'file' && descriptor.path === path) descriptor.notified = true;
    this.pump();
  }

  /** The file's cgroup is removed: open descriptors poll EPOLLERR|EPOLLPRI and fail to read (ENODEV), opening fails (ENOENT). */
  removeFile(path: string): void {
    this.plainFiles.delete(path);
    this.removedFiles.add(path);
    this.notifyFile(path);
  }

  /** The extended attributes of a path. */
  xattrsOf(path: string): Record<string, string> {
    return Object.fromEntries(this.xattrs.get(path) ?? []);
  }

  /** The host door over the same plain files: what the fast check reads through (kept open). */
  readonly files: OpenFileDoor & { exists(path: string): boolean; readonly openCount: number } = ((native: FakeNative) => ({
    openFile(path: string): number {
      if (!native.plainFiles.has(path)) throw fsError('ENOENT', path);
      const fd = native.nextDoorFd++;
      native.doorFds.set(fd, path);
      return fd;
    },
    readOpenFile(fd: number): string {
      const path = native.doorFds.get(fd);
      if (path === undefined) throw fsError('EBADF', String(fd));
      const text = native.plainFiles.get(path);
      if (text === undefined) throw fsError('ENODEV', path);
      native.reads.push(path);
      return text;
    },
    closeFile(fd: number): void {
      if (!native.doorFds.delete(fd)) throw fsError('EBADF', String(fd));
    },
    exists: (path: string) => native.plainFiles.has(path) || native.fileExists(path),
    get openCount() {
      return native.doorFds.size;
    },
  }))(this);

  /** Makes the next call of `operation` fail with `errno`. */
  failNext(operation: Operation, errno: number): void {
    this.failures.set(operation, errno);
  }

  /** Holds every writeFileAsync until releaseWrites(), as a slow kernel registration would. */
  holdWrites(): void {
    this.heldWrites ??= [];
  }

  /** Performs the held writes, in order, and stops holding. */
  releaseWrites(): void {
    const held = this.heldWrites ?? [];
    this.heldWrites = null;
    for (const perform of held) perform();
  }

  /** How many async writes are held. */
  get heldWriteCount(): number {
    return this.heldWrites?.length ?? 0;
  }

  /** Ends every outstanding wait as a timeout would. */
  expireWaits(): void {
    for (const wait of this.waits.splice(0)) wait.resolve([]);
  }

  // --- what tests inspect ----------------------------------------------------------------

  get openFdCount(): number {
    return this.descriptors.size;
  }

  get outstandingWaits(): number {
    return this.waits.length;
  }

  /** The thresholds registered on a cgroup, in registration order. */
  registrations(path: string): bigint[] {
    return this.cgroup(path).registrations.map((r) => r.thresholdBytes);
  }

  /** The open file descriptors' paths (files only). */
  openPaths(): string[] {
    return [...this.descriptors.values()].flatMap((d) => (d.kind === 'file' ? [d.path] : []));
  }

  /** How many descriptors an epoll set watches. */
  watchedBy(epoll: number): number {
    const descriptor = this.descriptors.get(epoll);
    return descriptor?.kind === 'epoll' ? descriptor.watched.size : 0;
  }

  /** The trigger line written to each open pressure descriptor. */
  triggers(): { path: string; trigger: string }[] {
    return [...this.descriptors.values()].flatMap((d) => (d.kind === 'file' && d.trigger !== null ? [{ path: d.path, trigger: d.trigger }] : []));
  }

  // --- NativeEvents ----------------------------------------------------------------------

  createEpoll(): EpollFd {
    this.maybeFail('createEpoll', 'epoll_create1');
    return this.allocate({ kind: 'epoll', watched: new Map() }) as EpollFd;
  }

  createEventFd(): EventFd {
    this.maybeFail('createEventFd', 'eventfd');
    return this.allocate({ kind: 'eventfd', counter: 0n }) as EventFd;
  }

  addToEpoll(epoll: EpollFd, fd: EventFd | FileFd, events: number, token: number): void {
    this.maybeFail('addToEpoll', 'epoll_ctl');
    const set = this.descriptors.get(epoll);
    if (set?.kind !== 'epoll' || !this.descriptors.has(fd)) throw new NativeError('epoll_ctl', EBADF);
    if (set.watched.has(fd)) throw new NativeError('epoll_ctl', EEXIST);
    set.watched.set(fd, { events, token });
    this.pump();
  }

  removeFromEpoll(epoll: EpollFd, fd: EventFd | FileFd): void {
    this.maybeFail('removeFromEpoll', 'epoll_ctl');
    const set = this.descriptors.get(epoll);
    if (set?.kind !== 'epoll' || !this.descriptors.has(fd)) throw new NativeError('epoll_ctl', EBADF);
    if (!set.watched.delete(fd)) throw new NativeError('epoll_ctl', ENOENT);
  }

  waitEpoll(epoll: EpollFd, maxEvents: number, _timeoutMs: number): Promise<readonly ReadyEvent[]> {
    this.waitCalls++;
    const errno = this.failures.get('waitEpoll');
    if (errno !== undefined) {
      this.failures.delete('waitEpoll');
      return Promise.reject(new NativeError('epoll_wait', errno));
    }
    if (this.descriptors.get(epoll)?.kind !== 'epoll') return Promise.reject(new NativeError('epoll_wait', EBADF));
    return new Promise((resolve) => {
      this.waits.push({ epoll, maxEvents, resolve });
      this.maxOutstandingWaits = Math.max(this.maxOutstandingWaits, this.waits.length);
      this.pump();
    });
  }

  /** The kill thread's own wait: what is ready now, at once (a simulated kernel never blocks). */
  waitEpollBlocking(epoll: EpollFd, maxEvents: number, _timeoutMs: number): readonly ReadyEvent[] {
    this.waitCalls++;
    if (this.descriptors.get(epoll)?.kind !== 'epoll') throw new NativeError('epoll_wait', EBADF);
    return this.readyIn(epoll, maxEvents);
  }

  readEventFd(fd: EventFd): bigint {
    this.maybeFail('readEventFd', 'read');
    const descriptor = this.descriptors.get(fd);
    if (descriptor?.kind !== 'eventfd') throw new NativeError('read', EBADF);
    const counter = descriptor.counter;
    descriptor.counter = 0n;
    return counter;
  }

  signalEventFd(fd: EventFd, amount: bigint): void {
    this.maybeFail('signalEventFd', 'write');
    if (this.descriptors.get(fd)?.kind !== 'eventfd') throw new NativeError('write', EBADF);
    this.addToCounter(fd, amount);
    this.pump();
  }

  openFile(path: string, access: FileAccess): FileFd {
    this.maybeFail('openFile', 'open');
    if (!this.fileExists(path)) throw new NativeError('open', ENOENT, path);
    const log = this.kernelLogs.get(path);
    const logPosition = log === undefined ? 0 : log.first;
    return this.allocate({ kind: 'file', path, access, trigger: null, pressureRaised: false, broken: false, notified: false, logPosition }) as FileFd;
  }

  readFromStart(fd: FileFd, buffer: Uint8Array): number {
    this.maybeFail('readFromStart', 'pread');
    const descriptor = this.descriptors.get(fd);
    if (descriptor?.kind !== 'file' || descriptor.access === 'write') throw new NativeError('pread', EBADF);
    const text = this.plainFiles.get(descriptor.path);
    if (text === undefined) throw new NativeError('pread', ENODEV, descriptor.path);
    descriptor.notified = false;
    this.reads.push(descriptor.path);
    const bytes = encoder.encode(text).subarray(0, buffer.length);
    buffer.set(bytes);
    return bytes.length;
  }

  getXattr(path: string, name: string): string | null {
    this.maybeFail('getXattr', 'getxattr');
    return this.xattrs.get(path)?.get(name) ?? null;
  }

  setXattr(path: string, name: string, value: string): void {
    this.maybeFail('setXattr', 'setxattr');
    const attributes = this.xattrs.get(path) ?? new Map<string, string>();
    attributes.set(name, value);
    this.xattrs.set(path, attributes);
  }

  removeXattr(path: string, name: string): void {
    this.maybeFail('removeXattr', 'removexattr');
    this.xattrs.get(path)?.delete(name);
  }

  readFile(fd: FileFd, maxBytes: number, offset: number | null): Uint8Array | null {
    this.maybeFail('readFile', 'read');
    const descriptor = this.descriptors.get(fd);
    if (descriptor?.kind !== 'file' || descriptor.access === 'write') throw new NativeError('read', EBADF);
    const log = this.kernelLogs.get(descriptor.path);
    if (log !== undefined) {
      if (descriptor.logPosition < log.first) {
        // The kernel moves the reader to the oldest record left and reports the loss once.
        descriptor.logPosition = log.first;
        throw new NativeError('read', EPIPE);
      }
      const record = log.records[descriptor.logPosition - log.first];
      if (record === undefined) {
        if (descriptor.access === 'read-nonblock') return null;
        throw new Error('a blocking read of the fake kernel log would wait forever');
      }
      const bytes = encoder.encode(record);
      if (bytes.length > maxBytes) throw new NativeError('read', EINVAL);
      descriptor.logPosition++;
      return bytes;
    }
    const text = this.plainFiles.get(descriptor.path);
    if (text === undefined) throw new NativeError(offset === null ? 'read' : 'pread', ENODEV, descriptor.path);
    descriptor.notified = false;
    this.reads.push(descriptor.path);
    return encoder.encode(text).slice(offset ?? 0, (offset ?? 0) + maxBytes);
  }

  seekToEnd(fd: FileFd): void {
    this.maybeFail('seekToEnd', 'lseek');
    const descriptor = this.descriptors.get(fd);
    if (descriptor?.kind !== 'file') throw new NativeError('lseek', EBADF);
    const log = this.kernelLogs.get(descriptor.path);
    if (log !== undefined) descriptor.logPosition = log.first + log.records.length;
  }

  writeFile(fd: FileFd, bytes: Uint8Array): void {
    this.maybeFail('writeFile', 'write');
    this.write(fd, bytes);
  }

  writeFileAsync(fd: FileFd, bytes: Uint8Array): Promise<void> {
    // Like the real call, the write happens later, off the caller's turn (or when released, if held).
    return new Promise<void>((resolve, reject) => {
      const perform = (): void => {
        try {
          this.maybeFail('writeFileAsync', 'write');
          this.write(fd, bytes);
          resolve();
        } catch (error) {
          reject(error);
        }
      };
      if (this.heldWrites !== null) this.heldWrites.push(perform);
      else queueMicrotask(perform);
    });
  }

  private write(fd: FileFd, bytes: Uint8Array): void {
    const descriptor = this.descriptors.get(fd);
    if (descriptor?.kind !== 'file' || descriptor.access === 'read') throw new NativeError('write', EBADF);
    const text = decoder.decode(bytes);
    if (descriptor.path.endsWith('/cgroup.event_control')) this.registerThreshold(descriptor.path.slice(0, -'/cgroup.event_control'.length), text);
    else if (this.pressureFiles.has(descriptor.path)) this.armTrigger(descriptor, bytes);
    else if (this.plainFiles.has(descriptor.path)) this.plainFiles.set(descriptor.path, `${text.trim()}\n`);
    else throw new NativeError('write', ENODEV, descriptor.path);
    this.writes.push({ path: descriptor.path, text });
  }

  close(fd: AnyFd): void {
    this.maybeFail('close', 'close');
    const descriptor = this.descriptors.get(fd);
    if (descriptor === undefined) throw new NativeError('close', EBADF);
    this.descriptors.delete(fd);
    // Closing a descriptor drops it from every epoll set, and an eventfd's last close unregisters its thresholds.
    for (const other of this.descriptors.values()) if (other.kind === 'epoll') other.watched.delete(fd);
    if (descriptor.kind === 'eventfd') {
      for (const cgroup of this.cgroups.values()) {
        cgroup.registrations = cgroup.registrations.filter((r) => r.eventFd !== fd);
        cgroup.oomRegistrations = cgroup.oomRegistrations.filter((r) => r !== fd);
      }
    }
  }

  // --- internals -------------------------------------------------------------------------

  private cgroup(path: string): FakeCgroup {
    const cgroup = this.cgroups.get(path);
    if (cgroup === undefined) throw new Error(`no fake cgroup ${path}`);
    return cgroup;
  }

  private fileExists(path: string): boolean {
    if (this.pressureFiles.has(path) || this.plainFiles.has(path) || this.kernelLogs.has(path)) return true;
    const slash = path.lastIndexOf('/');
    const name = path.slice(slash + 1);
    return this.cgroups.has(path.slice(0, slash)) && (name === 'memory.usage_in_bytes' || name === 'cgroup.event_control' || name === 'memory.oom_control');
  }

  private registerThreshold(cgroupPath: string, text: string): void {
    const oom = /^(\d+) (\d+)$/.exec(text);
    if (oom !== null) {
      // memory.oom_control takes no argument.
      const eventFd = Number(oom[1]);
      const watched = this.descriptors.get(Number(oom[2]));
      if (this.descriptors.get(eventFd)?.kind !== 'eventfd') throw new NativeError('write', EBADF, 'not an eventfd');
      if (watched?.kind !== 'file' || watched.path !== `${cgroupPath}/memory.oom_control`) throw new NativeError('write', EINVAL, 'not the usage file');
      this.cgroup(cgroupPath).oomRegistrations.push(eventFd);
      return;
    }
    const match = /^(\d+) (\d+) (\d+)$/.exec(text);
    if (match === null) throw new NativeError('write', EINVAL, text);
    const eventFd = Number(match[1]);
    const watched = this.descriptors.get(Number(match[2]));
    if (this.descriptors.get(eventFd)?.kind !== 'eventfd') throw new NativeError('write', EBADF, 'not an eventfd');
    if (watched?.kind !== 'file' || watched.path !== `${cgroupPath}/memory.usage_in_bytes`) throw new NativeError('write', EINVAL, 'not the usage file');
    this.cgroup(cgroupPath).registrations.push({ eventFd, thresholdBytes: BigInt(match[3] as string) });
  }

  // kernel/sched/psi.c psi_write + psi_trigger_create: the last byte becomes a NUL, then
  // "some|full <threshold us> <window us>" with 500 ms <= window <= 10 s and 0 < threshold <= window,
  // and a window that is a multiple of 2 s without CAP_SYS_RESOURCE.
  private armTrigger(descriptor: FakeDescriptor & { kind: 'file' }, bytes: Uint8Array): void {
    if (descriptor.trigger !== null) throw new NativeError('write', EBUSY);
    const text = decoder.decode(bytes.slice(0, Math.max(0, bytes.length - 1)));
    const match = /^(some|full) (\d+) (\d+)/.exec(text);
    if (match === null) throw new NativeError('write', EINVAL, text);
    const thresholdUs = Number(match[2]);
    const windowUs = Number(match[3]);
    if (windowUs < 500_000 || windowUs > 10_000_000 || thresholdUs === 0 || thresholdUs > windowUs) throw new NativeError('write', EINVAL, text);
    if (!this.psiPrivileged && windowUs % 2_000_000 !== 0) throw new NativeError('write', EINVAL, text);
    descriptor.trigger = text;
  }

  private allocate(descriptor: FakeDescriptor): number {
    // The lowest free number, as the kernel hands them out: a closed number is reused at once.
    let fd = 3;
    while (this.descriptors.has(fd)) fd++;
    this.descriptors.set(fd, descriptor);
    this.createdFds++;
    return fd;
  }

  private addToCounter(fd: number, amount: bigint): void {
    const descriptor = this.descriptors.get(fd);
    if (descriptor?.kind === 'eventfd') descriptor.counter += amount;
  }

  private maybeFail(operation: Operation, syscall: string): void {
    const errno = this.failures.get(operation);
    if (errno === undefined) return;
    this.failures.delete(operation);
    throw new NativeError(syscall, errno);
  }

  // Completes outstanding waits whose epoll set has a ready descriptor.
  private pump(): void {
    for (const wait of [...this.waits]) {
      const ready = this.readyIn(wait.epoll, wait.maxEvents);
      if (ready.length === 0) continue;
      this.waits.splice(this.waits.indexOf(wait), 1);
      wait.resolve(ready);
    }
  }

  // What an epoll_wait on `epoll` would return now ([] when nothing is ready).
  private readyIn(epoll: number, maxEvents: number): ReadyEvent[] {
    const set = this.descriptors.get(epoll);
    if (set?.kind !== 'epoll') return [];
    const ready: ReadyEvent[] = [];
    for (const [fd, { events, token }] of set.watched) {
      if (ready.length >= maxEvents) break;
      const descriptor = this.descriptors.get(fd);
      if (descriptor?.kind === 'eventfd' && descriptor.counter > 0n && (events & EPOLLIN) !== 0) ready.push({ token, events: EPOLLIN });
      if (descriptor?.kind === 'file' && this.kernelLogs.has(descriptor.path)) {
        const log = this.kernelLogs.get(descriptor.path) as FakeKernelLog;
        if ((events & EPOLLIN) !== 0 && descriptor.logPosition < log.first + log.records.length) ready.push({ token, events: EPOLLIN });
        continue;
      }
      if (descriptor?.kind === 'file' && descriptor.broken) ready.push({ token, events: EPOLLERR | (events & EPOLLPRI) });
      else if (descriptor?.kind === 'file' && descriptor.notified && (events & EPOLLPRI) !== 0) {
        // kernfs: level-triggered until the descriptor reads the file again.
        ready.push({ token, events: EPOLLERR | EPOLLPRI });
      } else if (descriptor?.kind === 'file' && descriptor.pressureRaised && (events & EPOLLPRI) !== 0) {
        // PSI clears the event when it is polled.
        descriptor.pressureRaised = false;
        ready.push({ token, events: EPOLLPRI });
      }
    }
    return ready;
  }
}
