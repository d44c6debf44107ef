// The agent as the cluster runs it: the DaemonSet's pod on the real node of a cluster (cluster.ts),
// found through the API, its log read from the file the kubelet writes (the CRI format: time,
// stream, tag, then the agent's JSON line), commands run inside its container with `ctr tasks
// exec` (its namespaces, its mounts, its own service-account token), and its ports asked from
// inside the node's network namespace, where the pod's address is.

import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ApiClient } from './api-client.js';
import { K8S_NAMESPACE } from './containerd.js';
import type { RealNode } from './real-node.js';
import { waitFor } from './wait.js';

const execFileAsync = promisify(execFile);

export interface AgentPod {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly uid: string; readonly creationTimestamp?: string; readonly labels?: Record<string, string> };
  readonly spec: { readonly nodeName?: string; readonly containers: readonly { readonly name: string; readonly securityContext?: Record<string, unknown> }[] };
  readonly status?: {
    readonly phase?: string;
    readonly podIP?: string;
    readonly conditions?: readonly { readonly type: string; readonly status: string; readonly lastTransitionTime?: string }[];
    readonly containerStatuses?: readonly { readonly name: string; readonly ready: boolean; readonly restartCount: number; readonly containerID?: string; readonly state?: { readonly running?: { readonly startedAt?: string } } }[];
  };
}

/** One line of the agent's log (pino's JSON). */
export type AgentLogLine = Readonly<Record<string, unknown>> & { readonly msg?: string };

// An HTTP GET from inside the node's network namespace: prints the status, a newline, the body.
const HTTP_GET_SOURCE = `
require('node:http').get(process.argv[1], { timeout: 5000 }, (res) => {
  let body = ''; res.setEncoding('utf8'); res.on('data', (d) => { body += d; });
  res.on('end', () => { process.stdout.write(res.statusCode + '\\n' + body); });
}).on('error', (err) => { console.error(String(err)); process.exit(1); });
`;

/**
 * The lines a pod's container wrote, from the kubelet's log files (all restarts; rotated files that
 * the kubelet compressed are skipped), without the CRI prefix (time, stream, tag).
 */
export function containerLog(node: Pick<RealNode, 'podLogsDir'>, pod: { readonly namespace: string; readonly name: string; readonly uid: string }, container: string): string[] {
  const dir = join(node.podLogsDir, `${pod.namespace}_${pod.name}_${pod.uid}`, container);
  if (!existsSync(dir)) return [];
  const lines: string[] = [];
  const files = readdirSync(dir).filter((f) => !f.endsWith('.gz'));
  // 0.log, 0.log.<time> (rotated), 1.log ...: by restart, then rotated before current.
  files.sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10) || b.length - a.length);
  for (const file of files) {
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) if (line !== '') lines.push(line.split(' ').slice(3).join(' '));
  }
  return lines;
}

