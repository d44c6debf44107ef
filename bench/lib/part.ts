// What every benchmark part is: a name, an estimate of how long it takes (for the ETA), a reason
// it cannot run here (or null), and a run that returns plain JSON data for the page. The runner
// stores each part's result with the machine it ran on, so one part can be re-run alone and the
// page still shows the others' latest results.

import type { MachineInfo } from './machine.js';
import type { Progress } from './progress.js';

export interface PartContext {
  readonly quick: boolean;
  readonly progress: Progress;
  /** The compiled CLI (`dist/src/main.js`) for the parts that run the real command. */
  readonly mainJs: string;
  /** The compiled benchmark directory (`dist/bench`), for worker scripts. */
  readonly benchDir: string;
  /** A scratch directory for this run, removed afterwards. */
  readonly scratchDir: string;
}

export interface BenchPart<T> {
  readonly name: string;
  readonly title: string;
  estimateMs(quick: boolean): number;
  /** Why this part cannot run here (not root, no cgroup v1...), or null. */
  unavailable(): string | null;
  run(context: PartContext): Promise<T>;
  /** Combines a run of part of this part's work with the stored result of the rest, where it can. */
  merge?(previous: PartResult<T>, fresh: T): T;
}

/** One part's stored outcome. */
export interface PartResult<T = unknown> {
  readonly part: string;
  readonly machine: MachineInfo;
  /** `git describe --always --dirty` of the code measured, when known. */
  readonly revision?: string | null;
  readonly quick: boolean;
  readonly durationMs: number;
  /** Why it was skipped; null when it ran. */
  readonly skipped: string | null;
  /** Why it failed; null when it completed. */
  readonly error: string | null;
  readonly data: T | null;
}
