// A real node in the cgroup v2 guest: containerd and a real kubelet of the pinned version in PID and
// mount namespaces of their own, either as systemd services (the systemd cgroup driver, as kubeadm
// sets it up: systemd is PID 1 of those namespaces over the guest's root, and containerd and the
// kubelet are transient units it starts, so their slices and scopes are systemd's) or as plain
// processes there (the cgroupfs driver). Ending the namespaces' first process ends the node whole,
// so one boot runs one driver's node after the other's. The kubelet registers with the host's real
// kube-apiserver, which the guest reaches through its one forwarded port
// (scripts/cgroup-v2-guest.sh --forward-port), carried here from 127.0.0.1:<port> so that the API
// server's certificate (for 127.0.0.1) holds. Its root directory is a small tmpfs (disk pressure),
// `kubepods` gets a memory limit a leak reaches in seconds, and the kernel's record of OOM kills
// under it is kubepods' hierarchical memory.events. With a pod network (GuestKubeletOptions.podNetwork)
// the node also runs pods as a cluster's DaemonSets are run (the chart's agent pod): a CNI bridge,
// the Node's address, the `kubernetes` Service's address, and mounts a container can follow.

import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import type { Summary } from '../../../../src/api/summary.js';
import { ApiClient } from '../../../e2e/harness/api-client.js';
import { findRealNodeBinaries, type RealNodeBinaries } from '../../../e2e/harness/binaries.js';
import { KUBERNETES_SERVICE_IP } from '../../../e2e/harness/credentials.js';
import { kubeconfigYaml } from '../../../e2e/harness/kubeconfig.js';
import { PAUSE_IMAGE } from '../../../e2e/harness/real-node.js';
import { waitFor } from '../../../e2e/harness/wait.js';

export type CgroupDriver = 'systemd' | 'cgroupfs';

/**
 * The drivers a run boots a node under, in order: KEA_CGROUP_V2_DRIVERS (`systemd`, `cgroupfs`, or
 * both, comma-separated), both by default. The host and the guest read the same variable, so the
 * cases the host declares are those the guest runs.
 */
export function cgroupDrivers(value = process.env.KEA_CGROUP_V2_DRIVERS): CgroupDriver[] {
  return (value ?? 'systemd,cgroupfs').split(',').map((driver) => {
    if (driver !== 'systemd' && driver !== 'cgroupfs') throw new Error(`KEA_CGROUP_V2_DRIVERS: unknown cgroup driver "${driver}" (systemd, cgroupfs)`);
    return driver;
  });
}

/** What the host test hands the guest (a JSON file in the shared directory). */
export interface GuestCluster {
  /** The API server's port on the host's loopback, forwarded into the guest. */
  readonly port: number;
  readonly caPem: string;
  readonly adminToken: string;
  readonly nodeName: string;
  /** The kubelet's token (system:node:<nodeName>). */
  readonly nodeToken: string;
  /** The agent's ServiceAccount token (deploy/daemonset.yaml's identity). */
  readonly agentToken: string;
  /** The node images tarball (scripts/build-node-images.sh) on the host's shared root. */
  readonly imagesTar: string;
  readonly driver: CgroupDriver;
}

export interface GuestKubeletOptions {
  readonly cluster: GuestCluster;
  readonly kubepodsLimitBytes: bigint;
  readonly rootDirBytes: bigint;
  readonly evictionHard: Readonly<Record<string, string>>;
  readonly podPidsLimit: number;
  /**
   * What pods that are not the kubelet's own scenario pods need (a DaemonSet's pod, as the chart
   * renders it): an address (its probes, status.hostIP), the `kubernetes` Service (its in-cluster
   * configuration) and host mounts it may follow (mountPropagation: HostToContainer). Without it,
   * pods have only their loopback, as the scenarios need no more.
   */
  readonly podNetwork?: { readonly cniBinDir: string };
}

const execFileAsync = promisify(execFile);
const CGROUP_ROOT = '/sys/fs/cgroup';

