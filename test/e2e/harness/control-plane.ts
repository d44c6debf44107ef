// One test control plane: etcd and kube-apiserver on 127.0.0.1 with free ports, RBAC and Node
// authorization, NodeRestriction, a service-account issuer (TokenRequest works), and static
// tokens for the admin and each kubelet identity, all in one temporary directory. Started once per
// test file (about 5 s); stopped in the order test/e2e/README.md gives (SIGKILL the apiserver,
// then SIGTERM etcd), and removed with its directory, also when the test process dies.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from './api-client.js';
import type { ControlPlaneBinaries } from './binaries.js';
import { generateCredentials, type Credentials } from './credentials.js';
import { onProcessExit, shellQuote, startWatchdog, type Watchdog } from './exit-cleanup.js';
import { freePorts } from './free-port.js';
import { ManagedProcess } from './managed-process.js';
import { waitFor } from './wait.js';

export interface ControlPlaneOptions {
  readonly binaries: ControlPlaneBinaries;
  /** The nodes that get a kubelet identity (`system:node:<name>`) in the token file. */
  readonly nodeNames: readonly string[];
  /** How long etcd and the apiserver may take to become ready (default 90 s). */
  readonly startTimeoutMs?: number;
  /**
   * Runs the ServiceAccount admission plugin, as every cluster does: pods get their projected
   * service-account token volume (a cluster with a controller manager, cluster.ts). Off by default:
   * without a controller manager no namespace has its `default` ServiceAccount, which the plugin
   * would require of every pod.
   */
  readonly serviceAccountAdmission?: boolean | undefined;
  /**
   * Names every node of `nodeNames` 127.0.0.1 for the API server alone (an /etc/hosts bound over
   * the machine's in a mount namespace of its own) and has it reach kubelets by their Hostname
   * address: a cluster whose kubelet is inside a network namespace forwards its port to the
   * machine's loopback (cluster.ts), and `kubectl logs`, `exec` and `attach` work.
   */
  readonly kubeletsOnLoopback?: boolean | undefined;
  /**
   * Writes an audit log (every request's user, verb, resource and code, at Metadata level) to
   * `auditLogFile`: who made which request, which the API server's own metrics cannot tell apart.
   * The harness's own requests (the admin's) are left out: a fleet's set-up alone is 60,000 of them.
   */
  readonly auditLog?: boolean | undefined;
}

// Metadata for every request but the admin's; the RequestReceived stage would only double every line.
const AUDIT_POLICY = 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: None\n  users: [admin]\n- level: Metadata\n';

// etcd reads flags from ETCD_* variables too; the apiserver needs nothing from the test's
// environment. Only what a process needs to run is passed on.
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const key of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[key] !== undefined) env[key] = process.env[key];
  return env;
}

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

export class ControlPlane {
  readonly url: string;
  private apiserver: ManagedProcess | null = null;
  private etcd: ManagedProcess | null = null;
  private readonly ports: { readonly etcdClient: number; readonly etcdPeer: number; readonly apiserver: number };
  private readonly startTimeoutMs: number;
  private unregisterExit: (() => void) | null = null;
  private watchdog: Watchdog | null = null;
  private stopped = false;

  private constructor(
    private readonly options: ControlPlaneOptions,
    readonly dir: string,
    readonly credentials: Credentials,
    ports: number[],
  ) {
    const [etcdClient, etcdPeer, apiserver] = ports as [number, number, number];
    this.ports = { etcdClient, etcdPeer, apiserver };
    this.url = `https://127.0.0.1:${apiserver}`;
    this.startTimeoutMs = options.startTimeoutMs ?? 90_000;
  }

