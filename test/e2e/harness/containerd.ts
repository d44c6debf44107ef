// containerd for the real kubelet under test, in a mount namespace of its own that the kubelet
// joins. Everything either writes outside the harness's directory lands in that namespace: a tmpfs
// over /run (shim sockets, runc state: containerd puts shim sockets under /run/containerd/s
// whatever its state directory), a tmpfs over /var/log (the kubelet's /var/log/containers links),
// the kubelet's own mounts, and files bound over the six /proc/sys entries the kubelet would
// otherwise rewrite for the whole machine (vm.overcommit_memory, kernel.panic_on_oops, ...). When
// the last process of the namespace ends, all of it goes. containerd's root, state and socket are
// under the harness's directory; its CRI clamps negative OOM scores (root here lacks
// CAP_SYS_RESOURCE, and runc fails to set them); its CNI configuration is a loopback-only list
// (the tests' pods use the host network, but containerd reports no network without one).

import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RealNodeBinaries } from './binaries.js';
import { podNetworkConflist, podNetworkSetupScript, type PodNetwork } from './pod-network.js';
import { shellQuote } from './exit-cleanup.js';
import { ManagedProcess } from './managed-process.js';
import { waitFor } from './wait.js';

const execFileAsync = promisify(execFile);

/** The namespace containerd's CRI keeps Kubernetes images and containers in. */
export const K8S_NAMESPACE = 'k8s.io';

// What the kubelet's setupKernelTunables wants (it rewrites any other value): the values it reads
// in the runtime's namespace, so it changes nothing on the machine.
const KUBELET_SYSCTLS: Readonly<Record<string, string>> = {
  'vm/overcommit_memory': '1',
  'vm/panic_on_oom': '0',
  'kernel/panic': '10',
  'kernel/panic_on_oops': '1',
  'kernel/keys/root_maxkeys': '1000000',
  'kernel/keys/root_maxbytes': '25000000',
};

export interface ContainerdOptions {
  readonly binaries: RealNodeBinaries;
  /** A directory of its own (root, state, socket, logs). */
  readonly dir: string;
  /** The sandbox image (already in the archive imported at start). */
  readonly pauseImage: string;
  /** A docker-archive or OCI tarball imported into the k8s.io namespace before the kubelet starts. */
  readonly imagesTar: string;
  readonly env: NodeJS.ProcessEnv;
  readonly startTimeoutMs?: number;
  /**
   * A pod network: containerd (and whatever enters its namespaces) in a network namespace of its
   * own with a CNI bridge (pod-network.ts). Without one, the loopback-only list (host-network pods).
   */
  readonly podNetwork?: PodNetwork | undefined;
  /**
   * The node's directories where a node has them, inside the namespace: a tmpfs over /var/lib
   * (nothing of the machine's there is needed; the CNI plugins keep their leases in it), the
   * kubelet's root directory bound at /var/lib/kubelet, containerd's root at /var/lib/containerd
   * and the pod logs at /var/log/pods, and every mount shared, as systemd makes them, so that a
   * container's HostToContainer mount (the agent's) sees the volumes the kubelet mounts later.
   */
  readonly standardLayout?: { readonly kubeletRootDir: string; readonly podLogsDir: string } | undefined;
}

function toml(value: string): string {
  return JSON.stringify(value);
}

function configToml(o: ContainerdOptions, paths: { root: string; state: string; socket: string; cniConf: string; cniBin: string }): string {
  return `# containerd for the kube-eviction-agent end-to-end tests' real kubelet
version = 3
root = ${toml(paths.root)}
state = ${toml(paths.state)}
# Plugins that would write outside the harness's directory, and are not needed.
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.nri.v1.nri"]

[grpc]
  address = ${toml(paths.socket)}

[ttrpc]
  address = ${toml(`${paths.socket}.ttrpc`)}

[debug]
  level = "info"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = ${toml(o.pauseImage)}

[plugins."io.containerd.cri.v1.runtime"]
  # Root lacks CAP_SYS_RESOURCE here: negative oom_score_adj values fail in runc unless clamped.
  restrict_oom_score_adj = true
  cdi_spec_dirs = []
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [${toml(paths.cniBin)}]
    conf_dir = ${toml(paths.cniConf)}
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = ${toml(o.binaries.containerdShim)}
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = ${toml(o.binaries.runc)}
        SystemdCgroup = false
`;
}

function standardLayoutScript(containerdRoot: string, layout: { readonly kubeletRootDir: string; readonly podLogsDir: string }): string[] {
  return [
    // The namespace's copies are private to it (unshare --propagation private): sharing them makes
    // peer groups of the namespace's own, never joined to the machine's.
    'mount --make-rshared /',
    'mount -t tmpfs -o size=16m,mode=0755 kea-e2e-var-lib /var/lib',
    'mkdir -p /var/lib/kubelet /var/lib/containerd /var/lib/cni /var/log/pods',
    `mount --bind ${shellQuote(layout.kubeletRootDir)} /var/lib/kubelet`,
    `mount --bind ${shellQuote(containerdRoot)} /var/lib/containerd`,
    `mount --bind ${shellQuote(layout.podLogsDir)} /var/log/pods`,
  ];
}

