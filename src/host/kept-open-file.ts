// One kernel file kept open and read again at offset 0 on every read, so that a check repeated many
// times a second costs a read and no path lookup: on the development machines a kept-open
// memory.usage_in_bytes costs about 2 µs of CPU a read against about 30 µs to open, read and
// close it, and 230 µs through fs.promises.readFile; in the cgroup v2 guest the ratio is larger
// still (docs/notifier.md). The read is synchronous on the calling thread, as the observer's:
// cgroupfs files never wait on a disk. The descriptor is opened on the first read, and dropped
// when a read fails (ENODEV once its cgroup is removed), so the next read opens the path afresh.

import type { HostFs } from './host-fs.js';

/** The part of the host door a kept-open file needs. */
export type OpenFileDoor = Pick<HostFs, 'openFile' | 'readOpenFile' | 'closeFile'>;

export class KeptOpenFile {
  private fd: number | null = null;

  /**
   * @param door the host
   * @param path the file
   * @param singleRecord the kernel generates it in one piece (memory.current, memory.stat): see HostFs
   */
  constructor(
    private readonly door: OpenFileDoor,
    readonly path: string,
    private readonly singleRecord = true,
  ) {}

  /** The whole file as the kernel generates it now. Throws the fs error; the next read reopens. */
  read(): string {
    this.fd ??= this.door.openFile(this.path);
    try {
      return this.door.readOpenFile(this.fd, this.singleRecord);
    } catch (error) {
      this.close();
      throw error;
    }
  }

  /** Whether a descriptor is held. */
  get isOpen(): boolean {
    return this.fd !== null;
  }

  /** Closes the descriptor, if one is held. Idempotent; never throws. */
  close(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    try {
      this.door.closeFile(fd);
    } catch {
      // A descriptor that cannot be closed is gone either way.
    }
  }
}