function ready(pod: AgentPod | undefined): boolean {
  return pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

export class DeployedAgent {
  private constructor(
    readonly node: RealNode,
    readonly pod: AgentPod,
  ) {}

  /** Waits until the DaemonSet's pod on the node (selected by `labelSelector` in `namespace`) is Ready, and returns it. */
  static async waitReady(admin: ApiClient, node: RealNode, namespace: string, labelSelector: string, timeoutMs = 120_000): Promise<DeployedAgent> {
    let last: AgentPod[] = [];
    const pod = await waitFor(
      async () => {
        const list = await admin.request<{ items: AgentPod[] }>('GET', `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(labelSelector)}&fieldSelector=${encodeURIComponent(`spec.nodeName=${node.nodeName}`)}`);
        last = list.body.items ?? [];
        return last.find((p) => ready(p) && p.metadata.name !== undefined);
      },
      { what: `the agent's pod Ready on ${node.nodeName} (${namespace}, ${labelSelector})`, timeoutMs, intervalMs: 250, detail: () => JSON.stringify(last.map((p) => ({ name: p.metadata.name, phase: p.status?.phase, containers: p.status?.containerStatuses })), null, 1).slice(0, 4000) },
    );
    return new DeployedAgent(node, pod);
  }

  get name(): string {
    return this.pod.metadata.name;
  }

  /** The agent container's ID in containerd (the pod status's containerd://<id>). */
  get containerId(): string {
    const id = this.pod.status?.containerStatuses?.find((c) => c.name === 'agent')?.containerID?.replace(/^containerd:\/\//, '');
    if (id === undefined) throw new Error(`the pod ${this.name} has no agent container ID`);
    return id;
  }

  /** Milliseconds from the pod's creation to its Ready condition, as the API server recorded them (1 s resolution). */
  startToReadyMs(): number {
    const created = Date.parse(this.pod.metadata.creationTimestamp ?? '');
    const readyAt = Date.parse(this.pod.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime ?? '');
    return readyAt - created;
  }

  /** Every JSON line the agent container logged so far (all its restarts). */
  log(): AgentLogLine[] {
    const lines: AgentLogLine[] = [];
    for (const text of containerLog(this.node, this.pod.metadata, 'agent')) {
      if (!text.startsWith('{')) continue;
      try {
        lines.push(JSON.parse(text) as AgentLogLine);
      } catch {
        // A partial line (P) continued on the next: the agent's lines are far below the 16 KiB split.
      }
    }
    return lines;
  }

  /** The log lines with this message whose fields include `fields`. */
  findLog(msg: string, fields: Readonly<Record<string, unknown>> = {}): AgentLogLine[] {
    return this.log().filter((line) => line.msg === msg && Object.entries(fields).every(([k, v]) => line[k] === v));
  }

  logTail(lines = 40): string {
    return this.log()
      .slice(-lines)
      .map((line) => JSON.stringify(line))
      .join('\n');
  }

  /** The host PID of the agent's process (its container's init), from containerd. */
  async hostPid(): Promise<number> {
    const containerd = this.node.containerd;
    if (containerd === null) throw new Error('the node has no containerd');
    // TASK  PID  STATUS
    const line = (await containerd.ctr(['-n', K8S_NAMESPACE, 'tasks', 'ls'])).split('\n').find((l) => l.startsWith(this.containerId));
    const pid = Number(line?.trim().split(/\s+/)[1]);
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`containerd lists no task for the agent's container ${this.containerId}`);
    return pid;
  }

  /** Runs a command inside the agent's container (its namespaces and mounts, as the agent's own process). */
  async exec(args: readonly string[], timeoutMs = 60_000): Promise<{ stdout: string; stderr: string; code: number }> {
    const containerd = this.node.containerd;
    if (containerd === null) throw new Error('the node has no containerd');
    const execId = `e2e-${process.pid}-${Date.now()}`;
    try {
      // In containerd's mount namespace: ctr makes the exec's stdio FIFOs under its /run.
      const [enter, ...enterArgs] = containerd.enterCommand();
      const { stdout, stderr } = await execFileAsync(enter as string, [...enterArgs, containerd.ctrBinary, '--address', containerd.socket, '-n', K8S_NAMESPACE, 'tasks', 'exec', '--exec-id', execId, this.containerId, ...args], { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
      return { stdout, stderr, code: 0 };
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; code?: number | string };
      return { stdout: e.stdout ?? '', stderr: `${e.stderr ?? ''}${String(err)}`, code: typeof e.code === 'number' ? e.code : 1 };
    }
  }

  /** GET http://<pod IP>:<port><path> from inside the node's network namespace. */
  async httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
    const containerd = this.node.containerd;
    const ip = this.pod.status?.podIP;
    if (containerd === null || ip === undefined) throw new Error(`the pod ${this.name} has no address yet`);
    const [enter, ...enterArgs] = containerd.enterCommand();
    const { stdout } = await execFileAsync(enter as string, [...enterArgs, process.execPath, '-e', HTTP_GET_SOURCE, `http://${ip}:${port}${path}`], { timeout: 20_000, maxBuffer: 16 * 1024 * 1024 });
    const newline = stdout.indexOf('\n');
    return { status: Number(stdout.slice(0, newline)), body: stdout.slice(newline + 1) };
  }
}
