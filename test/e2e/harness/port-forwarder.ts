// The API server, reachable from a cluster's network namespace (pod-network.ts) at the same port
// on every address there: the kubelet and kube-proxy at 127.0.0.1, the pods through the
// `kubernetes` Service (kube-proxy sends it to the node's address). The API server itself stays on
// the machine's loopback, where the tests reach it. Two small Node processes carry the bytes (TLS
// is end to end, untouched): one in the namespace accepts TCP and connects to a Unix socket, which
// a socket path crosses namespaces as an address cannot; one outside accepts on that socket and
// connects to the API server.

import { join } from 'node:path';
import { cleanEnv } from './control-plane.js';
import { ManagedProcess } from './managed-process.js';
import { waitFor } from './wait.js';

// argv: mode (tcp-to-unix | unix-to-tcp), the Unix socket, the TCP port.
const FORWARDER_SOURCE = `
const net = require('node:net');
const [mode, socketPath, portText] = process.argv.slice(1);
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
if (mode === 'tcp-to-unix') server.listen(port, '0.0.0.0', () => console.log('listening'));
else server.listen(socketPath, () => console.log('listening'));
`;

export class ApiForwarder {
  private constructor(readonly processes: readonly ManagedProcess[]) {}

  /**
   * Forwards `port` in the network namespace that `enterCommand` enters (nsenter --net=...) to the
   * API server at 127.0.0.1:`port` outside it.
   */
  static async start(options: { readonly dir: string; readonly port: number; readonly enterCommand: readonly string[] }): Promise<ApiForwarder> {
    const socket = join(options.dir, 'apiserver.sock');
    const env = cleanEnv();
    const outside = ManagedProcess.start('api-forwarder-outside', process.execPath, ['-e', FORWARDER_SOURCE, 'unix-to-tcp', socket, String(options.port)], { env, logFile: join(options.dir, 'api-forwarder-outside.log') });
    const [enter, ...enterArgs] = options.enterCommand;
    if (enter === undefined) throw new Error('no command to enter the network namespace');
    const inside = ManagedProcess.start('api-forwarder-inside', enter, [...enterArgs, process.execPath, '-e', FORWARDER_SOURCE, 'tcp-to-unix', socket, String(options.port)], { env, logFile: join(options.dir, 'api-forwarder-inside.log') });
    const forwarder = new ApiForwarder([outside, inside]);
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
