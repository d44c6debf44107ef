// The agent's image (scripts/build-image.sh, built without a container engine) in the machine's real
// containerd: imported with `ctr -n k8s.io images import` under its reference, then run by runc with
// a read-only root filesystem, as the DaemonSet runs it. The image's own ENTRYPOINT starts the
// agent (its version, a check of the DaemonSet's configuration mounted read-only where the CMD looks
// for it), koffi loads libc through the agent's native module, and the process sees the image's
// WORKDIR, user and environment; with exactly the DaemonSet's capabilities, seccomp and no new
// privileges, the agent finds no capability missing. Root, containerd, ctr and runc are needed: the
// file skips with the reason printed when one is missing, and fails instead with KEA_E2E_REQUIRED=1.

import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { agentImage, importAgentImage, type AgentImage } from './harness/agent-image.js';
import { findRealNodeBinaries, REPO_ROOT } from './harness/binaries.js';
import { Containerd, K8S_NAMESPACE, processesInMountNamespace } from './harness/containerd.js';
import { cleanEnv } from './harness/control-plane.js';
import { onProcessExit } from './harness/exit-cleanup.js';
import { readImageArchive, type ImageConfig } from '../deploy/oci-archive.js';
import { agentContainer, embeddedConfig, loadManifest } from '../deploy/manifest.js';

const execFileAsync = promisify(execFile);
const SETUP_TIMEOUT_MS = 600_000;
const RUN_TIMEOUT_MS = 120_000;
const CONFIG_DIR = '/etc/kube-eviction-agent';

const required = process.env.KEA_E2E_REQUIRED === '1';
const binaries = findRealNodeBinaries();
const packageVersion = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const manifest = loadManifest();
const daemonSetConfig = embeddedConfig(manifest);
// What the DaemonSet's securityContext grants: every capability dropped but these.
const daemonSetCapabilities = (agentContainer(manifest).securityContext as { capabilities: { add: string[] } }).capabilities.add.map((c) => `CAP_${c}`);
// The capabilities ctr gives a container unless told otherwise (containerd's defaultUnixCaps).
const CTR_DEFAULT_CAPABILITIES = ['CAP_CHOWN', 'CAP_DAC_OVERRIDE', 'CAP_FSETID', 'CAP_FOWNER', 'CAP_MKNOD', 'CAP_NET_RAW', 'CAP_SETGID', 'CAP_SETUID', 'CAP_SETFCAP', 'CAP_SETPCAP', 'CAP_NET_BIND_SERVICE', 'CAP_SYS_CHROOT', 'CAP_KILL', 'CAP_AUDIT_WRITE'];
// Bit numbers of linux/capability.h, for /proc/<pid>/status.
const CAPABILITY_BITS: Readonly<Record<string, number>> = { CAP_DAC_READ_SEARCH: 2, CAP_KILL: 5, CAP_SYS_PTRACE: 19, CAP_SYS_ADMIN: 21, CAP_SYS_RESOURCE: 24 };

interface Setup {
  readonly dir: string;
  readonly containerd: Containerd;
  readonly image: AgentImage;
  readonly config: ImageConfig;
  readonly configDir: string;
}

let setup: Setup | null = null;
let skipReason: string | null = null;
let unregisterExit: (() => void) | null = null;
let containerCount = 0;

function ready(): Setup {
  if (setup === null) throw new Error('setup did not run');
  return setup;
}