/** The host's address for the forwarded ports, as the guest sees it. */
const HOST_ADDRESS = '10.0.2.100';
// Not under /tmp: systemd's boot (systemd-tmpfiles, `D /tmp`) empties the guest's /tmp. /mnt is a
// directory of the host's root (Debian's base-files make it), covered here by a tmpfs of the
// guest's own.
const WORK_MOUNT = '/mnt';
const WORK = `${WORK_MOUNT}/kea-node`;
// The kubelet writes /var/lib/kubelet/device-plugins whatever its --root-dir, and the host's root
// is read-only in the guest (a fresh machine has no /var/lib/kubelet at all): /var/lib is a tmpfs of
// the guest's own (nothing of the host's there is needed), the kubelet's root a smaller one in it.
const VAR_LIB = '/var/lib';
const KUBELET_ROOT = `${VAR_LIB}/kubelet`;
// The node's mounts out here, each covering a directory of the host's root.
const NODE_MOUNTS = [VAR_LIB, '/var/log', WORK_MOUNT];
const POD_LOGS = '/var/log/pods';
const SYSTEMD_NAME = 'kea-node';
const READ_ONLY_PORT = 10255;
/** containerd's root, the node's image filesystem (observe.imageFsPath). */
export const GUEST_IMAGE_FS_DIR = `${WORK}/containerd/root`;
// The pod network: a CNI bridge in the guest's network namespace, the pods' addresses from it.
const POD_BRIDGE = 'cni0';
const POD_SUBNET = '10.244.0.0/24';
// The guest's address on the forwarded ports' network (scripts/cgroup-v2-guest.sh, kea_net): the
// Node's address, which the kubelet cannot find on its own with no default route.
const GUEST_ADDRESS = '10.0.2.15';
// What the kubelet would otherwise set itself (and a kubeadm node has set): the guest is throwaway.
const KUBELET_SYSCTLS: Readonly<Record<string, string>> = { 'vm/overcommit_memory': '1', 'vm/panic_on_oom': '0', 'kernel/panic': '10', 'kernel/panic_on_oops': '1' };

function memTotalBytes(): bigint {
  const kib = /^MemTotal:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1];
  assert.ok(kib !== undefined, 'no MemTotal in /proc/meminfo');
  return BigInt(kib) * 1024n;
}

function toml(value: string): string {
  return JSON.stringify(value);
}

function containerdConfig(binaries: RealNodeBinaries, driver: CgroupDriver, cniBinDirs: readonly string[]): string {
  return `version = 3
root = ${toml(`${WORK}/containerd/root`)}
state = ${toml(`${WORK}/containerd/state`)}
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.nri.v1.nri"]
[grpc]
  address = ${toml(`${WORK}/containerd.sock`)}
[ttrpc]
  address = ${toml(`${WORK}/containerd.sock.ttrpc`)}
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = ${toml(PAUSE_IMAGE)}
[plugins."io.containerd.cri.v1.runtime"]
  cdi_spec_dirs = []
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [${cniBinDirs.map(toml).join(', ')}]
    conf_dir = ${toml(`${WORK}/cni/net.d`)}
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = ${toml(binaries.containerdShim)}
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = ${toml(binaries.runc)}
        SystemdCgroup = ${String(driver === 'systemd')}
`;
}

/** Pod cgroup names: `pod<uid>` (cgroupfs) or `kubepods[-<qos>]-pod<uid with _>.slice` (systemd). */
function podUidOf(entry: string): string | null {
  const cgroupfs = /^pod([0-9a-f-]{32,36})$/.exec(entry);
  if (cgroupfs !== null) return cgroupfs[1] ?? null;
  const systemd = /^kubepods(?:-[a-z]+)?-pod([0-9a-f_]{32,36})\.slice$/.exec(entry);
  return systemd === null ? null : (systemd[1] ?? '').replaceAll('_', '-');
}

export class GuestKubeletNode {
  readonly cluster: GuestCluster;
  readonly admin: ApiClient;
  readonly url: string;
  readonly staticPodDir = `${WORK}/manifests`;
  readonly kubeletRootDir = KUBELET_ROOT;
  readonly podLogsDir = POD_LOGS;
  readonly imageFsDir = GUEST_IMAGE_FS_DIR;
  private readonly forwarders: Server[] = [];
  private readonly connections = new Set<Socket>();
  /** `unshare`, whose child is the node's first process (systemd, or the holder under cgroupfs). */
  private namespace: ChildProcess | null = null;
  /** The node's first process, PID 1 of its PID namespace. */
  private initPid = 0;
  private readonly services = new Map<string, ChildProcess>();
  private readonly binaries: RealNodeBinaries;
  // What was there before the node: what it added is what stop() removes.
  private readonly cgroupsBefore = new Set(topCgroups());
  private readonly runEntriesBefore = new Set(readdirSync('/run'));
  private stopped: Promise<void> | null = null;

