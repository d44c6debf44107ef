// A TCP port carried across a network namespace's edge (pod-network.ts): the API server, on the
// machine's loopback, reachable from the cluster's namespace at the same port on every address
// there (the kubelet and kube-proxy at 127.0.0.1, the pods through the `kubernetes` Service, which
// kube-proxy sends to the node's address); and the kubelet's port, inside the namespace, reachable
// from the machine's loopback, where the API server dials it for logs, exec and attach. Two small
// Node processes carry the bytes (TLS is end to end, untouched): one accepts TCP on one side and
// connects to a Unix socket, which a socket path crosses namespaces as an address cannot; one on
// the other side accepts on that socket and connects to the port.

import { join } from 'node:path';
import { cleanEnv } from './control-plane.js';
import { ManagedProcess } from './managed-process.js';
import { waitFor } from './wait.js';

// argv: mode (tcp-to-unix | unix-to-tcp), the Unix socket, the TCP port, the address to listen on.
const FORWARDER_SOURCE = `
const net = require('node:net');
const [mode, socketPath, portText, listenAddress] = process.argv.slice(1);
const port = Number(portText);
const pipe = (a, b) => {
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.pipe(b).pipe(a);
};
const server = mode === 'tcp-to-unix'
  ? net.createServer((c) => pipe(c, net.connect(socketPath)))
  : net.createServer((c) => pipe(c, net.connect(port, '127.0.0.1')));
server.on('error', (err) => { console.error(String(err)); process.exit(1); });
if (mode === 'tcp-to-unix') server.listen(port, listenAddress, () => console.log('listening'));
else server.listen(socketPath, () => console.log('listening'));
`;

export interface PortForwarderOptions {
  readonly dir: string;
  /** Names the socket and the log files. */
  readonly name: string;
  readonly port: number;
  /** The command prefix that enters the namespace (nsenter --net=...). */
  readonly enterCommand: readonly string[];
  /**
   * `into`: the port at 127.0.0.1 outside is served inside, on every address there. `out`: the
   * port at 127.0.0.1 inside is served outside, on the machine's loopback only.
   */
  readonly direction: 'into' | 'out';
}

export class PortForwarder {
  private constructor(readonly processes: readonly ManagedProcess[]) {}

  static async start(o: PortForwarderOptions): Promise<PortForwarder> {
    const socket = join(o.dir, `${o.name}.sock`);
    const env = cleanEnv();
    const [enter, ...enterArgs] = o.enterCommand;
    if (enter === undefined) throw new Error('no command to enter the network namespace');
    const listener = (address: string): string[] => ['-e', FORWARDER_SOURCE, 'tcp-to-unix', socket, String(o.port), address];
    const connector = ['-e', FORWARDER_SOURCE, 'unix-to-tcp', socket, String(o.port)];
    const outside = ManagedProcess.start(`${o.name}-outside`, process.execPath, o.direction === 'into' ? connector : listener('127.0.0.1'), { env, logFile: join(o.dir, `${o.name}-outside.log`) });
    const inside = ManagedProcess.start(`${o.name}-inside`, enter, [...enterArgs, process.execPath, ...(o.direction === 'into' ? listener('0.0.0.0') : connector)], { env, logFile: join(o.dir, `${o.name}-inside.log`) });
    const forwarder = new PortForwarder([outside, inside]);
    for (const proc of forwarder.processes) {
      await waitFor(() => proc.logTail(5).includes('listening'), { what: `${proc.name} listening`, timeoutMs: 20_000, intervalMs: 50, abortIf: () => (proc.running ? null : `${proc.describeExit()}\n${proc.logTail()}`) });
    }
    return forwarder;
  }

  get pids(): number[] {
    return this.processes.filter((p) => p.running).map((p) => p.pid);
  }

  async stop(): Promise<void> {
    for (const proc of this.processes) await proc.stop('SIGKILL', 0);
  }
}