beforeAll(async () => {
  const reasons: string[] = [];
  if (process.getuid?.() !== 0) reasons.push('containerd and runc need root');
  if (!binaries.ok) reasons.push(binaries.reason);
  const image = reasons.length === 0 ? await agentImage() : null;
  if (image !== null && !image.ok) reasons.push(image.reason);
  if (reasons.length > 0 || image === null || !image.ok || !binaries.ok) {
    skipReason = reasons.join('; ');
    if (required) throw new Error(`KEA_E2E_REQUIRED=1 but the image test cannot run: ${skipReason}`);
    console.log(`skipped: the agent image in real containerd: ${skipReason}`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'kea-image-e2e-'));
  const configDir = join(dir, 'config');
  mkdirSync(configDir);
  writeFileSync(join(configDir, daemonSetConfig.key), daemonSetConfig.text);
  // `ctr run` bypasses the CRI's runtime configuration: containerd finds the shim of the runtime
  // io.containerd.runc.v2 by its file name on its PATH, where the cached build has another name.
  const shimDir = join(dir, 'bin');
  mkdirSync(shimDir);
  symlinkSync(binaries.binaries.containerdShim, join(shimDir, 'containerd-shim-runc-v2'));
  const env = cleanEnv();
  env.PATH = `${shimDir}:${env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}`;
  // Importing the archive is part of the start: Containerd.start runs `ctr -n k8s.io images import`.
  const containerd = await Containerd.start({ binaries: binaries.binaries, dir: join(dir, 'containerd'), pauseImage: image.binaries.ref, imagesTar: image.binaries.archive, env });
  const namespace = containerd.mountNamespace;
  unregisterExit = onProcessExit(() => {
    for (const pid of processesInMountNamespace(namespace)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });
  setup = { dir, containerd, image: image.binaries, config: readImageArchive(image.binaries.archive).config, configDir };
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  if (setup !== null) {
    const { containerd, dir } = setup;
    const namespace = containerd.mountNamespace;
    await containerd.process.stop('SIGTERM', 5000);
    for (const pid of processesInMountNamespace(namespace)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
  unregisterExit?.();
}, 60_000);

function imageTest(name: string, fn: (s: Setup) => Promise<void>): void {
  test(
    name,
    async () => {
      if (skipReason !== null) {
        console.log(`skipped: ${name}: ${skipReason}`);
        return;
      }
      await fn(ready());
    },
    RUN_TIMEOUT_MS + 30_000,
  );
}

interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

// `ctr run --rm --read-only` in the runtime's mount namespace (where the shim reaches ctr's FIFOs),
// the DaemonSet's configuration bound read-only at its directory. `args` replace the image's CMD and
// keep its ENTRYPOINT, as a pod's `args` do; ctr itself would replace both, so the ENTRYPOINT read
// from the archive's own configuration goes first. `command` replaces both.
interface RunOptions {
  readonly args?: readonly string[];
  readonly command?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** Exactly these capabilities (CAP_...), with the runtime's default seccomp profile, as the DaemonSet asks. */
  readonly capabilities?: readonly string[];
}

async function runInImage(s: Setup, options: RunOptions): Promise<RunResult> {
  const entrypoint = s.config.config.Entrypoint ?? [];
  const processArgs = options.command ?? (options.args === undefined ? [] : [...entrypoint, ...options.args]);
  const id = `kea-image-${process.pid}-${++containerCount}`;
  const ctr = [s.containerd.enterCommand(), binaries.ok ? binaries.binaries.ctr : 'ctr'].flat();
  const args = [
    ...ctr.slice(1),
    '--address',
    s.containerd.socket,
    '-n',
    K8S_NAMESPACE,
    'run',
    '--runc-binary',
    binaries.ok ? binaries.binaries.runc : 'runc',
    '--rm',
    '--read-only',
    ...Object.entries(options.env ?? {}).flatMap(([name, value]) => ['--env', `${name}=${value}`]),
    ...(options.capabilities === undefined
      ? []
      : [
          '--seccomp',
          ...CTR_DEFAULT_CAPABILITIES.filter((c) => !options.capabilities?.includes(c)).flatMap((c) => ['--cap-drop', c]),
          ...options.capabilities.filter((c) => !CTR_DEFAULT_CAPABILITIES.includes(c)).flatMap((c) => ['--cap-add', c]),
        ]),
    '--mount',
    `type=bind,src=${s.configDir},dst=${CONFIG_DIR},options=rbind:ro`,
    s.image.ref,
    id,
    ...processArgs,
  ];
  try {
    const { stdout, stderr } = await execFileAsync(ctr[0] as string, args, { timeout: RUN_TIMEOUT_MS, env: cleanEnv() });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function describeRun(result: RunResult): string {
  return `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

// The exit status, with the run's output in the failure message.
function expectExit(result: RunResult, code: number): void {
  if (result.code !== code) throw new Error(`expected exit ${code}, got ${describeRun(result)}`);
}

imageTest('ctr names the imported image by its reference', async (s) => {
  const names = (await s.containerd.ctr(['-n', K8S_NAMESPACE, 'images', 'ls', '-q'])).split('\n');
  expect(names).toContain(s.image.ref);
  // By its digest too, as the chart's image.digest names it.
  expect(await s.containerd.ctr(['-n', K8S_NAMESPACE, 'images', 'ls'])).toContain(s.image.digest);
});

imageTest('importAgentImage imports it into a running containerd again, as a cluster fixture does', async (s) => {
  await expect(importAgentImage((args) => s.containerd.ctr(args), s.image)).resolves.toBeUndefined();
});

imageTest("the image's ENTRYPOINT starts the agent: --version prints the package's version", async (s) => {
  const result = await runInImage(s, { args: ['--version'] });
  expectExit(result, 0);
  expect(result.stdout.trim()).toBe(packageVersion);
});

imageTest("check-config accepts the DaemonSet's configuration, mounted read-only where the CMD reads it", async (s) => {
  const cmd = s.config.config.Cmd ?? [];
  const configPath = cmd[cmd.indexOf('--config') + 1];
  expect(configPath).toBe(`${CONFIG_DIR}/${daemonSetConfig.key}`);
  const result = await runInImage(s, { args: ['check-config', configPath as string] });
  expectExit(result, 0);
  expect(result.stdout).toContain(`${configPath}: valid`);
});

imageTest("koffi loads in the image: the agent's native module opens an eventfd through libc", async (s) => {
  const script = [
    "const { libc } = await import('/app/dist/native/libc.js');",
    'const fd = libc().eventfd(0, 0o2000000);',
    'console.log(JSON.stringify({ fd, cwd: process.cwd(), uid: process.getuid(), nodeEnv: process.env.NODE_ENV, node: process.version, execPath: process.execPath }));',
  ].join(' ');
  const result = await runInImage(s, { command: ['node', '--input-type=module', '-e', script] });
  expectExit(result, 0);
  const seen = JSON.parse(result.stdout.trim()) as { fd: number; cwd: string; uid: number; nodeEnv: string; node: string; execPath: string };
  expect(seen.fd).toBeGreaterThanOrEqual(3);
  expect({ cwd: seen.cwd, uid: seen.uid, nodeEnv: seen.nodeEnv, execPath: seen.execPath }).toEqual({ cwd: '/app', uid: 0, nodeEnv: 'production', execPath: '/usr/local/bin/node' });
  const nodeVersion = s.config.config.Env?.find((e) => e.startsWith('NODE_VERSION='))?.slice('NODE_VERSION='.length);
  expect(seen.node).toBe(`v${nodeVersion ?? '?'}`);
});

imageTest('the root filesystem is read-only, as the DaemonSet mounts it', async (s) => {
  const script = "try { require('fs').writeFileSync('/app/probe', 'x'); console.log('written') } catch (e) { console.log(e.code) }";
  const result = await runInImage(s, { command: ['node', '-e', script] });
  expectExit(result, 0);
  expect(result.stdout.trim()).toBe('EROFS');
});

imageTest('the default CMD runs the agent on the mounted configuration until it needs the cluster', async (s) => {
  const result = await runInImage(s, { env: { NODE_NAME: 'image-node' } });
  // No API server is reachable from this container: the agent loads every module, reads the
  // configuration where the CMD points, and stops at the Kubernetes connection with its own error.
  const lines = result.stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { code?: string; msg?: string });
  expect({ code: result.code, last: lines.at(-1) }).toEqual({ code: 1, last: expect.objectContaining({ code: 'EVA_ERR_KUBE_API', msg: 'cannot start' }) });
});

imageTest("with exactly the DaemonSet's capabilities, seccomp and no new privileges, the agent finds none missing", async (s) => {
  const expectedMask = daemonSetCapabilities.reduce((mask, c) => {
    const bit = CAPABILITY_BITS[c];
    if (bit === undefined) throw new Error(`no bit number known for ${c}`);
    return mask | (1n << BigInt(bit));
  }, 0n);
  const status = await runInImage(s, { command: ['node', '-e', "process.stdout.write(require('fs').readFileSync('/proc/self/status', 'utf8'))"], capabilities: daemonSetCapabilities });
  expectExit(status, 0);
  const field = (name: string): string => new RegExp(`^${name}:\\s*(\\S+)$`, 'm').exec(status.stdout)?.[1] ?? '';
  expect({ CapEff: BigInt(`0x${field('CapEff')}`), CapBnd: BigInt(`0x${field('CapBnd')}`), NoNewPrivs: field('NoNewPrivs'), Seccomp: field('Seccomp') }).toEqual({ CapEff: expectedMask, CapBnd: expectedMask, NoNewPrivs: '1', Seccomp: '2' });

  const result = await runInImage(s, { env: { NODE_NAME: 'image-node' }, capabilities: daemonSetCapabilities });
  const lines = result.stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { code?: string; msg?: string; capability?: string });
  expect(lines.filter((l) => l.code === 'EVA_ERR_CAPABILITY')).toEqual([]);
  expect(lines.at(-1)).toEqual(expect.objectContaining({ code: 'EVA_ERR_KUBE_API', msg: 'cannot start' }));
});
