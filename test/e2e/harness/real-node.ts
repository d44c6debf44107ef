// A real node for the end-to-end tests: containerd (containerd.ts) and a real kubelet registered as
// a Node with the test control plane, running real pods with runc, all on loopback. The kubelet:
// its own --root-dir on a small tmpfs (so a pod filling its emptyDir puts the node under disk
// pressure), the cgroupfs driver under a unique cgroup root (node-cgroups.ts) with systemReserved
// sized so that `kubepods` gets a limit of a few GiB (a leak reaches the kernel OOM killer in
// seconds), its server on a free port serving the control plane's certificate, a static pod
// directory, and the node identity system:node:<name>. Everything it starts is stopped, every mount
// under its directory unmounted, every cgroup removed: in stop(), on the test process's exit, and by
// a watchdog if the test process is killed outright.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { Summary } from '../../../src/api/summary.js';
import { ApiClient } from './api-client.js';
import { PortForwarder } from './port-forwarder.js';
import { REPO_ROOT, type Lookup, type RealNodeBinaries } from './binaries.js';
import { Containerd, processesInMountNamespace } from './containerd.js';
import { cleanEnv, type ControlPlane } from './control-plane.js';
import { onProcessExit, shellQuote, startWatchdog, type Watchdog } from './exit-cleanup.js';
import { freePorts } from './free-port.js';
import { KernelOomWatch } from './kernel-oom-watch.js';
import { kubeconfigYaml } from './kubeconfig.js';
import { ManagedProcess } from './managed-process.js';
import { NodeCgroups } from './node-cgroups.js';
import { NODE_IP, type PodNetwork } from './pod-network.js';
import { sleep, waitFor } from './wait.js';

export const PAUSE_IMAGE = 'localhost/kea-e2e/pause:1';
export const WORKLOAD_IMAGE = 'localhost/kea-e2e/workload:1';

/**
 * The images tarball of scripts/build-node-images.sh (built in about a second, then cached), or why
 * it cannot be built here (no C compiler with a static libc).
 */
