// The notifier for nodes where the kernel offers no memory notification we can use (or where it is
// turned off): it logs why once, and the loop's periodic synchronize is then the only trigger, as on
// a kubelet without KernelMemcgNotification.

import type { Logger } from '../api/logger.js';
import type { Summary } from '../api/summary.js';
import type { Threshold } from '../api/threshold.js';
import type { MemoryThresholdNotifier, NotifierEvent } from '../daemon/ports.js';

export class DisabledNotifier implements MemoryThresholdNotifier {
  readonly mode = 'disabled' as const;
  /** Why notifications are off, as logged at start. */
  readonly reason: string;
  private readonly logger: Logger;
  private started = false;

  constructor(reason: string, logger: Logger) {
    this.reason = reason;
    this.logger = logger;
  }

  start(_onEvent: (event: NotifierEvent) => void): void {
    if (this.started) return;
    this.started = true;
    this.logger.info('memory threshold notifier disabled; memory is checked at each periodic synchronize only', { reason: this.reason });
  }

  updateThresholds(_summary: Summary, _thresholds: readonly Threshold[]): void {}

  setActing(_acting: boolean): void {}

  stop(): Promise<void> {
    return Promise.resolve();
  }
}
