// The capability check: a node-like fixture built with full root (a cgroup v1 "node" with a pod
// cgroup whose process runs as another user, a frozen-able freezer cgroup, and a pod volume that
// user owns, mode 0700), then test/helpers/capability-driver.mjs run from a compiled tree under
// scripts/with-capabilities.sh with exactly the given capabilities. It answers what each feature
// did, what the agent logged, and whether the other user's process survived.

import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CgroupSandbox, cgroupV1Unavailable } from './cgroup-sandbox.js';

const HERE = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = join(HERE, '..', '..');
const DRIVER = join(HERE, 'capability-driver.mjs');
const WITH_CAPABILITIES = join(REPO_ROOT, 'scripts', 'with-capabilities.sh');
const FREEZER_ROOT = '/sys/fs/cgroup/freezer';
const NOBODY = 65534;
const VOLUME_FILE_BYTES = 64 * 1024;

/** One feature's outcome, as the driver reports it. */
export interface StepResult {
  readonly ok: boolean;
  readonly [key: string]: unknown;
}

export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly code?: string;
  readonly [key: string]: unknown;
}

export interface CapabilityRun {
  readonly capabilities: readonly string[];
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly results: Readonly<Record<string, StepResult>>;
  /** The agent's log lines (pino JSON). */
  readonly log: readonly LogLine[];
  /** Whether the pod process running as another user was still alive after the run. */
  readonly otherUserProcessSurvived: boolean;
}

function capBits(): bigint {
  const line = /^CapEff:\s*([0-9a-f]+)$/m.exec(spawnSync('cat', ['/proc/self/status'], { encoding: 'utf8' }).stdout)?.[1];
  return BigInt(`0x${line ?? '0'}`);
}

/** Why the check cannot run here, or null. */
export function capabilityCheckUnavailable(): string | null {
  if (process.platform !== 'linux') return 'not Linux';
  const cgroups = cgroupV1Unavailable();
  if (cgroups !== null) return cgroups;
  if (process.env.KEA_CAPABILITY_SET !== undefined) return `this run already has only ${process.env.KEA_CAPABILITY_SET}; the check builds its fixture with full root and reduces the capabilities itself`;
  if (spawnSync('capsh', ['--print'], { encoding: 'utf8' }).status !== 0) return 'capsh is not installed (Debian package libcap2-bin)';
  if (spawnSync('setpriv', ['--version']).status !== 0) return 'setpriv is not installed (util-linux)';
  if (!existsSync(join(FREEZER_ROOT, 'cgroup.procs'))) return `no cgroup v1 freezer hierarchy at ${FREEZER_ROOT}`;
  // The fixture: CAP_SETUID/CAP_SETGID (a process of another user), CAP_DAC_OVERRIDE (cgroups below
  // a hierarchy's root, files of another user); the runs: CAP_KILL and CAP_DAC_READ_SEARCH to keep.
  const bits = capBits();
  for (const [name, bit] of [['CAP_DAC_OVERRIDE', 1], ['CAP_DAC_READ_SEARCH', 2], ['CAP_CHOWN', 0], ['CAP_KILL', 5], ['CAP_SETGID', 6], ['CAP_SETUID', 7]] as const) {
    if (((bits >> BigInt(bit)) & 1n) === 0n) return `this process lacks ${name}`;
  }
  return null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return !alive(pid);
}

export interface CapabilityRunOptions {
  /** The compiled tree's dist directory (holding src/ and native/), with node_modules beside it. */
  readonly distRoot: string;
  /** The Node binary to run the driver with. */
  readonly nodeBin: string;
  /** Capability names as the DaemonSet writes them (KILL, DAC_READ_SEARCH). */
  readonly capabilities: readonly string[];
}

