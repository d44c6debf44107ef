// A cluster on this machine, as operators have one: the test control plane, a real kube-controller-
// manager and kube-scheduler (so a DaemonSet gets its pod created and bound, a namespace its
// `default` ServiceAccount, every namespace the kube-root-ca.crt ConfigMap that projected service-
// account volumes read), and one real node (real-node.ts) with a pod network (pod-network.ts): a
// CNI bridge, and kube-proxy programming the `kubernetes` Service so that a pod's in-cluster
// configuration reaches the API server as it would anywhere. The controllers run beside the API
// server on the machine's loopback; kube-proxy runs in the node's namespaces. Everything stops with
// the cluster, on the test process's exit too, and a watchdog kills what is left if the test
// process is killed outright.

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { ClusterBinaries } from './binaries.js';
import { K8S_NAMESPACE } from './containerd.js';
import { cleanEnv } from './control-plane.js';
import { KUBERNETES_SERVICE_IP } from './credentials.js';
import { onProcessExit, shellQuote, startWatchdog, type Watchdog } from './exit-cleanup.js';
import { freePorts } from './free-port.js';
import { kubeconfigYaml } from './kubeconfig.js';
import { ManagedProcess } from './managed-process.js';
import { CLUSTER_CIDR, NODE_IP } from './pod-network.js';
import { RealNode, type RealNodeOptions } from './real-node.js';
import { waitFor } from './wait.js';

export interface ClusterOptions extends Omit<RealNodeOptions, 'podNetwork'> {
  readonly clusterBinaries: ClusterBinaries;
  /** OCI or docker archives imported into the node's containerd besides the node images (the agent's image). */
  readonly extraImages?: readonly string[];
}

// What a pod's in-cluster configuration connects to, from inside the node's network namespace:
// any HTTP status means the Service, kube-proxy's rules and the forwarder all work.
const SERVICE_PROBE_SOURCE = `
require('node:https').get({ host: process.argv[1], port: 443, path: '/readyz', rejectUnauthorized: false, timeout: 3000 }, (res) => {
  console.log(res.statusCode); process.exit(0);
}).on('error', (err) => { console.log(String(err)); process.exit(1); });
`;

export class Cluster {
  private readonly processes: ManagedProcess[] = [];
  private watchdog: Watchdog | null = null;
  private unregisterExit: (() => void) | null = null;
  private stopped = false;
  node: RealNode | null = null;

  private constructor(
    private readonly options: ClusterOptions,
    readonly dir: string,
  ) {}

  static async start(options: ClusterOptions): Promise<Cluster> {
    const cluster = new Cluster(options, mkdtempSync(join(tmpdir(), 'kea-e2e-cluster-')));
    try {
      await cluster.startAll();
      return cluster;
    } catch (err) {
      const diagnostics = cluster.diagnostics();
      await cluster.stop();
      throw new Error(`the cluster did not start: ${err instanceof Error ? err.message : String(err)}\n${diagnostics}`);
    }
  }

  /** The real node (started). */
  get realNode(): RealNode {
    if (this.node === null) throw new Error('the cluster has no node');
    return this.node;
  }

  private async startAll(): Promise<void> {
    const o = this.options;
    const plane = o.plane;
    const adminKubeconfig = join(this.dir, 'admin.kubeconfig');
    writeFileSync(adminKubeconfig, kubeconfigYaml({ server: plane.url, caPem: plane.caPem, token: plane.credentials.adminToken, user: 'admin' }), { mode: 0o600 });
    const [schedulerPort] = (await freePorts(1)) as [number];
    const env = cleanEnv();
    this.processes.push(
      ManagedProcess.start(
        'kube-controller-manager',
        o.clusterBinaries.controllerManager,
        [
          `--kubeconfig=${adminKubeconfig}`,
          '--leader-elect=false',
          '--secure-port=0',
          // Published in every namespace as kube-root-ca.crt: the CA of projected token volumes.
          `--root-ca-file=${plane.credentials.servingCertFile}`,
          `--service-account-private-key-file=${plane.credentials.saKeyFile}`,
          '--use-service-account-credentials=false',
          `--cluster-cidr=${CLUSTER_CIDR}`,
          '--allocate-node-cidrs=false',
          '--v=1',
        ],
        { env, logFile: join(this.dir, 'kube-controller-manager.log'), cwd: this.dir },
      ),
      ManagedProcess.start('kube-scheduler', o.clusterBinaries.scheduler, [`--kubeconfig=${adminKubeconfig}`, `--authentication-kubeconfig=${adminKubeconfig}`, `--authorization-kubeconfig=${adminKubeconfig}`, '--leader-elect=false', '--bind-address=127.0.0.1', `--secure-port=${schedulerPort}`, '--v=1'], {
        env,
        logFile: join(this.dir, 'kube-scheduler.log'),
        cwd: this.dir,
      }),
    );
    this.guard();
    const admin = plane.admin();
    await waitFor(async () => (await admin.request('GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200, {
      what: "the controller manager's default ServiceAccount",
      timeoutMs: 60_000,
      intervalMs: 250,
      abortIf: () => this.exited(),
    });

    // A ConfigMap change reaches a pod's volume at the kubelet's next sync of the pod: every 5 s
    // instead of every minute, so a test of a configuration reload does not wait on it. Container
    // logs rotate at 16 MiB, not 1: the tests read the agent's log back.
    this.node = await RealNode.start({ ...o, podNetwork: { cniBinDir: o.clusterBinaries.cniBinDir }, kubeletConfig: { syncFrequency: '5s', containerLogMaxSize: '16Mi', ...o.kubeletConfig } });
    const node = this.node;
    const containerd = node.containerd;
    if (containerd === null) throw new Error('the node has no containerd');
    for (const archive of o.extraImages ?? []) await containerd.ctr(['-n', K8S_NAMESPACE, 'images', 'import', archive]);

    // The `kubernetes` Service's endpoint, as the API server's endpoint reconciler would publish it
    // (the test control plane runs none: its address is loopback): the node's address, where the
    // forwarder listens on the API server's port.
    const apiPort = Number(new URL(plane.url).port);
    const slice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'kubernetes', namespace: 'default', labels: { 'kubernetes.io/service-name': 'kubernetes', 'endpointslice.kubernetes.io/managed-by': 'kube-eviction-agent-e2e' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [NODE_IP], conditions: { ready: true } }],
      ports: [{ name: 'https', port: apiPort, protocol: 'TCP' }],
    };
    const created = await admin.request('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', { body: slice });
    if (created.status !== 201) throw new Error(`the kubernetes EndpointSlice was not created: ${created.status} ${created.text.slice(0, 300)}`);
    const service = await admin.request<{ spec?: { clusterIP?: string } }>('GET', '/api/v1/namespaces/default/services/kubernetes');
    if (service.body.spec?.clusterIP !== KUBERNETES_SERVICE_IP) throw new Error(`the kubernetes Service's ClusterIP is ${service.body.spec?.clusterIP}, not ${KUBERNETES_SERVICE_IP}`);