export class Containerd {
  private constructor(
    readonly process: ManagedProcess,
    readonly socket: string,
    /** containerd's root: the image filesystem (and the container writable layers). */
    readonly rootDir: string,
    /** The mount namespace (`mnt:[<inode>]`) it and the kubelet run in. */
    readonly mountNamespace: string,
    /** The ctr client (for commands the harness runs itself, e.g. `tasks exec`). */
    readonly ctrBinary: string,
    /** Whether it runs in a network namespace of its own (a pod network). */
    readonly ownNetwork: boolean,
  ) {}

  /** The command prefix that runs a program in the runtime's mount namespace (and network namespace, with a pod network). */
  enterCommand(): string[] {
    return ['nsenter', `--mount=/proc/${this.process.pid}/ns/mnt`, ...(this.ownNetwork ? [`--net=/proc/${this.process.pid}/ns/net`] : []), '--'];
  }

  static async start(o: ContainerdOptions): Promise<Containerd> {
    const root = join(o.dir, 'root');
    const state = join(o.dir, 'state');
    const cniConf = join(o.dir, 'cni', 'net.d');
    const cniBin = o.podNetwork?.cniBinDir ?? join(o.dir, 'cni', 'bin');
    const sysctls = join(o.dir, 'sysctl');
    for (const dir of [root, state, cniConf, cniBin, sysctls]) mkdirSync(dir, { recursive: true });
    const socket = join(o.dir, 'containerd.sock');
    writeFileSync(join(o.dir, 'config.toml'), configToml(o, { root, state, socket, cniConf, cniBin }));
    if (o.podNetwork === undefined) writeFileSync(join(cniConf, '10-loopback.conflist'), `${JSON.stringify({ cniVersion: '1.0.0', name: 'kea-e2e-loopback', plugins: [{ type: 'loopback' }] }, null, 2)}\n`);
    else writeFileSync(join(cniConf, '10-pods.conflist'), podNetworkConflist());

    const binds: string[] = [];
    for (const [entry, value] of Object.entries(KUBELET_SYSCTLS)) {
      const file = join(sysctls, entry.replaceAll('/', '.'));
      writeFileSync(file, `${value}\n`);
      binds.push(`mount --bind ${shellQuote(file)} ${shellQuote(`/proc/sys/${entry}`)}`);
    }
    const script = [
      'set -e',
      'mount -t tmpfs -o size=64m,mode=0755 kea-e2e-run /run',
      'mount -t tmpfs -o size=16m,mode=0755 kea-e2e-log /var/log',
      ...binds,
      ...(o.standardLayout === undefined ? [] : standardLayoutScript(root, o.standardLayout)),
      ...(o.podNetwork === undefined ? [] : podNetworkSetupScript()),
      `exec ${shellQuote(o.binaries.containerd)} --config ${shellQuote(join(o.dir, 'config.toml'))}`,
    ].join('\n');
    // --propagation private: nothing mounted in the namespace reaches the machine.
    // With a pod network, --net too: its addresses, routes and NAT rules go with the namespace.
    const unshare = ['--mount', ...(o.podNetwork === undefined ? [] : ['--net']), '--propagation', 'private'];
    const proc = ManagedProcess.start('containerd', 'unshare', [...unshare, '--', '/bin/sh', '-c', script], { env: o.env, logFile: join(o.dir, 'containerd.log'), cwd: o.dir });
    const ctr = o.binaries.ctr;
    const run = (args: readonly string[], timeoutMs = 60_000): Promise<{ stdout: string }> => execFileAsync(ctr, ['--address', socket, ...args], { timeout: timeoutMs, env: o.env });
    await waitFor(async () => existsSync(socket) && (await run(['version'], 5000)).stdout.includes('Server:'), {
      what: 'containerd to serve',
      timeoutMs: o.startTimeoutMs ?? 60_000,
      intervalMs: 200,
      abortIf: () => (proc.running ? null : `${proc.describeExit()}\n${proc.logTail()}`),
    });
    const namespace = readlinkSync(`/proc/${proc.pid}/ns/mnt`);
    if (namespace === readlinkSync('/proc/self/ns/mnt')) throw new Error('containerd is not in a mount namespace of its own');
    const containerd = new Containerd(proc, socket, root, namespace, ctr, o.podNetwork !== undefined);
    await run(['-n', K8S_NAMESPACE, 'images', 'import', o.imagesTar], 120_000);
    return containerd;
  }

  /** Runs ctr against this containerd; resolves with its stdout. */
  async ctr(args: readonly string[]): Promise<string> {
    return (await execFileAsync(this.ctrBinary, ['--address', this.socket, ...args], { timeout: 60_000 })).stdout;
  }

  /** The processes in its mount namespace (containerd, the kubelet, the runc shims), by scanning /proc. */
  namespaceProcesses(): number[] {
    return processesInMountNamespace(this.mountNamespace);
  }

  /** Shell lines for a watchdog: kill every process of the namespace. */
  watchdogScript(): string {
    return `for p in /proc/[0-9]*; do [ "$(readlink "$p/ns/mnt" 2>/dev/null)" = ${shellQuote(this.mountNamespace)} ] && kill -9 "\${p#/proc/}" 2>/dev/null; done`;
  }

  logTail(lines = 30): string {
    return this.process.logTail(lines);
  }
}

/** The PIDs whose mount namespace is `namespace` (`mnt:[<inode>]`). */
export function processesInMountNamespace(namespace: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/ns/mnt`) === namespace) pids.push(Number(entry));
    } catch {
      // Exited, or a kernel thread.
    }
  }
  return pids;
}
