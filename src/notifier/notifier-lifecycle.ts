// What the kernel notifiers share: they start once, stop once (promptly, and idempotently, after
// what is in flight), never report after stopping, and log a problem once while it persists
// rather than at every pass.

import type { Logger } from '../api/logger.js';
import type { NotifierEvent } from '../daemon/ports.js';

export abstract class NotifierLifecycle {
  /** Where wake-ups go; null before start and after stop. */
  protected onEvent: ((event: NotifierEvent) => void) | null = null;
  protected stopRequested = false;
  private stopping: Promise<void> | null = null;
  // The last problem logged per key.
  private readonly reported = new Map<string, string>();

  /**
   * @param problemMessage the log line of a problem (`memory threshold not armed`)
   * @param problemKey the field that names what the problem is about (`description`)
   */
  constructor(
    protected readonly logger: Logger,
    private readonly problemMessage: string,
    private readonly problemKey: string,
  ) {}

  /** Takes `onEvent` on the first start; false on a later one (warned) or after stop. */
  protected beginStart(onEvent: (event: NotifierEvent) => void): boolean {
    if (this.stopRequested) return false;
    if (this.onEvent !== null) {
      this.logger.warn('the memory threshold notifier is already started');
      return false;
    }
    this.onEvent = onEvent;
    return true;
  }

  /** Stops reporting at once, then runs `release` once; every call gets the same promise. */
  protected stopOnce(release: () => Promise<void>): Promise<void> {
    if (this.stopping !== null) return this.stopping;
    this.stopRequested = true;
    this.onEvent = null;
    this.stopping = release();
    return this.stopping;
  }

  /** Logs `problem` about `key`, unless it is the problem last logged about it. */
  protected reportOnce(key: string, problem: string): void {
    if (this.reported.get(key) === problem) return;
    this.reported.set(key, problem);
    this.logger.warn(this.problemMessage, { [this.problemKey]: key, problem });
  }

  /** The problem about `key` is over: the next one is logged again. */
  protected problemResolved(key: string): void {
    this.reported.delete(key);
  }
}
