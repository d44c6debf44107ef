// Small Node programs the suites start inside pod cgroups (through CgroupSandbox.startCommand):
// each says `ready` on stdout once it runs, then does one thing a workload does.

/**
 * A leak: every `intervalMs` (0: back to back) allocates `chunkBytes`, writes every byte so each
 * page is charged, and keeps it, up to `maxBytes`; then holds what it has. No signal handler:
 * SIGTERM ends it at once.
 */
const LEAK = `
const [chunk, interval, max] = process.argv.slice(1).map(Number);
const kept = [];
let total = 0;
const grow = () => { if (total + chunk > max) return false; kept.push(Buffer.alloc(chunk, 0x5a)); total += chunk; return true; };
process.stdout.write('ready\\n');
if (interval === 0) { while (grow()) {} setInterval(() => {}, 1 << 30); }
else { const timer = setInterval(() => { if (!grow()) clearInterval(timer); }, interval); setInterval(() => {}, 1 << 30); }
`;

export function leakCommand(chunkBytes: number, intervalMs: number, maxBytes: number): string[] {
  return [process.execPath, '-e', LEAK, String(chunkBytes), String(intervalMs), String(maxBytes)];
}

/**
 * Reads `paths` every `intervalMs` for `durationMs` after a warm-up, for each interval in turn (0:
 * no reads, an idle timer only), the next read scheduled when one ends, and prints one JSON line
 * per interval with the CPU it used. `style`: `async` reads as the fast check does
 * (fs.promises.readFile: open, read, close on the thread pool); `sync` the same on the main
 * thread; `open-fd` keeps each file open and preads it (as the observer's file cache does).
 */
const POLLER = `
const fs = require('fs');
const [style, paths, intervals, duration, warmup] = [process.argv[1], process.argv[2].split(','), process.argv[3].split(',').map(Number), Number(process.argv[4]), Number(process.argv[5])];
const fds = style === 'open-fd' ? paths.map((p) => fs.openSync(p, 'r')) : [];
const buffer = Buffer.alloc(64 * 1024);
const readAll = () => {
  if (style === 'async') return Promise.all(paths.map((p) => fs.promises.readFile(p, 'utf8')));
  if (style === 'sync') for (const p of paths) fs.readFileSync(p, 'utf8');
  else for (const fd of fds) buffer.toString('latin1', 0, fs.readSync(fd, buffer, 0, buffer.length, 0));
  return Promise.resolve();
};
process.stdout.write('ready\\n');
const measure = (interval) => new Promise((resolve) => {
  let reads = 0, stop = false, startedCpu = null, startedNs = 0n;
  const tick = () => {
    if (stop) return;
    if (interval === 0) return void setTimeout(tick, 1000);
    readAll().then(() => { reads++; setTimeout(tick, interval); });
  };
  tick();
  setTimeout(() => { startedCpu = process.cpuUsage(); startedNs = process.hrtime.bigint(); reads = 0; }, warmup);
  setTimeout(() => {
    stop = true;
    const cpu = process.cpuUsage(startedCpu);
    resolve({ intervalMs: interval, reads, cpuUs: cpu.user + cpu.system, wallUs: Number(process.hrtime.bigint() - startedNs) / 1000 });
  }, warmup + duration);
});
(async () => {
  for (const interval of intervals) process.stdout.write(JSON.stringify(await measure(interval)) + '\\n');
  process.exit(0);
})();
`;

export type PollStyle = 'async' | 'sync' | 'open-fd';

export function pollerCommand(style: PollStyle, paths: readonly string[], intervalsMs: readonly number[], durationMs: number, warmupMs: number): string[] {
  return [process.execPath, '-e', POLLER, style, paths.join(','), intervalsMs.join(','), String(durationMs), String(warmupMs)];
}

/**
 * The leaking pod of the OOM race: touches memory at once until `usagePath` reads `leadBytes` short
 * of `crossAtBytes` (a lead of `crossAtBytes` or more touches nothing: a second allocator of the
 * same pod), says `ready`, idles until SIGUSR1, then allocates and touches memory without ever
 * freeing: `rate` bytes a second (a chunk every 10 ms, catching up when a timer fires late), or, with
 * a rate of 0, as fast as it can (1 MiB chunks back to back). It reads `usagePath` after each chunk
 * until it reaches `crossAtBytes`. It prints `go <ns>` when it starts and `crossed <ns> <bytes
 * allocated>` then, on CLOCK_MONOTONIC (process.hrtime, the same clock in every process of the
 * guest). No SIGTERM handler: SIGTERM ends it at once.
 */
const RACE_LEAK = `
const fs = require('fs');
const [rate, usagePath, crossAt, lead] = [Number(process.argv[1]), process.argv[2], BigInt(process.argv[3]), BigInt(process.argv[4])];
const usageFd = fs.openSync(usagePath, 'r');
const buffer = Buffer.alloc(64);
const usage = () => BigInt(buffer.toString('latin1', 0, fs.readSync(usageFd, buffer, 0, 64, 0)).trim());
const kept = [];
let allocated = 0, crossed = false;
const chunk = rate === 0 ? 1 << 20 : Math.max(4096, Math.round(rate / 100 / 4096) * 4096);
if (lead < crossAt) while (usage() + (4n << 20n) < crossAt - lead) kept.push(Buffer.alloc(4 << 20, 0x5a));
const grow = () => {
  kept.push(Buffer.alloc(chunk, 0x5a));
  allocated += chunk;
  if (!crossed && usage() >= crossAt) { crossed = true; fs.writeSync(1, 'crossed ' + process.hrtime.bigint() + ' ' + allocated + '\\n'); }
};
process.on('SIGUSR1', () => {
  const startNs = process.hrtime.bigint();
  fs.writeSync(1, 'go ' + startNs + '\\n');
  if (rate === 0) { for (;;) grow(); }
  const tick = () => {
    const target = rate * Number(process.hrtime.bigint() - startNs) / 1e9;
    while (allocated + chunk <= target) grow();
    setTimeout(tick, 10);
  };
  tick();
});
fs.writeSync(1, 'ready\\n');
setInterval(() => {}, 1 << 30);
`;

/** `bytesPerSecond` 0: as fast as it can. */
export function raceLeakCommand(leadBytes: number, bytesPerSecond: number, usagePath: string, crossAtBytes: number): string[] {
  return [process.execPath, '-e', RACE_LEAK, String(bytesPerSecond), usagePath, String(crossAtBytes), String(leadBytes)];
}

/**
 * Allocates and touches `totalBytes` as fast as it can in 1 MiB chunks, then idles; prints
 * `ready`, then `at <bytes> <ns>` each time another `everyBytes` is touched, then `done`.
 */
const GREEDY = `
const fs = require('fs');
const [total, every] = process.argv.slice(1).map(Number);
const kept = [];
fs.writeSync(1, 'ready\\n');
for (let done = 0; done < total; ) {
  kept.push(Buffer.alloc(1 << 20, 0x5a));
  done += 1 << 20;
  if (done % every === 0) fs.writeSync(1, 'at ' + done + ' ' + process.hrtime.bigint() + '\\n');
}
fs.writeSync(1, 'done\\n');
setInterval(() => {}, 1 << 30);
`;

export function greedyCommand(totalBytes: number, everyBytes: number): string[] {
  return [process.execPath, '-e', GREEDY, String(totalBytes), String(everyBytes)];
}
