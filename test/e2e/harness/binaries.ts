// Finds the binaries the end-to-end tests run. The control plane (kube-apiserver, etcd): the
// KEA_APISERVER_BIN and KEA_ETCD_BIN variables when set, else the files scripts/build-kubernetes.sh
// and scripts/install-etcd.sh leave in their cache, named after the versions pinned in
// test/e2e/kubernetes/go.mod and test/e2e/etcd/go.mod. The real node (kubelet, kubectl,
// containerd, its runc shim, ctr; scripts/build-kubernetes.sh and scripts/build-containerd.sh) the
// same way, and runc from KEA_RUNC_BIN or PATH (Debian's `runc` package). Nothing is built here: a
// cold build takes minutes, so a missing binary is a reason to skip, printed with the command that
// builds it.

import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository's root directory: the nearest one above this file holding package.json (three
 * levels up in the source tree, four once compiled under dist/, where the benchmark runs it).
 */
export const REPO_ROOT = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 6 && !existsSync(join(dir, 'package.json')); up++) dir = dirname(dir);
  return existsSync(join(dir, 'package.json')) ? dir : resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
})();

export interface ControlPlaneBinaries {
  readonly apiserver: string;
  readonly etcd: string;
}

export interface RealNodeBinaries {
  readonly kubelet: string;
  readonly kubectl: string;
  readonly containerd: string;
  readonly containerdShim: string;
  readonly ctr: string;
  readonly runc: string;
}

/** What a cluster adds to a real node: the controllers, kube-proxy and the CNI plugins of its pod network. */
export interface ClusterBinaries {
  readonly controllerManager: string;
  readonly scheduler: string;
  readonly kubeProxy: string;
  /** The directory of the CNI plugins (bridge, host-local, loopback, portmap), scripts/build-cni.sh's. */
  readonly cniBinDir: string;
}

/** The binaries, or why they are not there. */
export type Lookup<T> = { readonly ok: true; readonly binaries: T } | { readonly ok: false; readonly reason: string };
export type BinaryLookup = Lookup<ControlPlaneBinaries>;

/** What a lookup found; its reason as an error otherwise (for set-up that runs only once every lookup succeeded). */
export function foundBinaries<T>(lookup: Lookup<T>): T {
  if (!lookup.ok) throw new Error(lookup.reason);
  return lookup.binaries;
}

type Env = Readonly<Record<string, string | undefined>>;

interface GoBinary {
  readonly env: string;
  readonly goMod: string;
  readonly module: string;
  readonly file: string;
  readonly script: string;
}

const KUBERNETES = { goMod: 'test/e2e/kubernetes/go.mod', module: 'k8s.io/kubernetes', script: 'scripts/build-kubernetes.sh' } as const;
const CONTAINERD = { goMod: 'test/e2e/containerd/go.mod', module: 'github.com/containerd/containerd/v2', script: 'scripts/build-containerd.sh' } as const;

// The module each version is read from, and the script that builds it.
const GO_BINARIES = {
  apiserver: { env: 'KEA_APISERVER_BIN', file: 'kube-apiserver', ...KUBERNETES },
  etcd: { env: 'KEA_ETCD_BIN', goMod: 'test/e2e/etcd/go.mod', module: 'go.etcd.io/etcd/server/v3', file: 'etcd', script: 'scripts/install-etcd.sh' },
  kubelet: { env: 'KEA_KUBELET_BIN', file: 'kubelet', ...KUBERNETES },
  kubectl: { env: 'KEA_KUBECTL_BIN', file: 'kubectl', ...KUBERNETES },
  containerd: { env: 'KEA_CONTAINERD_BIN', file: 'containerd', ...CONTAINERD },
  containerdShim: { env: 'KEA_CONTAINERD_SHIM_BIN', file: 'containerd-shim-runc-v2', ...CONTAINERD },
  ctr: { env: 'KEA_CTR_BIN', file: 'ctr', ...CONTAINERD },
  controllerManager: { env: 'KEA_CONTROLLER_MANAGER_BIN', file: 'kube-controller-manager', ...KUBERNETES },
  scheduler: { env: 'KEA_SCHEDULER_BIN', file: 'kube-scheduler', ...KUBERNETES },
  kubeProxy: { env: 'KEA_KUBE_PROXY_BIN', file: 'kube-proxy', ...KUBERNETES },
} as const satisfies Record<string, GoBinary>;

/** The version a go.mod requires of a module (`require m vX.Y.Z` or a line inside a require block). */
export function pinnedVersion(goModText: string, module: string): string | null {
  for (const line of goModText.split('\n')) {
    const words = line.trim().split(/\s+/);
    const at = words[0] === 'require' ? 1 : 0;
    if (words[at] === module && /^v\d+\.\d+\.\d+$/.test(words[at + 1] ?? '')) return words[at + 1] as string;
  }
  return null;
}

