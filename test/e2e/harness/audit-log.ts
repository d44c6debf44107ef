// The API server's audit log read back as requests: who (user), what (verb, resource,
// subresource, object), when, with which answer and how long it took. The fleet test and bench
// count an agent's requests with it: the API server's own metrics say how many requests of each
// verb it served, but not whose they were. A watch is counted once, when it starts
// (ResponseStarted); every other request when it completes.

import { readFileSync } from 'node:fs';

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
}

interface AuditLine {
  stage?: string;
  verb?: string;
  user?: { username?: string };
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

/** Reads the log from `fromByte` on; returns the requests and where the next read starts (the last full line's end). */
export function readAuditLog(file: string, fromByte = 0): { requests: AuditedRequest[]; nextByte: number } {
  const buffer = readFileSync(file);
  const end = buffer.lastIndexOf(0x0a) + 1;
  if (end <= fromByte) return { requests: [], nextByte: fromByte };
  const requests: AuditedRequest[] = [];
  for (const line of buffer.subarray(fromByte, end).toString('utf8').split('\n')) {
    if (line === '') continue;
    const entry = JSON.parse(line) as AuditLine;
    const verb = entry.verb ?? '';
    const expected = verb === 'watch' ? 'ResponseStarted' : 'ResponseComplete';
    if (entry.stage !== expected) continue;
    const ref = entry.objectRef ?? {};
    const receivedAtMs = Date.parse(entry.requestReceivedTimestamp ?? '');
    requests.push({
      user: entry.user?.username ?? '',
      verb,
      resource: ref.subresource === undefined ? (ref.resource ?? '') : `${ref.resource ?? ''}/${ref.subresource}`,
      namespace: ref.namespace ?? '',
      name: ref.name ?? '',
      code: entry.responseStatus?.code ?? 0,
      receivedAtMs,
      latencyMs: Date.parse(entry.stageTimestamp ?? '') - receivedAtMs,
      userAgent: entry.userAgent ?? '',
    });
  }
  return { requests, nextByte: end };
}

/** Verbs that change something. */
export const MUTATING_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** Counts by `verb resource` (e.g. `watch pods`, `patch nodes/status`), sorted by key. */
export function countByVerbAndResource(requests: readonly AuditedRequest[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const r of requests) counts.set(`${r.verb} ${r.resource}`, (counts.get(`${r.verb} ${r.resource}`) ?? 0) + 1);
  return Object.fromEntries([...counts.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

/** The watches of `user` open now: started (ResponseStarted) and not yet ended (ResponseComplete). */
export function openWatches(file: string, user: string): number {
  let open = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '' || !line.includes('"verb":"watch"')) continue;
    const entry = JSON.parse(line) as AuditLine;
    if (entry.user?.username !== user) continue;
    if (entry.stage === 'ResponseStarted') open++;
    else if (entry.stage === 'ResponseComplete') open--;
  }
  return open;
}
