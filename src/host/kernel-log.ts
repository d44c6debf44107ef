// The kernel log's OOM killer records, as /dev/kmsg hands them out: one record per read,
// `<prio>,<seq>,<usec since boot>,<flags>[,...];<message>` with non-printable bytes escaped as
// `\xNN`, continuation lines (` KEY=value`) after the message. Two lines of an OOM kill matter
// (mm/oom_kill.c): `dump_oom_victim`'s
//   oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/a,task_memcg=/a/b,task=node,pid=9023,uid=0
// (`global_oom` in place of `oom_memcg=` for a node-wide OOM), which the kernel rate-limits with the
// rest of the OOM report (10 reports per 5 s), and `__oom_kill_process`'s
//   Memory cgroup out of memory: Killed process 9023 (node) total-vm:1196560kB, anon-rss:203648kB, file-rss:34576kB, shmem-rss:0kB, UID:0 pgtables:864kB oom_score_adj:0
// (`Out of memory:` for a node-wide OOM), which it never rate-limits. Pure parsing; values are
// bounded and anything malformed is ignored, never guessed at.

/** A record's header fields. */
export interface KernelLogRecord {
  readonly sequence: number;
  /** The kernel's timestamp: microseconds since boot (its local clock). */
  readonly timestampUs: number;
  readonly message: string;
}

/** The kernel's OOM constraint (`enum oom_constraint`). */
export type OomConstraint = 'CONSTRAINT_NONE' | 'CONSTRAINT_CPUSET' | 'CONSTRAINT_MEMORY_POLICY' | 'CONSTRAINT_MEMCG';

/** `oom-kill:...`: which OOM, and the victim's cgroup. */
export interface OomKillLine {
  readonly kind: 'oom-kill';
  readonly constraint: OomConstraint;
  /** The memory cgroup at its limit (absolute in the memory hierarchy), null for a node-wide OOM (`global_oom`). */
  readonly oomCgroup: string | null;
  /** The victim's memory cgroup, absolute in the memory hierarchy. */
  readonly taskCgroup: string | null;
  readonly process: string;
  readonly pid: number;
}

/** `...: Killed process ...`: the kill itself, with the victim's memory at the time. */
export interface KilledProcessLine {
  readonly kind: 'killed-process';
  /** From the line's prefix: `Memory cgroup out of memory` is a memcg OOM, `Out of memory` a node-wide one. */
  readonly scope: 'memcg' | 'node';
  readonly pid: number;
  readonly process: string;
  /** anon-rss + file-rss + shmem-rss, bytes. */
  readonly rssBytes: bigint;
  readonly oomScoreAdj: number | null;
}

export type OomLogLine = OomKillLine | KilledProcessLine;

const CONSTRAINTS: readonly OomConstraint[] = ['CONSTRAINT_NONE', 'CONSTRAINT_CPUSET', 'CONSTRAINT_MEMORY_POLICY', 'CONSTRAINT_MEMCG'];
// A process name is at most 15 bytes (TASK_COMM_LEN), escaped at most 4 characters each.
const MAX_PROCESS_CHARS = 64;
const MAX_CGROUP_PATH_CHARS = 4096;
const MAX_PID = 4_194_304; // PID_MAX_LIMIT on 64-bit

/** Parses a /dev/kmsg record; null when it is not one. */
export function parseKernelLogRecord(text: string): KernelLogRecord | null {
  const semicolon = text.indexOf(';');
  if (semicolon < 0) return null;
  const header = text.slice(0, semicolon).split(',');
  const sequence = Number(header[1]);
  const timestampUs = Number(header[2]);
  if (!Number.isSafeInteger(sequence) || !Number.isSafeInteger(timestampUs) || sequence < 0 || timestampUs < 0) return null;
  // The message ends at the first newline; continuation lines follow it.
  const rest = text.slice(semicolon + 1);
  const newline = rest.indexOf('\n');
  return { sequence, timestampUs, message: newline < 0 ? rest : rest.slice(0, newline) };
}

/** `\xNN` escapes back to characters (the kernel escapes bytes below 0x20 and above 0x7e, and `\`). */
function unescapeKernelText(text: string): string {
  return text.replace(/\\x([0-9a-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function pidOf(text: string | undefined): number | null {
  const pid = Number(text);
  return Number.isSafeInteger(pid) && pid > 0 && pid <= MAX_PID ? pid : null;
}

function cgroupPath(text: string | undefined): string | null {
  if (text === undefined || !text.startsWith('/') || text.length > MAX_CGROUP_PATH_CHARS || text.split('/').includes('..')) return null;
  return text;
}

// The victim's name and numbers are at the end (a name may hold commas), the cgroups before them.
const OOM_KILL = /^oom-kill:constraint=(\w+),nodemask=[^,]*(?:,cpuset=.*?,mems_allowed=[^,]*)?,(?:oom_memcg=(.*?)|global_oom)(?:,task_memcg=(.*?))?,task=(.*),pid=(\d+),uid=\d+$/;
const KILLED = /^(Memory cgroup out of memory|Out of memory(?: \(oom_kill_allocating_task\))?): Killed process (\d+) \((.*)\) total-vm:\d+kB, anon-rss:(\d+)kB, file-rss:(\d+)kB, shmem-rss:(\d+)kB(?:,.*?)?(?: oom_score_adj:(-?\d+))?$/;

/** The OOM killer line a message is, or null for every other message. */
export function parseOomLogLine(rawMessage: string): OomLogLine | null {
  const message = unescapeKernelText(rawMessage.trimEnd());
  if (message.startsWith('oom-kill:')) {
    const match = OOM_KILL.exec(message);
    if (match === null) return null;
    const constraint = CONSTRAINTS.find((c) => c === match[1]);
    const pid = pidOf(match[5]);
    const process = match[4] ?? '';
    if (constraint === undefined || pid === null || process.length > MAX_PROCESS_CHARS) return null;
    const oomCgroup = match[2] === undefined ? null : cgroupPath(match[2]);
    if (match[2] !== undefined && oomCgroup === null) return null;
    return { kind: 'oom-kill', constraint, oomCgroup, taskCgroup: cgroupPath(match[3]), process, pid };
  }
  if (!message.includes(': Killed process ')) return null;
  const match = KILLED.exec(message);
  if (match === null) return null;
  const pid = pidOf(match[2]);
  const process = match[3] ?? '';
  if (pid === null || process.length > MAX_PROCESS_CHARS) return null;
  const kib = (text: string | undefined): bigint => BigInt(text ?? '0') * 1024n;
  const scoreAdj = match[7] === undefined ? null : Number(match[7]);
  return {
    kind: 'killed-process',
    scope: match[1] === 'Memory cgroup out of memory' ? 'memcg' : 'node',
    pid,
    process,
    rssBytes: kib(match[4]) + kib(match[5]) + kib(match[6]),
    oomScoreAdj: scoreAdj !== null && Number.isSafeInteger(scoreAdj) && scoreAdj >= -1000 && scoreAdj <= 1000 ? scoreAdj : null,
  };
}

/**
 * The `oom_kill` count of a memory cgroup: the `oom_kill` line of cgroup v1 `memory.oom_control`
 * (Linux 4.13 and later) or of cgroup v2 `memory.events`. Null when the file has none.
 */
export function parseOomKillCount(text: string): bigint | null {
  const match = /^oom_kill (\d+)$/m.exec(text);
  return match === null ? null : BigInt(match[1] as string);
}