    const proxyConfig = join(this.dir, 'kube-proxy.yaml');
    writeFileSync(
      proxyConfig,
      stringify({
        apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
        kind: 'KubeProxyConfiguration',
        clientConnection: { kubeconfig: adminKubeconfig },
        hostnameOverride: node.nodeName,
        mode: 'iptables',
        clusterCIDR: CLUSTER_CIDR,
        // Inside the node's namespace: no port of the machine's is taken.
        healthzBindAddress: '127.0.0.1:10256',
        metricsBindAddress: '127.0.0.1:10249',
        // The conntrack table's size and timeouts are the machine's, not the namespace's: left alone.
        conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
      }),
    );
    const [enter, ...enterArgs] = containerd.enterCommand();
    this.processes.push(ManagedProcess.start('kube-proxy', enter as string, [...enterArgs, o.clusterBinaries.kubeProxy, `--config=${proxyConfig}`, '--v=1'], { env, logFile: join(this.dir, 'kube-proxy.log'), cwd: this.dir }));
    this.guard();
    await waitFor(() => this.serviceAnswers(), { what: `the kubernetes Service (${KUBERNETES_SERVICE_IP}:443) answering inside the node's network`, timeoutMs: 60_000, intervalMs: 500, abortIf: () => this.exited() });
  }

  // Whether a TLS request to the kubernetes Service gets an HTTP answer from inside the node's network.
  private serviceAnswers(): Promise<boolean> {
    const containerd = this.node?.containerd;
    if (containerd === null || containerd === undefined) return Promise.resolve(false);
    const [enter, ...enterArgs] = containerd.enterCommand();
    return new Promise((resolve) => {
      execFile(enter as string, [...enterArgs, process.execPath, '-e', SERVICE_PROBE_SOURCE, KUBERNETES_SERVICE_IP], { timeout: 10_000 }, (err, stdout) => resolve(err === null && /^\d{3}$/m.test(stdout)));
    });
  }

  // Why a process of the cluster's own has exited, or null.
  private exited(): string | null {
    const gone = this.processes.find((p) => !p.running);
    return gone === undefined ? null : `${gone.describeExit()}\n${gone.logTail()}`;
  }

  /** Stops the controllers, kube-proxy and the node. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const proc of this.processes) await proc.stop('SIGTERM', 5000);
    try {
      await this.node?.stop();
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
      this.unregisterExit?.();
      this.watchdog?.disarm();
    }
  }

  diagnostics(): string {
    const parts = this.processes.map((proc) => `--- ${proc.describeExit()}; last lines of ${proc.logFile}:\n${proc.logTail(30)}`);
    if (this.node !== null) parts.push(this.node.diagnostics());
    return parts.join('\n');
  }

  private guard(): void {
    const pids = (): number[] => this.processes.filter((p) => p.running).map((p) => p.pid);
    this.unregisterExit ??= onProcessExit(() => {
      for (const pid of pids()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      rmSync(this.dir, { recursive: true, force: true });
    });
    const script = [...pids().map((pid) => `kill -9 ${pid} 2>/dev/null`), `rm -rf ${shellQuote(this.dir)}`].join('\n');
    if (this.watchdog === null) this.watchdog = startWatchdog(script);
    else this.watchdog.update(script);
  }
}