  static async start(options: ControlPlaneOptions): Promise<ControlPlane> {
    const dir = mkdtempSync(join(tmpdir(), 'kea-e2e-'));
    let plane: ControlPlane | null = null;
    try {
      const credentials = generateCredentials(dir, options.nodeNames);
      plane = new ControlPlane(options, dir, credentials, await freePorts(3));
      plane.guard();
      await plane.startEtcd();
      await plane.startApiServer();
      return plane;
    } catch (err) {
      const diagnostics = plane?.diagnostics() ?? '';
      await plane?.stop();
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`the control plane did not start: ${err instanceof Error ? err.message : String(err)}${diagnostics === '' ? '' : `\n${diagnostics}`}`);
    }
  }

  /** The audit log (ControlPlaneOptions.auditLog), or null without one. */
  get auditLogFile(): string | null {
    return this.options.auditLog === true ? join(this.dir, 'audit.log') : null;
  }

  /** Whether pods get service-account tokens (ControlPlaneOptions.serviceAccountAdmission). */
  get serviceAccountAdmission(): boolean {
    return this.options.serviceAccountAdmission === true;
  }

  get caPem(): string {
    return this.credentials.caPem;
  }

  /** A client with the admin identity (system:masters); `keepAlive` as ApiClient says. */
  admin(options: { readonly keepAlive?: boolean } = {}): ApiClient {
    return new ApiClient(this.url, this.caPem, this.credentials.adminToken, options);
  }

  /** A client with a kubelet identity (system:node:<name>). */
  node(nodeName: string): ApiClient {
    const token = this.credentials.nodeTokens.get(nodeName);
    if (token === undefined) throw new Error(`node ${nodeName} has no token: pass it in nodeNames`);
    return new ApiClient(this.url, this.caPem, token);
  }

  /** A client with any bearer token (null: anonymous). */
  client(token: string | null, options: { readonly keepAlive?: boolean } = {}): ApiClient {
    return new ApiClient(this.url, this.caPem, token, options);
  }

  get apiServerPid(): number | null {
    return this.apiserver?.running === true ? this.apiserver.pid : null;
  }

  get etcdPid(): number | null {
    return this.etcd?.running === true ? this.etcd.pid : null;
  }

  /** Kills the apiserver (SIGKILL: it keeps no state, and a SIGTERM takes about 10 s). */
  async stopApiServer(): Promise<void> {
    await this.apiserver?.stop('SIGKILL', 0);
    this.apiserver = null;
    this.guard();
  }

  /** Starts the apiserver (again, on the same port and etcd) and waits for /readyz. */
  async startApiServer(): Promise<void> {
    if (this.apiserver?.running === true) throw new Error('the apiserver is already running');
    const c = this.credentials;
    const args = [
      `--etcd-servers=http://127.0.0.1:${this.ports.etcdClient}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${this.ports.apiserver}`,
      '--advertise-address=127.0.0.1',
      '--endpoint-reconciler-type=none',
      `--tls-cert-file=${c.servingCertFile}`,
      `--tls-private-key-file=${c.servingKeyFile}`,
      `--token-auth-file=${c.tokenFile}`,
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NodeRestriction',
      ...(this.options.serviceAccountAdmission === true ? [] : ['--disable-admission-plugins=ServiceAccount']),
      '--service-account-issuer=https://kubernetes.default.svc',
      `--service-account-key-file=${c.saPubFile}`,
      `--service-account-signing-key-file=${c.saKeyFile}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      // The privileged fallback (deploy/patches/privileged.yaml) is applied to the DaemonSet.
      '--allow-privileged=true',
      ...this.auditArgs(),
    ];
    const options = { env: cleanEnv(), logFile: join(this.dir, 'kube-apiserver.log'), cwd: this.dir };
    const apiserver =
      this.options.kubeletsOnLoopback === true
        ? ManagedProcess.start('kube-apiserver', 'unshare', ['--mount', '--propagation', 'private', '--', '/bin/sh', '-c', `mount --bind ${shellQuote(this.hostsFile())} /etc/hosts && exec "$@"`, 'sh', this.options.binaries.apiserver, ...args, '--kubelet-preferred-address-types=Hostname'], options)
        : ManagedProcess.start('kube-apiserver', this.options.binaries.apiserver, args, options);
    this.apiserver = apiserver;
    this.guard();
    const anonymous = this.client(null);
    await waitFor(async () => (await anonymous.request('GET', '/readyz', { timeoutMs: 2000 })).status === 200, {
      what: 'kube-apiserver /readyz',
      timeoutMs: this.startTimeoutMs,
      intervalMs: 200,
      abortIf: () => (apiserver.running ? null : `${apiserver.describeExit()}\n${apiserver.logTail()}`),
    });
  }

  private auditArgs(): string[] {
    const file = this.auditLogFile;
    if (file === null) return [];
    const policy = join(this.dir, 'audit-policy.yaml');
    writeFileSync(policy, AUDIT_POLICY);
    // No rotation: the reader needs every line of the run.
    return [`--audit-policy-file=${policy}`, `--audit-log-path=${file}`, '--audit-log-maxsize=0', '--audit-log-format=json'];
  }

  // The machine's /etc/hosts with every node name on 127.0.0.1 (kubeletsOnLoopback).
  private hostsFile(): string {
    const file = join(this.dir, 'hosts');
    writeFileSync(file, `127.0.0.1 localhost\n${this.options.nodeNames.map((name) => `127.0.0.1 ${name}`).join('\n')}\n`);
    return file;
  }

  /** Stops both processes and removes the directory. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.apiserver?.stop('SIGKILL', 0);
    await this.etcd?.stop('SIGTERM', 5000);
    rmSync(this.dir, { recursive: true, force: true });
    this.unregisterExit?.();
    this.watchdog?.disarm();
  }

  /** The log tails of both processes, for a failure message. */
  diagnostics(): string {
    const parts: string[] = [];
    for (const proc of [this.etcd, this.apiserver]) {
      if (proc !== null) parts.push(`--- ${proc.describeExit()}; last lines of ${proc.logFile}:\n${proc.logTail()}`);
    }
    return parts.join('\n');
  }

  private async startEtcd(): Promise<void> {
    const { etcdClient, etcdPeer } = this.ports;
    const args = [
      '--name=e2e',
      `--data-dir=${join(this.dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=e2e=http://127.0.0.1:${etcdPeer}`,
      // The data is thrown away after the run; fsync would only slow a loaded machine down.
      '--unsafe-no-fsync',
      '--log-level=warn',
    ];
    const etcd = ManagedProcess.start('etcd', this.options.binaries.etcd, args, { env: cleanEnv(), logFile: join(this.dir, 'etcd.log'), cwd: this.dir });
    this.etcd = etcd;
    this.guard();
    await waitFor(async () => (await httpStatus(`http://127.0.0.1:${etcdClient}/health`)) === 200, {
      what: 'etcd /health',
      timeoutMs: this.startTimeoutMs,
      intervalMs: 100,
      abortIf: () => (etcd.running ? null : `${etcd.describeExit()}\n${etcd.logTail()}`),
    });
  }

  // Keeps both safety nets in step with the current PIDs: the exit handler and the watchdog.
  private guard(): void {
    const pids = () => ({ apiserver: this.apiserver?.running === true ? this.apiserver.pid : null, etcd: this.etcd?.running === true ? this.etcd.pid : null });
    this.unregisterExit ??= onProcessExit(() => {
      const { apiserver, etcd } = pids();
      for (const pid of [apiserver, etcd]) {
        try {
          if (pid !== null) process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      rmSync(this.dir, { recursive: true, force: true });
    });
    const { apiserver, etcd } = pids();
    const script = [
      apiserver === null ? '' : `kill -9 ${apiserver} 2>/dev/null`,
      etcd === null ? '' : `kill -TERM ${etcd} 2>/dev/null; sleep 2; kill -9 ${etcd} 2>/dev/null`,
      `rm -rf ${shellQuote(this.dir)}`,
    ]
      .filter((line) => line !== '')
      .join('\n');
    if (this.watchdog === null) this.watchdog = startWatchdog(script);
    else this.watchdog.update(script);
  }
}
