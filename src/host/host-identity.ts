// Reads the host's identity from the files the kubelet (through cAdvisor) reads for its Node's
// `status.nodeInfo`, under the host root: the boot ID from procfs, the machine ID from
// /etc/machine-id (or D-Bus's copy), the system UUID from the firmware's DMI table. A file that
// is missing, unreadable or not in its expected form leaves that part null, with the reason.

import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import type { HostIdentity } from '../api/host-identity.js';
import type { NodeSystemInfo } from '../api/pod.js';

// A value longer than this is not one of these identifiers.
const MAX_IDENTITY_CHARS = 64;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MACHINE_ID = /^[0-9a-f]{32}$/i;

export interface HostIdentityPaths {
  /** The host's root as mounted into the agent (`/` on the host itself). */
  readonly hostRoot: string;
  /** The host's procfs, as the host spells it (`/proc`). */
  readonly procRoot: string;
}

type Read = (path: string) => string;

const readText: Read = (path) => readFileSync(path, 'utf8');

/** Reads the identity files now; never throws. */
export function readHostIdentity(paths: HostIdentityPaths, read: Read = readText): HostIdentity {
  const problems: string[] = [];
  const under = (path: string): string => posix.join(paths.hostRoot, path);
  const first = (what: string, files: readonly string[], form: RegExp): string | null => {
    const reasons: string[] = [];
    for (const file of files) {
      let text: string;
      try {
        text = read(file);
      } catch (err) {
        reasons.push(`${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
        continue;
      }
      const value = text.trim();
      if (value.length <= MAX_IDENTITY_CHARS && form.test(value)) return value.toLowerCase();
      reasons.push(`${file}: not a ${what} (${JSON.stringify(value.slice(0, MAX_IDENTITY_CHARS))})`);
    }
    problems.push(`the host's ${what} is unknown: ${reasons.join('; ')}`);
    return null;
  };
  return {
    bootID: first('boot ID', [under(posix.join(paths.procRoot, 'sys/kernel/random/boot_id'))], UUID),
    machineID: first('machine ID', [under('/etc/machine-id'), under('/var/lib/dbus/machine-id')], MACHINE_ID),
    systemUUID: first('system UUID', [under('/sys/class/dmi/id/product_uuid')], UUID),
    problems,
  };
}

/** The `status.nodeInfo` fields a kubelet on this host would report (for stand-ins of the API server that play the kubelet's part). */
export function nodeInfoOf(identity: HostIdentity): NodeSystemInfo {
  return {
    ...(identity.bootID === null ? {} : { bootID: identity.bootID }),
    ...(identity.machineID === null ? {} : { machineID: identity.machineID }),
    ...(identity.systemUUID === null ? {} : { systemUUID: identity.systemUUID }),
  };
}

/** The identity of the machine this process runs on (no host root: `/`). */
export function thisHostIdentity(): HostIdentity {
  return readHostIdentity({ hostRoot: '/', procRoot: '/proc' });
}
