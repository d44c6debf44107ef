// The agent's own image, as scripts/build-image.sh builds it without a container engine: an OCI
// archive that `ctr -n k8s.io images import` names AGENT_IMAGE_REF. Built once (about half a minute
// cold), then cached by a hash of its inputs; the project must be built first (npm run build), as
// the image's /app holds the compiled dist/.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, type Lookup } from './binaries.js';

const execFileAsync = promisify(execFile);

export const BUILD_IMAGE_SCRIPT = join(REPO_ROOT, 'scripts', 'build-image.sh');

/** The reference the archive carries: localhost/kube-eviction-agent:<the chart's appVersion>. */
export function agentImageRef(chartYaml = readFileSync(join(REPO_ROOT, 'deploy', 'chart', 'Chart.yaml'), 'utf8')): string {
  const appVersion = /^appVersion:\s*"?([^"\s]+)"?\s*$/m.exec(chartYaml)?.[1];
  if (appVersion === undefined) throw new Error('deploy/chart/Chart.yaml has no appVersion');
  return `localhost/kube-eviction-agent:${appVersion}`;
}

export interface AgentImage {
  /** The OCI archive's absolute path. */
  readonly archive: string;
  /** The name `ctr images import` gives it. */
  readonly ref: string;
  /** The manifest's digest (`sha256:...`), for an `image@digest` reference or the chart's image.digest. */
  readonly digest: string;
}

/**
 * Builds (or finds in the cache) the agent's image archive, or says why it cannot be built here.
 * `env` adds to this process's environment (KEA_IMAGE_OUTPUT, KEA_REBUILD, SOURCE_DATE_EPOCH...).
 */
export async function agentImage(env: NodeJS.ProcessEnv = {}, timeoutMs = 600_000): Promise<Lookup<AgentImage>> {
  try {
    const { stdout } = await execFileAsync('bash', [BUILD_IMAGE_SCRIPT], { env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
    const archive = stdout.trimEnd().split('\n').at(-1) ?? '';
    if (!archive.startsWith('/')) return { ok: false, reason: `scripts/build-image.sh printed no archive path (stdout: ${stdout.slice(-200)})` };
    const index = JSON.parse((await execFileAsync('tar', ['-xOf', archive, 'index.json'], { timeout: 60_000 })).stdout) as { manifests: { digest: string }[] };
    return { ok: true, binaries: { archive, ref: agentImageRef(), digest: index.manifests[0]?.digest ?? '' } };
  } catch (err) {
    const stderr = ((err as { stderr?: string }).stderr ?? '').trim();
    return { ok: false, reason: `the agent image cannot be built (scripts/build-image.sh): ${stderr.split('\n').at(-1) ?? String(err)}` };
  }
}

/**
 * Imports the archive into a running containerd's k8s.io namespace (where the kubelet's CRI looks),
 * through `ctr` as `run(args)` runs it (e.g. `(args) => containerd.ctr(args)`).
 */
export async function importAgentImage(run: (args: readonly string[]) => Promise<string>, image: AgentImage): Promise<void> {
  await run(['-n', 'k8s.io', 'images', 'import', image.archive]);
  const names = (await run(['-n', 'k8s.io', 'images', 'ls', '-q'])).split('\n');
  if (!names.includes(image.ref)) throw new Error(`ctr images import of ${image.archive} named no ${image.ref} (images: ${names.filter((n) => n !== '').join(', ')})`);
}
