// The API server's audit log read back as requests: who (user), what (verb, resource,
// subresource, object, field selector), when, with which answer and how long it took. The fleet
// test and bench count an agent's requests with it: the API server's own metrics say how many
// requests of each verb it served, but not whose they were. A watch is counted once, when it
// starts (ResponseStarted); every other request when it completes. Only what was appended since
// the last read is read, so a run of an hour (hundreds of MB of log) is read once in all.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

export interface AuditedRequest {
  readonly user: string;
  readonly verb: string;
  /** `pods`, `pods/eviction`, `nodes/status`, `events`... */
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
  readonly code: number;
  /** When the API server received it (ms since the epoch). */
  readonly receivedAtMs: number;
  /** How long it took to answer (watches: until the stream started). */
  readonly latencyMs: number;
  readonly userAgent: string;
  /** The request's `fieldSelector` ('' without one): which node's pods or Node a list or watch was for. */
  readonly fieldSelector: string;
}

interface AuditLine {
  stage?: string;
  verb?: string;
  user?: { username?: string };
  userAgent?: string;
  requestURI?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

/** Reads the log from `fromByte` on; returns the requests and where the next read starts (the last full line's end). */
export function readAuditLog(file: string, fromByte = 0): { requests: AuditedRequest[]; nextByte: number } {
  const tail = new AuditLogTail(file, fromByte);
  const requests = tail.read();
  return { requests, nextByte: tail.position };
}

/**
 * The log followed as it grows: each `read()` returns the requests appended since the last one,
 * and the watches each user holds open are counted on the way (started, not yet ended; from the
 * position the tail started at).
 */
export class AuditLogTail {
  private nextByte: number;
  private readonly open = new Map<string, number>();

  constructor(
    private readonly file: string,
    fromByte = 0,
  ) {
    this.nextByte = fromByte;
  }

  /** Where the next read starts. */
  get position(): number {
    return this.nextByte;
  }

  read(): AuditedRequest[] {
    const requests: AuditedRequest[] = [];
    for (;;) {
      const { text, nextByte } = readAppended(this.file, this.nextByte);
      if (nextByte === this.nextByte) return requests;
      this.nextByte = nextByte;
      for (const line of text.split('\n')) {
        if (line === '') continue;
        const entry = JSON.parse(line) as AuditLine;
        if (entry.verb === 'watch') {
          const user = entry.user?.username ?? '';
          const change = entry.stage === 'ResponseStarted' ? 1 : entry.stage === 'ResponseComplete' ? -1 : 0;
          this.open.set(user, (this.open.get(user) ?? 0) + change);
        }
        const request = toRequest(entry);
        if (request !== null) requests.push(request);
      }
    }
  }

  /** The watches of `user` open as of the last read. */
  openWatches(user: string): number {
    return this.open.get(user) ?? 0;
  }
}

// At most this much is read (and held as one string) at a time.
const CHUNK_BYTES = 64 * 1024 * 1024;

// What was appended from `fromByte` up to the last full line (within one chunk).
function readAppended(file: string, fromByte: number): { text: string; nextByte: number } {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size <= fromByte) return { text: '', nextByte: fromByte };
    const buffer = Buffer.alloc(Math.min(CHUNK_BYTES, size - fromByte));
    const length = readSync(fd, buffer, 0, buffer.length, fromByte);
    const end = buffer.subarray(0, length).lastIndexOf(0x0a) + 1;
    return { text: buffer.subarray(0, end).toString('utf8'), nextByte: fromByte + end };
  } finally {
    closeSync(fd);
  }
}

function toRequest(entry: AuditLine): AuditedRequest | null {
  const verb = entry.verb ?? '';
  const expected = verb === 'watch' ? 'ResponseStarted' : 'ResponseComplete';
  if (entry.stage !== expected) return null;
  const ref = entry.objectRef ?? {};
  const receivedAtMs = Date.parse(entry.requestReceivedTimestamp ?? '');
  const uri = entry.requestURI ?? '';
  const query = uri.includes('?') ? new URLSearchParams(uri.slice(uri.indexOf('?') + 1)) : null;
  return {
    user: entry.user?.username ?? '',
    verb,
    resource: ref.subresource === undefined ? (ref.resource ?? '') : `${ref.resource ?? ''}/${ref.subresource}`,
    namespace: ref.namespace ?? '',
    name: ref.name ?? '',
    code: entry.responseStatus?.code ?? 0,
    receivedAtMs,
    latencyMs: Date.parse(entry.stageTimestamp ?? '') - receivedAtMs,
    userAgent: entry.userAgent ?? '',
    fieldSelector: query?.get('fieldSelector') ?? '',
  };
}

/** Verbs that change something. */
export const MUTATING_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** Counts by `verb resource` (e.g. `watch pods`, `patch nodes/status`), sorted by key. */
export function countByVerbAndResource(requests: readonly AuditedRequest[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const r of requests) counts.set(`${r.verb} ${r.resource}`, (counts.get(`${r.verb} ${r.resource}`) ?? 0) + 1);
  return Object.fromEntries([...counts.entries()].sort(([a], [b]) => a.localeCompare(b)));
}