/** Builds the fixture, runs the driver under exactly `capabilities`, and removes everything it made. */
export async function runWithCapabilities(options: CapabilityRunOptions): Promise<CapabilityRun> {
  const sandbox = await CgroupSandbox.create({ limitBytes: 1n << 30n });
  const scratch = mkdtempSync(join(tmpdir(), 'kea-capabilities-'));
  const freezer = join(FREEZER_ROOT, sandbox.name.replace(/\//g, '-'));
  const uid = `0c0ffee0-0000-4000-8000-${String(process.pid).padStart(12, '0')}`;
  const containerCgroup = sandbox.mkdir(`kubepods/besteffort/pod${uid}/${'c'.repeat(64)}`);
  let pid: number | undefined;
  try {
    mkdirSync(freezer);
    // A pod process of another user, in a session of its own (a signal from the same session
    // proves nothing: SIGCONT needs no capability there).
    const child = spawn('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'sleep', '600'], { detached: true, stdio: 'ignore' });
    child.unref();
    pid = child.pid;
    if (pid === undefined) throw new Error('setpriv did not start');
    writeFileSync(join(containerCgroup, 'cgroup.procs'), String(pid));
    writeFileSync(join(freezer, 'cgroup.procs'), String(pid));

    // The kubelet's and the runtime's directories: an emptyDir volume (mode 0777, root's) holding
    // a directory and a file of the pod's user, mode 0700 and 0600.
    const kubeletRootDir = join(scratch, 'kubelet');
    const volume = join(kubeletRootDir, 'pods', uid, 'volumes', 'kubernetes.io~empty-dir', 'cache');
    mkdirSync(join(volume, 'private'), { recursive: true });
    chmodSync(volume, 0o777);
    writeFileSync(join(volume, 'private', 'data'), Buffer.alloc(VOLUME_FILE_BYTES, 1));
    chownSync(join(volume, 'private', 'data'), NOBODY, NOBODY);
    chownSync(join(volume, 'private'), NOBODY, NOBODY);
    chmodSync(join(volume, 'private', 'data'), 0o600);
    chmodSync(join(volume, 'private'), 0o700);
    const podLogsDir = join(scratch, 'pod-logs');
    const imageFsPath = join(scratch, 'containerd');
    const emptyCgroupRoot = join(scratch, 'no-cgroup');
    for (const dir of [podLogsDir, imageFsPath, emptyCgroupRoot]) mkdirSync(dir);

    const fixture = {
      distRoot: options.distRoot,
      nodeCgroup: sandbox.name,
      emptyCgroupRoot,
      kubeletRootDir,
      podLogsDir,
      imageFsPath,
      freezerCgroup: freezer,
      otherUserPid: pid,
      volumeFileBytes: VOLUME_FILE_BYTES,
      pod: { name: 'victim', namespace: 'capabilities', uid, volume: 'cache' },
    };
    const caps = options.capabilities.map((c) => `cap_${c.toLowerCase()}`).join(',');
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.NODE_OPTIONS;
    const run = spawnSync('bash', [WITH_CAPABILITIES, caps === '' ? 'none' : caps, options.nodeBin, DRIVER, JSON.stringify(fixture)], { encoding: 'utf8', env, timeout: 120_000 });
    if (run.error !== undefined) throw run.error;
    const log: LogLine[] = [];
    let results: Record<string, StepResult> = {};
    for (const line of run.stdout.split('\n')) {
      if (!line.startsWith('{')) continue;
      const parsed = JSON.parse(line) as LogLine | { results: Record<string, StepResult> };
      if ('results' in parsed) results = parsed.results as Record<string, StepResult>;
      else log.push(parsed);
    }
    const survived = !(await waitGone(pid, 2000));
    return { capabilities: options.capabilities, status: run.status, stdout: run.stdout, stderr: run.stderr, results, log, otherUserProcessSurvived: survived };
  } finally {
    // A frozen task cannot die: thaw first, whatever the driver left.
    if (existsSync(freezer)) writeFileSync(join(freezer, 'freezer.state'), 'THAWED');
    if (pid !== undefined && alive(pid)) {
      process.kill(pid, 'SIGKILL');
      await waitGone(pid, 5000);
    }
    if (existsSync(freezer)) rmdirSync(freezer);
    await sandbox.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** A stack frame in output: what the agent must never print for a missing capability. */
export const STACK_FRAME = /^\s+at .+(:\d+:\d+\)?|\(native\))$/m;
