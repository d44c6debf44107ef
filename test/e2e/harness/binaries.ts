// Finds the kube-apiserver and etcd binaries the end-to-end tests run: KEA_APISERVER_BIN and
// KEA_ETCD_BIN when set, else the files scripts/build-apiserver.sh and scripts/install-etcd.sh leave
// in their cache, named after the versions pinned in test/e2e/apiserver/go.mod and
// test/e2e/etcd/go.mod. Nothing is built here: a cold build takes minutes, so a missing binary
// is a reason to skip, printed with the command that builds it.

import { accessSync, constants, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export interface ControlPlaneBinaries {
  readonly apiserver: string;
  readonly etcd: string;
}

/** The binaries, or why they are not there. */
export type BinaryLookup = { readonly ok: true; readonly binaries: ControlPlaneBinaries } | { readonly ok: false; readonly reason: string };

// The module the version is read from, and the script that builds it.
const COMPONENTS = {
  apiserver: { env: 'KEA_APISERVER_BIN', goMod: 'test/e2e/apiserver/go.mod', module: 'k8s.io/kubernetes', file: 'kube-apiserver', script: 'scripts/build-apiserver.sh' },
  etcd: { env: 'KEA_ETCD_BIN', goMod: 'test/e2e/etcd/go.mod', module: 'go.etcd.io/etcd/server/v3', file: 'etcd', script: 'scripts/install-etcd.sh' },
} as const;

/** The version a go.mod requires of a module (`require m vX.Y.Z` or a line inside a require block). */
export function pinnedVersion(goModText: string, module: string): string | null {
  for (const line of goModText.split('\n')) {
    const words = line.trim().split(/\s+/);
    const at = words[0] === 'require' ? 1 : 0;
    if (words[at] === module && /^v\d+\.\d+\.\d+$/.test(words[at + 1] ?? '')) return words[at + 1] as string;
  }
  return null;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function locate(component: keyof typeof COMPONENTS, env: Readonly<Record<string, string | undefined>>): string | { reason: string } {
  const spec = COMPONENTS[component];
  const fromEnv = env[spec.env];
  if (fromEnv !== undefined && fromEnv !== '') {
    return isExecutable(fromEnv) ? fromEnv : { reason: `${spec.env}=${fromEnv} is not an executable file` };
  }
  const version = pinnedVersion(readFileSync(join(REPO_ROOT, spec.goMod), 'utf8'), spec.module);
  if (version === null) return { reason: `cannot read the ${spec.module} version from ${spec.goMod}` };
  const cacheDir = env.KEA_CACHE_DIR !== undefined && env.KEA_CACHE_DIR !== '' ? env.KEA_CACHE_DIR : join(env.HOME ?? homedir(), '.cache', 'kube-eviction-agent');
  const cached = join(cacheDir, `${spec.file}-${version}`);
  if (isExecutable(cached)) return cached;
  return { reason: `${spec.file} ${version} is not built (${spec.env} unset, ${cached} missing): run \`bash ${spec.script}\` and export ${spec.env}=<its last line>` };
}

/** Where the binaries are, from the environment or the build scripts' cache. */
export function findControlPlaneBinaries(env: Readonly<Record<string, string | undefined>> = process.env): BinaryLookup {
  const apiserver = locate('apiserver', env);
  const etcd = locate('etcd', env);
  const reasons = [apiserver, etcd].filter((found): found is { reason: string } => typeof found !== 'string').map((found) => found.reason);
  if (reasons.length > 0) return { ok: false, reason: reasons.join('; ') };
  return { ok: true, binaries: { apiserver: apiserver as string, etcd: etcd as string } };
}
