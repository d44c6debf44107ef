// Work the agent starts and does not wait for: the API requests that follow a local kill, Events,
// node status. Nothing on the way to a kill may wait for the API server, so these run beside the
// loop, at most `maxPending` at once; past that a new task is dropped and counted rather than
// queued without bound while the API server is slow or gone. A task never rejects into the void:
// its failure is logged. `settled()` waits for everything started so far (stop, tests).

import type { Logger } from '../api/logger.js';
import { errorMessage } from '../errors.js';

export class BackgroundTasks {
  private readonly pending = new Set<Promise<void>>();
  private droppedCount = 0;

  constructor(
    private readonly name: string,
    private readonly maxPending: number,
    private readonly logger: Logger,
    private readonly onDrop: (task: string) => void = () => {},
  ) {}

  /** Tasks started and not finished. */
  get size(): number {
    return this.pending.size;
  }

  /** Tasks refused because `maxPending` were already running. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Starts `task` now unless the cap is reached; returns whether it started. */
  run(task: string, work: () => Promise<unknown>): boolean {
    if (this.pending.size >= this.maxPending) {
      this.droppedCount++;
      this.onDrop(task);
      this.logger.warn('background work dropped: too much already pending', { queue: this.name, task, pending: this.pending.size });
      return false;
    }
    // Started on the next microtask: the caller's synchronous path (a kill) finishes first.
    const running = Promise.resolve().then(work).then(
      () => undefined,
      (err: unknown) => this.logger.error('background work failed', { queue: this.name, task, err: errorMessage(err) }),
    );
    this.pending.add(running);
    void running.finally(() => this.pending.delete(running));
    return true;
  }

  /** Resolves once every task started so far (and any they started) has finished. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
