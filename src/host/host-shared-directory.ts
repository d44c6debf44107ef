// Whether a directory this process sees is the host's own directory of that path, not one private
// to its container: the node lock only holds agents apart if every agent locks the same file. On
// the host's mount namespace it is so by definition; in a container (with the host's PID namespace,
// as the agent runs) the directory must be the same file as the one under the host's root,
// /proc/1/root, which the kernel resolves in the host's mount namespace.

import { readlinkSync, statSync } from 'node:fs';
import { posix } from 'node:path';

export type DirectorySharing =
  | { readonly shared: true; readonly how: string }
  | { readonly shared: false; readonly reason: string }
  | { readonly shared: null; readonly reason: string };

function errCode(err: unknown): string {
  return (err as NodeJS.ErrnoException | null)?.code ?? String(err);
}

/** Whether `directory` is shared with the host; `procRoot` is where /proc is (tests point it elsewhere). */
export function hostSharing(directory: string, procRoot = '/proc'): DirectorySharing {
  let own;
  try {
    own = statSync(directory);
  } catch (err) {
    if (errCode(err) === 'ENOENT') return { shared: false, reason: `${directory} does not exist here: it is not mounted from the host (an agent would lock a file of its own)` };
    return { shared: null, reason: `cannot tell whether ${directory} is the host's: ${errCode(err)}` };
  }
  let ownNamespace: string;
  let hostNamespace: string;
  try {
    ownNamespace = readlinkSync(posix.join(procRoot, 'self/ns/mnt'));
    hostNamespace = readlinkSync(posix.join(procRoot, '1/ns/mnt'));
  } catch (err) {
    return { shared: null, reason: `cannot tell whether ${directory} is the host's: the host's init process is not visible (${errCode(err)}; the host's PID namespace is needed)` };
  }
  if (ownNamespace === hostNamespace) return { shared: true, how: 'this process runs in the host\'s mount namespace' };
  let host;
  try {
    host = statSync(posix.join(procRoot, '1/root', directory));
  } catch (err) {
    if (errCode(err) === 'ENOENT') return { shared: false, reason: `${directory} does not exist on the host: it is private to this container` };
    return { shared: null, reason: `cannot tell whether ${directory} is the host's: ${procRoot}/1/root is not readable (${errCode(err)})` };
  }
  if (host.dev === own.dev && host.ino === own.ino) return { shared: true, how: `${directory} is the host's own directory (mounted from it)` };
  return { shared: false, reason: `${directory} is not the host's ${directory}: it is private to this container (mount it from the host as a hostPath)` };
}