  private constructor(private readonly options: GuestKubeletOptions) {
    this.cluster = options.cluster;
    this.url = `https://127.0.0.1:${options.cluster.port}`;
    this.admin = new ApiClient(this.url, options.cluster.caPem, options.cluster.adminToken);
    const found = findRealNodeBinaries();
    if (!found.ok) throw new Error(`the real node's binaries are not built: ${found.reason}`);
    this.binaries = found.binaries;
  }

  get driver(): CgroupDriver {
    return this.cluster.driver;
  }

  /** kubepods in the unified hierarchy: `kubepods.slice` (systemd) or `kubepods` (cgroupfs). */
  get kubepodsPath(): string {
    return `/sys/fs/cgroup/${this.driver === 'systemd' ? 'kubepods.slice' : 'kubepods'}`;
  }

  /** A node not started yet: start() starts it, stop() undoes whatever start() got to. */
  static create(options: GuestKubeletOptions): GuestKubeletNode {
    return new GuestKubeletNode(options);
  }

  /** Starts everything until the Node is Ready; resolves with how long each step took (guest ms). */
  async start(): Promise<Readonly<Record<string, number>>> {
    const o = this.options;
    const steps: Record<string, number> = {};
    const timed = async <T>(step: string, run: () => Promise<T>): Promise<T> => {
      const startedMs = performance.now();
      const value = await run();
      steps[step] = Math.round(performance.now() - startedMs);
      return value;
    };
    // containerd's overlayfs snapshotter: the module is not in the guest's initramfs, but the
    // kernel's own modules are on the shared root.
    execFileSync('modprobe', ['overlay']);
    const network = o.podNetwork;
    if (network !== undefined) {
      // The bridge and the pods' veth pairs are modules too.
      execFileSync('modprobe', ['-a', 'bridge', 'veth']);
      // What kube-proxy would make of the `kubernetes` Service, in the IPVS way: its ClusterIP is an
      // address of the node's, where the API server's relay listens on the Service's port.
      execFileSync('ip', ['addr', 'add', `${KUBERNETES_SERVICE_IP}/32`, 'dev', 'lo']);
      // A container's mount may follow the node's (HostToContainer) only from a shared or slave
      // mount: the guest's root is made shared, and the node's namespace a slave of it.
      execFileSync('mount', ['--make-rshared', '/']);
    }
    await this.forwardApiServer(network === undefined ? [] : [{ host: KUBERNETES_SERVICE_IP, port: 443 }]);
    // Mounts first: the node's mount namespace is a copy of this one, taken when it starts, and the
    // agent and the scenarios, out here, read the same file systems.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=768m,mode=0755', 'kea-node', WORK_MOUNT]);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0755', 'kea-var-lib', VAR_LIB]);
    mkdirSync(KUBELET_ROOT);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${o.rootDirBytes},mode=0755`, 'kea-kubelet-root', KUBELET_ROOT]);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m,mode=0755', 'kea-var-log', '/var/log']);
    for (const dir of ['containerd/root', 'containerd/state', 'cni/bin', 'cni/net.d', 'manifests', 'volume-plugins', 'kubelet-pki', POD_LOGS]) mkdirSync(dir.startsWith('/') ? dir : join(WORK, dir), { recursive: true });
    for (const [entry, value] of Object.entries(KUBELET_SYSCTLS)) writeFileSync(`/proc/sys/${entry}`, value);
    if (network === undefined) writeFileSync(`${WORK}/cni/net.d/10-loopback.conflist`, JSON.stringify({ cniVersion: '1.0.0', name: 'kea-loopback', plugins: [{ type: 'loopback' }] }));
    else writeFileSync(`${WORK}/cni/net.d/10-pods.conflist`, JSON.stringify(podBridgeConflist()));
    writeFileSync(`${WORK}/containerd.toml`, containerdConfig(this.binaries, this.driver, [`${WORK}/cni/bin`, ...(network === undefined ? [] : [network.cniBinDir])]));
    writeFileSync(`${WORK}/kubelet.kubeconfig`, kubeconfigYaml({ server: this.url, caPem: this.cluster.caPem, token: this.cluster.nodeToken, user: `system:node:${this.cluster.nodeName}` }), { mode: 0o600 });
    writeFileSync(`${WORK}/kubelet.yaml`, stringify(this.kubeletConfig()));
    await timed(this.driver === 'systemd' ? 'systemdMs' : 'namespaceMs', () => this.startNamespace());
    const path = `${process.env.PATH ?? ''}:/usr/sbin:/sbin`;
    await timed('containerdMs', async () => {
      this.startService('containerd', [this.binaries.containerd, '--config', `${WORK}/containerd.toml`], { PATH: path });
      await waitFor(() => existsSync(`${WORK}/containerd.sock`), { what: 'containerd to listen', timeoutMs: 120_000, intervalMs: 100, abortIf: () => this.exited('containerd') });
    });
    // The images are imported, never pulled (no registry is reachable), while the kubelet starts:
    // no pod is created before both are done.
    const imported = timed('imageImportMs', () =>
      execFileAsync(this.binaries.ctr, ['--address', `${WORK}/containerd.sock`, '-n', 'k8s.io', 'images', 'import', '--all-platforms', this.cluster.imagesTar], { timeout: 300_000 }),
    );
    const ready = timed('kubeletReadyMs', async () => {
      this.startService('kubelet', [this.binaries.kubelet, `--config=${WORK}/kubelet.yaml`, `--kubeconfig=${WORK}/kubelet.kubeconfig`, `--root-dir=${KUBELET_ROOT}`, `--cert-dir=${WORK}/kubelet-pki`, `--hostname-override=${this.cluster.nodeName}`, ...(network === undefined ? [] : [`--node-ip=${GUEST_ADDRESS}`]), '--v=2'], { PATH: path });
      await waitFor(
        async () => {
          const answer = await this.admin.request<{ status?: { conditions?: { type: string; status: string }[] } }>('GET', `/api/v1/nodes/${this.cluster.nodeName}`);
          return answer.status === 200 && answer.body.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
        },
        { what: `the kubelet's Node ${this.cluster.nodeName} Ready`, timeoutMs: 240_000, intervalMs: 250, abortIf: () => this.exited('kubelet') },
      );
    });
    await Promise.all([imported, ready]);
    return steps;
  }

  private kubeletConfig(): Record<string, unknown> {
    const o = this.options;
    const systemReservedBytes = memTotalBytes() - o.kubepodsLimitBytes;
    assert.ok(systemReservedBytes > 0n, 'the guest has less memory than the kubepods limit');
    return {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: '127.0.0.1',
      port: 10250,
      readOnlyPort: READ_ONLY_PORT,
      healthzBindAddress: '127.0.0.1',
      authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
      authorization: { mode: 'AlwaysAllow' },
      containerRuntimeEndpoint: `unix://${WORK}/containerd.sock`,
      cgroupDriver: this.driver,
      cgroupsPerQOS: true,
      failSwapOn: false,
      enforceNodeAllocatable: ['pods'],
      systemReserved: { memory: `${systemReservedBytes / 1024n}Ki` },
      evictionHard: o.evictionHard,
      evictionPressureTransitionPeriod: '5s',
      podPidsLimit: o.podPidsLimit,
      maxPods: 30,
      staticPodPath: this.staticPodDir,
      fileCheckFrequency: '1s',
      podLogsDir: POD_LOGS,
      volumePluginDir: `${WORK}/volume-plugins`,
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      serializeImagePulls: false,
      containerLogMaxSize: '1Mi',
      containerLogMaxFiles: 2,
      shutdownGracePeriod: '0s',
      protectKernelDefaults: false,
    };
  }

  // The guest's 127.0.0.1:<port> (and any other address given) carried to the host's, through the
  // forwarded address.
  private async forwardApiServer(more: readonly { readonly host: string; readonly port: number }[]): Promise<void> {
    const { port } = this.cluster;
    for (const listen of [{ host: '127.0.0.1', port }, ...more]) this.forwarders.push(await this.relay(listen.host, listen.port));
  }

  private async relay(host: string, listenPort: number): Promise<Server> {
    const { port } = this.cluster;
    const server = createServer((client) => {
      const upstream = createConnection(port, HOST_ADDRESS);
      this.connections.add(client).add(upstream);
      client.once('close', () => this.connections.delete(client));
      upstream.once('close', () => this.connections.delete(upstream));
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listenPort, host, () => resolve());
    });
    return server;
  }

  // The node's PID and mount namespaces: systemd as their PID 1 over the guest's root
  // (docs/real-kubelet-cgroup-v2.md), or, under cgroupfs, a shell that only reaps what is left to it.
  // Ending that first process ends every process of the node (its pods' too), and its mounts go
  // with the namespace, so the next node in the same boot starts from nothing of this one.
  private async startNamespace(): Promise<void> {
    const log = openSync(`${WORK}/init.log`, 'w');
    const init = this.driver === 'systemd' ? ['env', `container=${SYSTEMD_NAME}`, '/lib/systemd/systemd', '--system', '--log-target=kmsg', '--unit=basic.target'] : ['bash', '-c', 'while :; do sleep 3600 & wait $!; done'];
    // A slave of the guest's mounts when they are shared (podNetwork): the node's own mounts still
    // go with its namespace, and a container can follow them.
    const propagation = this.options.podNetwork === undefined ? [] : ['--propagation', 'slave'];
    const child = spawn('unshare', ['--pid', '--fork', '--kill-child', '--mount-proc', ...propagation, ...init], { stdio: ['ignore', log, log] });
    // The child has its own copy; this one would keep /mnt busy after the node ends.
    closeSync(log);
    this.namespace = child;
    // The child of unshare is PID 1 in the new namespace.
    this.initPid = await waitFor(() => {
      const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim();
      return children === '' ? undefined : Number(children.split(' ')[0]);
    }, { what: "the node's namespace to start", timeoutMs: 30_000, intervalMs: 50, abortIf: () => (child.exitCode === null ? null : `unshare exited ${child.exitCode}`) });
    if (this.driver !== 'systemd') return;
    await waitFor(() => {
      const state = this.systemctl(['is-system-running']).stdout.trim();
      return ['running', 'degraded'].includes(state) ? state : undefined;
    }, { what: 'systemd to finish starting (running or degraded)', timeoutMs: 180_000, intervalMs: 250 });
    assert.ok(existsSync('/run/dbus/system_bus_socket'), "systemd's D-Bus socket is missing");
  }

  /** Runs a command inside the node's namespaces and root. */
  private inNamespace(argv: readonly string[]): string[] {
    return ['nsenter', '-t', String(this.initPid), '-m', '-p', '-r', '-w', '--', ...argv];
  }

  /** Runs a systemd tool inside systemd's namespaces and root. */
  systemctl(args: readonly string[], tool = 'systemctl'): { status: number | null; stdout: string; stderr: string } {
    const [command, ...rest] = this.inNamespace(['env', 'SYSTEMD_IGNORE_CHROOT=1', tool, ...args]);
    const done = spawnSync(command as string, rest, { encoding: 'utf8', timeout: 60_000 });
    return { status: done.status, stdout: done.stdout ?? '', stderr: done.stderr ?? '' };
  }

  // A service in the node's namespaces: a transient systemd unit (Delegate, as their packaged units
  // have), or under cgroupfs a process there (nsenter, its parent out here, exits with it).
  private startService(name: string, argv: readonly string[], env: Readonly<Record<string, string>>): void {
    const logFile = `${WORK}/${name}.log`;
    if (this.driver === 'systemd') {
      const done = this.systemctl(
        [`--unit=${name}`, '--property=Delegate=yes', '--property=KillMode=process', `--property=StandardOutput=append:${logFile}`, `--property=StandardError=append:${logFile}`, ...Object.entries(env).map(([k, v]) => `--setenv=${k}=${v}`), '--', ...argv],
        'systemd-run',
      );
      assert.equal(done.status, 0, `systemd-run ${name}: ${done.stderr}`);
      return;
    }
    const log = openSync(logFile, 'w');
    const [command, ...args] = this.inNamespace(argv);
    this.services.set(name, spawn(command as string, args, { stdio: ['ignore', log, log], env: { ...process.env, ...env } }));
    closeSync(log);
  }

  // Why a service is gone, or null while it runs (polled while the node starts: under systemd its
  // unit's cgroup is read first, as asking systemctl each time costs the emulated guest a process).
  private exited(name: string): string | null {
    if (this.driver === 'systemd') {
      if (populated(join(CGROUP_ROOT, 'system.slice', `${name}.service`))) return null;
      const state = this.systemctl(['is-active', name]).stdout.trim();
      if (state === 'active' || state === 'activating') return null;
      const status = this.systemctl(['status', '--no-pager', '--full', name]).stdout;
      return `${name} is ${state}: ${status.slice(-1500)}\n${this.log(name).slice(-2000)}`;
    }
    const child = this.services.get(name);
    return child === undefined || child.exitCode === null ? null : `${name} exited ${child.exitCode}: ${this.log(name).slice(-2000)}`;
  }

  /** A service's log. */
  log(name: string): string {
    try {
      return readFileSync(`${WORK}/${name}.log`, 'utf8');
    } catch {
      return '';
    }
  }

  /** Runs `ctr` against the node's containerd (as harness/agent-image.ts's importAgentImage wants it). */
  async ctr(args: readonly string[]): Promise<string> {
    return (await execFileAsync(this.binaries.ctr, ['--address', `${WORK}/containerd.sock`, ...args], { timeout: 600_000, maxBuffer: 16 * 1024 * 1024 })).stdout;
  }

  /** The kubelet's own Summary from its read-only port. */
  async summary(): Promise<Summary> {
    const response = await fetch(`http://127.0.0.1:${READ_ONLY_PORT}/stats/summary`);
    assert.equal(response.status, 200, "the kubelet's /stats/summary");
    return (await response.json()) as Summary;
  }

  /** The kernel's OOM kills in kubepods and below (cgroup v2's memory.events is hierarchical). */
  kubepodsOomKills(): number {
    return Number(/^oom_kill (\d+)$/m.exec(readFileSync(join(this.kubepodsPath, 'memory.events'), 'utf8'))?.[1] ?? NaN);
  }

  /** kubepods' memory.current (memory.peak cannot be reset on this kernel: it counts from the boot). */
  kubepodsCurrentBytes(): number {
    return Number(readFileSync(join(this.kubepodsPath, 'memory.current'), 'utf8'));
  }

  /** The pod cgroups under kubepods, any QoS class, by pod UID, with their paths. */
  podCgroups(): Map<string, string> {
    const found = new Map<string, string>();
    const visit = (dir: string, depth: number): void => {
      if (!existsSync(dir)) return;
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const uid = podUidOf(entry.name);
        if (uid !== null) found.set(uid, join(dir, entry.name));
        else if (depth === 0) visit(join(dir, entry.name), 1);
      }
    };
    visit(this.kubepodsPath, 0);
    return found;
  }

  /**
   * Ends the node: its namespaces' first process (every process of the node with it, pods and
   * shims included, and the mounts it made), then its cgroups, the mounts made for it out here and
   * what it left in /run. Idempotent; leftovers() says what, if anything, is still there.
   */
  stop(): Promise<void> {
    this.stopped ??= this.stopAll();
    return this.stopped;
  }

  private async stopAll(): Promise<void> {
    // Connections still open (keep-alive clients) would hold close() forever.
    const closed = Promise.all(this.forwarders.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    for (const socket of this.connections) socket.destroy();
    await closed;
    const alive = (child: ChildProcess | null): boolean => child !== null && child.exitCode === null && child.signalCode === null;
    // PID 1 of the namespace (unshare waits for it): the kernel then kills every other process in it.
    if (alive(this.namespace)) {
      if (this.initPid !== 0) process.kill(this.initPid, 'SIGKILL');
      else this.namespace?.kill('SIGKILL');
    }
    // What is still there after this is for leftovers() to report.
    await waitFor(() => ![this.namespace, ...this.services.values()].some(alive), { what: "the node's processes to end", timeoutMs: 30_000, intervalMs: 50 }).catch(() => undefined);
    for (const top of topCgroups().filter((name) => !this.cgroupsBefore.has(name))) {
      await waitFor(() => !populated(join(CGROUP_ROOT, top)), { what: `the cgroup ${top} to empty`, timeoutMs: 30_000, intervalMs: 100 }).catch(() => undefined);
      removeCgroupTree(join(CGROUP_ROOT, top));
    }
    for (const point of mountsUnder(NODE_MOUNTS)) spawnSync('umount', [point], { stdio: 'ignore' });
    if (this.options.podNetwork !== undefined) {
      spawnSync('ip', ['link', 'del', POD_BRIDGE], { stdio: 'ignore' });
      spawnSync('ip', ['addr', 'del', `${KUBERNETES_SERVICE_IP}/32`, 'dev', 'lo'], { stdio: 'ignore' });
    }
    for (const entry of readdirSync('/run')) if (!this.runEntriesBefore.has(entry)) rmSync(join('/run', entry), { recursive: true, force: true });
  }

  /** What the node left behind after stop(): its processes, cgroups and mounts (none, when all went). */
  leftovers(): string[] {
    const binaries = new Set([this.binaries.kubelet, this.binaries.containerd, this.binaries.containerdShim, this.binaries.runc]);
    const processes: string[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const exe = readlinkSync(`/proc/${entry}/exe`);
        if (binaries.has(exe) || Number(entry) === this.initPid) processes.push(`process ${entry} (${exe})`);
      } catch {
        // Exited, or a kernel thread.
      }
    }
    const cgroups = topCgroups().filter((name) => !this.cgroupsBefore.has(name)).map((name) => `cgroup /${name}`);
    const mounts = mountsUnder(NODE_MOUNTS).map((point) => `mount ${point}`);
    const run = readdirSync('/run').filter((entry) => !this.runEntriesBefore.has(entry)).map((entry) => `/run/${entry}`);
    const network = this.options.podNetwork !== undefined && existsSync(`/sys/class/net/${POD_BRIDGE}`) ? [`interface ${POD_BRIDGE}`] : [];
    return [...processes, ...cgroups, ...mounts, ...run, ...network];
  }
}