export function nodeImages(): Lookup<string> {
  try {
    const out = execFileSync('bash', [join(REPO_ROOT, 'scripts', 'build-node-images.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { ok: true, binaries: out.trimEnd().split('\n').at(-1) ?? '' };
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    return { ok: false, reason: `the node images cannot be built (scripts/build-node-images.sh): ${stderr.trim().split('\n').at(-1) ?? String(err)}` };
  }
}

export interface RealNodeOptions {
  readonly plane: ControlPlane;
  readonly binaries: RealNodeBinaries;
  /** A name with a kubelet token in the control plane (its `nodeNames`). */
  readonly nodeName: string;
  /** The images tarball of scripts/build-node-images.sh. */
  readonly imagesTar: string;
  /** The memory limit the kubelet gives `kubepods` (capacity minus systemReserved). */
  readonly kubepodsLimitBytes: bigint;
  /** The size of the tmpfs the kubelet's root directory is on (its nodefs). */
  readonly rootDirSizeBytes: bigint;
  /** The kubelet's own hard eviction thresholds (KubeletConfiguration evictionHard). */
  readonly evictionHard: Readonly<Record<string, string>>;
  /** pids.max of each pod cgroup: a fork leak cannot take the machine's PIDs. */
  readonly podPidsLimit: number;
  /**
   * A pod network (pod-network.ts): the node in a network namespace of its own with a CNI bridge,
   * the node address NODE_IP, and the API server forwarded into it, its directories also where a
   * node has them (containerd.ts, standardLayout). Without one, the machine's network and
   * host-network pods only.
   */
  readonly podNetwork?: PodNetwork;
  /** KubeletConfiguration fields set over the harness's own (e.g. syncFrequency). */
  readonly kubeletConfig?: Readonly<Record<string, unknown>>;
}

function memTotalBytes(): bigint {
  const kib = /^MemTotal:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1];
  if (kib === undefined) throw new Error('no MemTotal in /proc/meminfo');
  return BigInt(kib) * 1024n;
}

// The mount points at or below `dir` in this process's mount namespace, deepest first.
function mountsUnder(dir: string): string[] {
  const points: string[] = [];
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    // Field 5 is the mount point, with spaces and the like as octal escapes.
    const point = line.split(' ')[4]?.replace(/\\(\d{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
    if (point !== undefined && (point === dir || point.startsWith(`${dir}/`))) points.push(point);
  }
  return points.sort((a, b) => b.length - a.length);
}

function unmountAllUnder(dir: string): void {
  for (const point of mountsUnder(dir)) {
    const done = spawnSync('umount', [point], { stdio: 'ignore' });
    if (done.status !== 0) spawnSync('umount', ['--lazy', point], { stdio: 'ignore' });
  }
}

function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

export class RealNode {
  readonly nodeName: string;
  readonly dir: string;
  /** The kubelet's --root-dir (a tmpfs of rootDirSizeBytes). */
  readonly rootDir: string;
  readonly podLogsDir: string;
  readonly staticPodDir: string;
  readonly cgroups: NodeCgroups;
  readonly oomWatch: KernelOomWatch;
  readonly kubepodsLimitBytes: bigint;
  containerd: Containerd | null = null;
  kubelet: ManagedProcess | null = null;
  /** With a pod network: the API server's port into the node's namespace, the kubelet's out of it. */
  forwarders: PortForwarder[] = [];
  kubeletPort = 0;
  private watchdog: Watchdog | null = null;
  private unregisterExit: (() => void) | null = null;
  private stopped = false;

  private constructor(
    private readonly options: RealNodeOptions,
    dir: string,
  ) {
    this.nodeName = options.nodeName;
    this.dir = dir;
    this.rootDir = join(dir, 'kubelet');
    this.podLogsDir = join(dir, 'pod-logs');
    this.staticPodDir = join(dir, 'manifests');
    this.kubepodsLimitBytes = options.kubepodsLimitBytes;
    for (const sub of [this.rootDir, this.podLogsDir, this.staticPodDir]) mkdirSync(sub, { recursive: true });
    this.cgroups = NodeCgroups.create();
    this.oomWatch = KernelOomWatch.start(this.cgroups.name);
    this.guard();
  }

  static async start(options: RealNodeOptions): Promise<RealNode> {
    const node = new RealNode(options, mkdtempSync(join(tmpdir(), 'kea-e2e-node-')));
    try {
      await node.startAll();
      return node;
    } catch (err) {
      const diagnostics = node.diagnostics();
      await node.stop();
      throw new Error(`the real node did not start: ${err instanceof Error ? err.message : String(err)}\n${diagnostics}`);
    }
  }

  /** The pod cgroup root relative to the memory hierarchy's root (the agent's observe.podCgroupRoot). */
  get podCgroupRoot(): string {
    return `${this.cgroups.name}/kubepods`;
  }

  /** The kubepods cgroup in the memory hierarchy. */
  get kubepodsMemoryPath(): string {
    return join(this.cgroups.memoryPath, 'kubepods');
  }

  /** containerd's root: the image filesystem. */
  get imageFsDir(): string {
    if (this.containerd === null) throw new Error('containerd is not running');
    return this.containerd.rootDir;
  }

  private async startAll(): Promise<void> {
    const o = this.options;
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${o.rootDirSizeBytes},mode=0755`, 'kea-e2e-kubelet-root', this.rootDir]);
    this.containerd = await Containerd.start({ binaries: o.binaries, dir: join(this.dir, 'containerd'), pauseImage: PAUSE_IMAGE, imagesTar: o.imagesTar, env: cleanEnv(), podNetwork: o.podNetwork, standardLayout: o.podNetwork === undefined ? undefined : { kubeletRootDir: this.rootDir, podLogsDir: this.podLogsDir } });
    this.guard();
    if (o.podNetwork !== undefined) {
      // The kubelet in the namespace reaches the API server at the URL it has outside.
      this.forwarders.push(await PortForwarder.start({ dir: this.dir, name: 'apiserver', port: Number(new URL(o.plane.url).port), enterCommand: this.containerd.enterCommand(), direction: 'into' }));
      this.guard();
    }

    const [port, healthzPort] = (await freePorts(2)) as [number, number];
    this.kubeletPort = port;
    if (o.podNetwork !== undefined) {
      // The kubelet's port, inside the namespace, at the same port on the machine's loopback: for
      // the tests' /stats/summary reads and the API server's logs, exec and attach.
      this.forwarders.push(await PortForwarder.start({ dir: this.dir, name: 'kubelet', port, enterCommand: this.containerd.enterCommand(), direction: 'out' }));
      this.guard();
    }
    const credentials = o.plane.credentials;
    const token = credentials.nodeTokens.get(o.nodeName);
    if (token === undefined) throw new Error(`node ${o.nodeName} has no token: pass it in the suite's nodeNames`);
    const kubeconfig = join(this.dir, 'kubelet.kubeconfig');
    writeFileSync(kubeconfig, kubeconfigYaml({ server: o.plane.url, caPem: o.plane.caPem, token, user: `system:node:${o.nodeName}` }), { mode: 0o600 });
    const systemReservedBytes = memTotalBytes() - o.kubepodsLimitBytes;
    if (systemReservedBytes <= 0n) throw new Error(`the machine has less memory than the kubepods limit asked for (${o.kubepodsLimitBytes} bytes)`);
    const config = {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: '127.0.0.1',
      port,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort,
      // The control plane's certificate is for 127.0.0.1: the tests' clients already trust it.
      tlsCertFile: credentials.servingCertFile,
      tlsPrivateKeyFile: credentials.servingKeyFile,
      // Loopback only, for the tests' /stats/summary reads.
      authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
      authorization: { mode: 'AlwaysAllow' },
      containerRuntimeEndpoint: `unix://${this.containerd.socket}`,
      cgroupDriver: 'cgroupfs',
      cgroupRoot: `/${this.cgroups.name}`,
      cgroupsPerQOS: true,
      // The machine has cgroup v1 only.
      failCgroupV1: false,
      failSwapOn: false,
      enforceNodeAllocatable: ['pods'],
      systemReserved: { memory: `${systemReservedBytes / 1024n}Ki` },
      evictionHard: o.evictionHard,
      evictionPressureTransitionPeriod: '5s',
      kernelMemcgNotification: true,
      podPidsLimit: o.podPidsLimit,
      maxPods: 30,
      staticPodPath: this.staticPodDir,
      fileCheckFrequency: '1s',
      podLogsDir: this.podLogsDir,
      volumePluginDir: join(this.dir, 'volume-plugins'),
      // The images are imported, never pulled, and must not be collected.
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      serializeImagePulls: false,
      containerLogMaxSize: '1Mi',
      containerLogMaxFiles: 2,
      shutdownGracePeriod: '0s',
      protectKernelDefaults: false,
      ...o.kubeletConfig,
    };
    const configFile = join(this.dir, 'kubelet-config.yaml');
    writeFileSync(configFile, stringify(config));
    const args = [
      ...this.containerd.enterCommand(),
      o.binaries.kubelet,
      `--config=${configFile}`,
      `--kubeconfig=${kubeconfig}`,
      `--root-dir=${this.rootDir}`,
      `--cert-dir=${join(this.dir, 'kubelet-pki')}`,
      `--hostname-override=${o.nodeName}`,
      // A pod network gives the node an address that is not loopback (the kubelet refuses one).
      ...(o.podNetwork === undefined ? [] : [`--node-ip=${NODE_IP}`]),
      '--v=2',
    ];
    const kubelet = ManagedProcess.start('kubelet', args[0] as string, args.slice(1), { env: cleanEnv(), logFile: join(this.dir, 'kubelet.log'), cwd: this.dir });
    this.kubelet = kubelet;
    this.guard();
    const admin = o.plane.admin();
    await waitFor(
      async () => {
        const node = await admin.request<{ status?: { conditions?: { type: string; status: string }[] } }>('GET', `/api/v1/nodes/${o.nodeName}`);
        return node.status === 200 && node.body.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
      },
      { what: `the kubelet's Node ${o.nodeName} Ready`, timeoutMs: 90_000, intervalMs: 250, abortIf: () => (kubelet.running ? null : `${kubelet.describeExit()}\n${kubelet.logTail()}`) },
    );
  }

  /** The kubelet's own Summary, from its port (the Node has no address for the API server's proxy). */
  async summary(): Promise<Summary> {
    const client = new ApiClient(`https://127.0.0.1:${this.kubeletPort}`, this.options.plane.caPem, null);
    const answer = await client.request<Summary>('GET', '/stats/summary', { timeoutMs: 10_000 });
    if (answer.status !== 200) throw new Error(`the kubelet's /stats/summary answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    return answer.body;
  }

  /** Writes a static pod manifest; the kubelet picks it up within its file check period (1 s). */
  writeStaticPod(fileName: string, pod: Record<string, unknown>): void {
    writeFileSync(join(this.staticPodDir, fileName), stringify(pod));
  }

  removeStaticPod(fileName: string): void {
    rmSync(join(this.staticPodDir, fileName), { force: true });
  }

  /** `memory.max_usage_in_bytes` of kubepods since the last reset. */
  kubepodsMaxUsageBytes(): number {
    return Number(readFileSync(join(this.kubepodsMemoryPath, 'memory.max_usage_in_bytes'), 'utf8'));
  }

  resetKubepodsMaxUsage(): void {
    writeFileSync(join(this.kubepodsMemoryPath, 'memory.max_usage_in_bytes'), '0\n');
  }

  /** The kubelet's log, from `fromByte` on (for assertions on what it logged). */
  kubeletLog(fromByte = 0): string {
    try {
      return readFileSync(join(this.dir, 'kubelet.log')).subarray(fromByte).toString('utf8');
    } catch {
      return '';
    }
  }

  kubeletLogSize(): number {
    return this.kubeletLog().length;
  }

  /** Stops everything and removes every trace. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const errors: string[] = [];
    await this.kubelet?.stop('SIGTERM', 5000);
    for (const forwarder of this.forwarders) await forwarder.stop();
    // The pods' processes (their cgroups) and the shims (the namespace) go before containerd.
    const namespace = this.containerd?.mountNamespace;
    for (let attempt = 0; attempt < 50; attempt++) {
      const left = [...this.cgroups.processes(), ...(namespace === undefined ? [] : processesInMountNamespace(namespace).filter((pid) => pid !== this.containerd?.process.pid))];
      if (left.length === 0) break;
      killAll(left);
      await sleep(100);
    }
    await this.containerd?.process.stop('SIGTERM', 5000);
    if (namespace !== undefined) {
      for (let attempt = 0; attempt < 50 && processesInMountNamespace(namespace).length > 0; attempt++) {
        killAll(processesInMountNamespace(namespace));
        await sleep(100);
      }
    }
    this.oomWatch.stop();
    try {
      await this.cgroups.remove();
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
    }
    unmountAllUnder(this.dir);
    const mounted = mountsUnder(this.dir);
    if (mounted.length > 0) errors.push(`still mounted: ${mounted.join(', ')}`);
    else rmSync(this.dir, { recursive: true, force: true });
    this.unregisterExit?.();
    this.watchdog?.disarm();
    if (errors.length > 0) throw new Error(`the real node was not fully cleaned up: ${errors.join('; ')}`);
  }

  /** Log tails of the kubelet and containerd, for a failure message. */
  diagnostics(): string {
    const parts: string[] = [];
    for (const proc of [this.containerd?.process ?? null, this.kubelet]) {
      if (proc !== null) parts.push(`--- ${proc.describeExit()}; last lines of ${proc.logFile}:\n${proc.logTail(40)}`);
    }
    return parts.join('\n');
  }

  // Keeps the safety nets in step with what runs: the exit handler and the watchdog.
  private guard(): void {
    this.unregisterExit ??= onProcessExit(() => {
      killAll([this.kubelet?.running === true ? this.kubelet.pid : 0, this.containerd?.process.running === true ? this.containerd.process.pid : 0, ...this.forwarders.flatMap((f) => f.pids)].filter((p) => p > 0));
      const namespace = this.containerd?.mountNamespace;
      for (let attempt = 0; attempt < 20; attempt++) {
        const left = [...this.cgroups.processes(), ...(namespace === undefined ? [] : processesInMountNamespace(namespace))];
        if (left.length === 0) break;
        killAll(left);
        spawnSync('sleep', ['0.1']);
      }
      this.oomWatch.stop();
      this.cgroups.removeSync();
      unmountAllUnder(this.dir);
      if (mountsUnder(this.dir).length === 0) rmSync(this.dir, { recursive: true, force: true });
    });
    const pids = [this.kubelet?.pid, this.containerd?.process.pid, this.oomWatch.pid, ...this.forwarders.flatMap((f) => f.pids)].filter((p): p is number => p !== undefined);
    const dir = shellQuote(this.dir);
    const script = [
      ...pids.map((pid) => `kill -9 ${pid} 2>/dev/null`),
      this.containerd === null ? '' : this.containerd.watchdogScript(),
      this.cgroups.watchdogScript(),
      `for m in $(awk '{print $5}' /proc/self/mountinfo | grep -E "^"${dir}"(/|$)" | sort -r); do umount "$m" 2>/dev/null || umount -l "$m"; done`,
      `awk '{print $5}' /proc/self/mountinfo | grep -qE "^"${dir}"(/|$)" || rm -rf ${dir}`,
    ]
      .filter((line) => line !== '')
      .join('\n');
    if (this.watchdog === null) this.watchdog = startWatchdog(script);
    else this.watchdog.update(script);
  }
}
