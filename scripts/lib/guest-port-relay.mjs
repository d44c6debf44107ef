// One forwarded connection of the cgroup v2 guest (scripts/cgroup-v2-guest.sh --forward-port):
// QEMU starts this for each connection the guest opens to 10.0.2.100:PORT, with the connection as
// its stdin and stdout (one socket), and it carries the bytes both ways to 127.0.0.1:PORT on this
// machine, untouched (TLS stays end to end). Either side closing closes both.
import { connect, Socket } from 'node:net';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0 || port >= 65536) {
  process.stderr.write(`guest-port-relay: not a port: ${process.argv[2]}\n`);
  process.exit(2);
}
const guest = new Socket({ fd: 0, readable: true, writable: true });
const host = connect(port, '127.0.0.1');
const end = () => {
  guest.destroy();
  host.destroy();
  process.exit(0);
};
for (const socket of [guest, host]) {
  socket.on('error', end);
  socket.on('close', end);
}
guest.pipe(host).pipe(guest);
