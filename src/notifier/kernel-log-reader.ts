// Follows the kernel log (/dev/kmsg) for the OOM killer's lines, without blocking anything: the
// device is opened non-blocking and positioned after the records already there, it sits in the
// node's one epoll set (EPOLLIN while a record is unread), and each wake-up reads records one per
// read until EAGAIN, at most a bounded number per wake so a flood of log lines cannot hold the
// main thread (the level-triggered set wakes again for the rest). Opening needs CAP_SYSLOG where
// kernel.dmesg_restrict is 1; without it the reader reports why and the caller goes on without it.

import type { Logger } from '../api/logger.js';
import { errorMessage, NativeError } from '../errors.js';
import { parseKernelLogRecord, parseOomLogLine, type KernelLogRecord, type OomLogLine } from '../host/kernel-log.js';
import { EPOLLIN, type FileFd, type NativeEvents } from '../../native/native-events.js';
import type { EpollLoop, EpollWatch } from './epoll-loop.js';

export const KERNEL_LOG_DEVICE = '/dev/kmsg';

// A record is at most 1 KiB of text plus its dictionary (CONSOLE_EXT_LOG_MAX is 8 KiB).
const RECORD_BUFFER_BYTES = 8192;
const MAX_RECORDS_PER_WAKE = 512;
const ERRNO_EPIPE = 32;

const decoder = new TextDecoder();

export class KernelLogReader {
  private watch: EpollWatch | null = null;
  private lostRecords = 0;

  private constructor(
    private readonly native: NativeEvents,
    private readonly loop: EpollLoop,
    private readonly logger: Logger,
    private readonly onLine: (line: OomLogLine, record: KernelLogRecord) => void,
  ) {}

  /**
   * Opens `path` and watches it in `loop`; throws the NativeError when it cannot be opened (EPERM
   * without CAP_SYSLOG, ENOENT where the device is not there).
   */
  static open(native: NativeEvents, loop: EpollLoop, path: string, logger: Logger, onLine: (line: OomLogLine, record: KernelLogRecord) => void): KernelLogReader {
    const reader = new KernelLogReader(native, loop, logger, onLine);
    const fd = native.openFile(path, 'read-nonblock');
    try {
      native.seekToEnd(fd);
    } catch (error) {
      native.close(fd);
      throw error;
    }
    reader.watch = loop.watch(fd, EPOLLIN, () => reader.drain());
    return reader;
  }

  /** Reads what is there now (the epoll set calls it; tests may too). */
  drain(): void {
    if (this.watch === null) return;
    const fd = this.watch.fd as FileFd;
    for (let i = 0; i < MAX_RECORDS_PER_WAKE; i++) {
      let bytes: Uint8Array | null;
      try {
        bytes = this.native.readFile(fd, RECORD_BUFFER_BYTES, null);
      } catch (error) {
        if (error instanceof NativeError && error.errno === ERRNO_EPIPE) {
          // Records were overwritten before being read (a burst larger than the ring buffer): the
          // next read returns the oldest one left. The counters still account for every kill.
          if (this.lostRecords++ === 0) this.logger.warn('kernel log records were overwritten before they could be read; OOM kills are still counted from the cgroups');
          continue;
        }
        this.logger.error('reading the kernel log failed; OOM kills are found from the cgroups only', { error: errorMessage(error) });
        this.close();
        return;
      }
      if (bytes === null) return;
      const record = parseKernelLogRecord(decoder.decode(bytes));
      if (record === null) continue;
      const line = parseOomLogLine(record.message);
      if (line !== null) this.onLine(line, record);
    }
  }

  close(): void {
    if (this.watch !== null) this.loop.unwatch(this.watch);
    this.watch = null;
  }
}
