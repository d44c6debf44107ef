// What a parsing thread and the replay's deciding thread exchange: a batch of lines goes one way
// (its buffer handed over, not copied), its parsed lines come back. A step's Summary, the bulk of
// a recording, travels through the Summary codec (summary-codec.ts); the rest of a step (pods and a node, when a step
// carries them) and the refusals travel as structured clones, which keep every JSON value as it
// is. An error is rebuilt with the same class and message.

import { ReplayInputError } from '../errors.js';
import type { Summary } from '../api/summary.js';
import type { ReplayStep } from './input.js';
import type { LineResult } from './line-batches.js';
import type { EncodedSummaries, SummaryDecoder, SummaryEncoder } from './summary-codec.js';

/** What a parsing thread sends first, once it can take batches. */
export const PARSE_WORKER_READY = 'ready';

export interface ParseRequest {
  readonly firstLine: number;
  readonly bytes: Uint8Array;
  readonly maxLineBytes: number;
}

type WireResult =
  | { readonly kind: 'step'; readonly step: Omit<ReplayStep, 'summary'>; readonly encodedSummary: boolean; readonly timeText: string }
  | { readonly kind: 'refused'; readonly line: number; readonly field: string; readonly reason: string; readonly timeMs: number | null; readonly timeText: string | null }
  | { readonly kind: 'fault'; readonly name: string; readonly message: string; readonly stack: string | undefined };

export interface ParseReply {
  readonly results: readonly WireResult[];
  readonly summaries: EncodedSummaries;
}

function toWire(result: LineResult, encoder: SummaryEncoder): WireResult {
  switch (result.kind) {
    case 'step': {
      const { summary, ...step } = result.step;
      if (summary !== undefined) encoder.add(summary);
      return { kind: 'step', step, encodedSummary: summary !== undefined, timeText: result.timeText };
    }
    case 'refused': {
      const { line, field, message } = result.error;
      // The message as the constructor builds it from the reason: `line N: field: reason`.
      const reason = message.slice(`line ${line}: ${field === '' ? '' : `${field}: `}`.length);
      return { kind: 'refused', line, field, reason, timeMs: result.timeMs, timeText: result.timeText };
    }
    case 'fault': {
      const error = result.error instanceof Error ? result.error : new Error(String(result.error));
      return { kind: 'fault', name: error.name, message: error.message, stack: error.stack };
    }
  }
}

/** A parsed batch, as its thread sends it back; each line is encoded as it is parsed. */
export function replyOf(results: Iterable<LineResult>, encoder: SummaryEncoder): ParseReply {
  const wire = Array.from(results, (result) => toWire(result, encoder));
  return { results: wire, summaries: encoder.take() };
}

// The step's keys in the order input.ts sets them.
function stepOf(rest: Omit<ReplayStep, 'summary'>, summary: Summary | undefined): ReplayStep {
  const step: { -readonly [K in keyof ReplayStep]: ReplayStep[K] } = { line: rest.line, timeMs: rest.timeMs };
  if (summary !== undefined) step.summary = summary;
  if (rest.pods !== undefined) step.pods = rest.pods;
  if (rest.refusedPods !== undefined) step.refusedPods = rest.refusedPods;
  if (rest.node !== undefined) step.node = rest.node;
  if (rest.dedicatedImageFs !== undefined) step.dedicatedImageFs = rest.dedicatedImageFs;
  if (rest.splitContainerFs !== undefined) step.splitContainerFs = rest.splitContainerFs;
  return step;
}

// The classes a defect may throw with, rebuilt as they were (any other comes back as an Error of its name).
const STANDARD_ERRORS: Readonly<Record<string, ErrorConstructor>> = { RangeError, TypeError, SyntaxError, ReferenceError, EvalError, URIError };

/**
 * The parsed lines of a reply, each rebuilt only when it is taken (the deciding thread holds replies
 * as typed arrays until then, so what it rebuilds dies young); `decoder` is the one that was fed
 * every earlier reply of the same thread, and takes this one's lines before any later reply's.
 */
export function* resultsOf(reply: ParseReply, decoder: SummaryDecoder): Generator<LineResult> {
  decoder.begin(reply.summaries);
  for (const wire of reply.results) {
    switch (wire.kind) {
      case 'step': {
        const summary = wire.encodedSummary ? decoder.next() : undefined;
        yield { kind: 'step', step: stepOf(wire.step, summary), timeText: wire.timeText };
        break;
      }
      case 'refused':
        yield { kind: 'refused', error: new ReplayInputError(wire.line, wire.field, wire.reason), timeMs: wire.timeMs, timeText: wire.timeText };
        break;
      case 'fault': {
        const error = new (STANDARD_ERRORS[wire.name] ?? Error)(wire.message);
        error.name = wire.name;
        if (wire.stack !== undefined) error.stack = wire.stack;
        yield { kind: 'fault', error };
        break;
      }
    }
  }
}