/** The version of `module` pinned in a go.mod of the repository, or null. */
export function repositoryPin(goMod: string, module: string): string | null {
  return pinnedVersion(readFileSync(join(REPO_ROOT, goMod), 'utf8'), module);
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function fromEnv(name: string, env: Env): string | { reason: string } | null {
  const value = env[name];
  if (value === undefined || value === '') return null;
  return isExecutable(value) ? value : { reason: `${name}=${value} is not an executable file` };
}

function cacheDir(env: Env): string {
  return env.KEA_CACHE_DIR !== undefined && env.KEA_CACHE_DIR !== '' ? env.KEA_CACHE_DIR : join(env.HOME ?? homedir(), '.cache', 'kube-eviction-agent');
}

function locate(spec: GoBinary, env: Env): string | { reason: string } {
  const given = fromEnv(spec.env, env);
  if (given !== null) return given;
  const version = repositoryPin(spec.goMod, spec.module);
  if (version === null) return { reason: `cannot read the ${spec.module} version from ${spec.goMod}` };
  const cached = join(cacheDir(env), `${spec.file}-${version}`);
  if (isExecutable(cached)) return cached;
  return { reason: `${spec.file} ${version} is not built (${spec.env} unset, ${cached} missing): run \`bash ${spec.script}\` (or \`eval "$(bash scripts/e2e-env.sh)"\`)` };
}

// runc is Debian's: KEA_RUNC_BIN, else the first `runc` on PATH.
function locateRunc(env: Env): string | { reason: string } {
  const given = fromEnv('KEA_RUNC_BIN', env);
  if (given !== null) return given;
  for (const dir of [...(env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/bin']) {
    if (dir !== '' && isExecutable(join(dir, 'runc'))) return join(dir, 'runc');
  }
  return { reason: 'runc is not installed (KEA_RUNC_BIN unset, no runc on PATH): apt-get install -y runc' };
}

function collect<K extends string>(found: Record<K, string | { reason: string }>): Lookup<Record<K, string>> {
  const reasons = Object.values<string | { reason: string }>(found)
    .filter((f): f is { reason: string } => typeof f !== 'string')
    .map((f) => f.reason);
  if (reasons.length > 0) return { ok: false, reason: reasons.join('; ') };
  return { ok: true, binaries: found as Record<K, string> };
}

/** Where the control plane's binaries are, from the environment or the build scripts' cache. */
export function findControlPlaneBinaries(env: Env = process.env): BinaryLookup {
  return collect({ apiserver: locate(GO_BINARIES.apiserver, env), etcd: locate(GO_BINARIES.etcd, env) });
}

/** Where the real node's binaries are: kubelet, kubectl, containerd, its shim and ctr, and runc. */
export function findRealNodeBinaries(env: Env = process.env): Lookup<RealNodeBinaries> {
  const { kubelet, kubectl, containerd, containerdShim, ctr } = GO_BINARIES;
  return collect({
    kubelet: locate(kubelet, env),
    kubectl: locate(kubectl, env),
    containerd: locate(containerd, env),
    containerdShim: locate(containerdShim, env),
    ctr: locate(ctr, env),
    runc: locateRunc(env),
  });
}

/** kubectl, pinned as the real node's, from the environment or the cache; null when it is not built (it is optional). */
export function findKubectl(env: Env = process.env): string | null {
  const found = locate(GO_BINARIES.kubectl, env);
  return typeof found === 'string' ? found : null;
}

// The CNI plugins: KEA_CNI_BIN_DIR, else scripts/build-cni.sh's directory in the cache.
function locateCniBinDir(env: Env): string | { reason: string } {
  const given = env.KEA_CNI_BIN_DIR;
  const version = repositoryPin('test/e2e/cni/go.mod', 'github.com/containernetworking/plugins');
  if (version === null) return { reason: 'cannot read the github.com/containernetworking/plugins version from test/e2e/cni/go.mod' };
  const dir = given !== undefined && given !== '' ? given : join(cacheDir(env), `cni-bin-${version}`);
  const missing = ['bridge', 'host-local', 'loopback', 'portmap'].filter((plugin) => !isExecutable(join(dir, plugin)));
  if (missing.length === 0) return dir;
  return { reason: `the CNI plugins ${missing.join(', ')} are not in ${dir}: run \`bash scripts/build-cni.sh\` (or \`eval "$(bash scripts/e2e-env.sh)"\`)` };
}

/** Where a cluster's binaries beyond the real node's are: the controller manager, the scheduler, kube-proxy, the CNI plugins. */
export function findClusterBinaries(env: Env = process.env): Lookup<ClusterBinaries> {
  const { controllerManager, scheduler, kubeProxy } = GO_BINARIES;
  return collect({
    controllerManager: locate(controllerManager, env),
    scheduler: locate(scheduler, env),
    kubeProxy: locate(kubeProxy, env),
    cniBinDir: locateCniBinDir(env),
  });
}