/** Whether any process is in the cgroup or below it (its cgroup.events); false when there is no such cgroup. */
export function populated(cgroup: string): boolean {
  try {
    return readFileSync(join(cgroup, 'cgroup.events'), 'utf8').includes('populated 1');
  } catch {
    return false;
  }
}

/** The cgroups directly under the unified hierarchy's root. */
function topCgroups(): string[] {
  return readdirSync(CGROUP_ROOT, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

// A cgroup and those below it, deepest first (a cgroup goes only once it has no children).
function removeCgroupTree(path: string): void {
  for (const entry of readdirSync(path, { withFileTypes: true })) if (entry.isDirectory()) removeCgroupTree(join(path, entry.name));
  try {
    rmdirSync(path);
  } catch {
    // Still populated: leftovers() reports it.
  }
}

// The mount points at or below these directories in this mount namespace, deepest first.
function mountsUnder(dirs: readonly string[]): string[] {
  const points: string[] = [];
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    // Field 5 is the mount point, with spaces and the like as octal escapes.
    const point = line.split(' ')[4]?.replace(/\\(\d{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
    if (point !== undefined && dirs.some((dir) => point === dir || point.startsWith(`${dir}/`))) points.push(point);
  }
  return points.sort((a, b) => b.length - a.length);
}

/** The pod network's CNI configuration: a bridge that is the pods' gateway, host-local addresses, no NAT (nothing leaves the guest). */
function podBridgeConflist(): Record<string, unknown> {
  return {
    cniVersion: '1.0.0',
    name: 'kea-pods',
    plugins: [{ type: 'bridge', bridge: POD_BRIDGE, isGateway: true, ipMasq: false, ipam: { type: 'host-local', ranges: [[{ subnet: POD_SUBNET }]], routes: [{ dst: '0.0.0.0/0' }] } }],
  };
}
