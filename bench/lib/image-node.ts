// The Node.js the image ships, to run the agent on it outside the image: KEA_IMAGE_NODE_BIN when
// set, else the copy scripts/install-node.sh leaves in its cache for the exact version the
// Dockerfile's FROM lines name. Nothing is fetched here; a missing copy is a reason, with the
// command that fetches it. Used by the runtime-tree test and the benchmark's runtime part. Also
// the options the image's ENTRYPOINT starts node with, and those the DaemonSet adds through
// NODE_OPTIONS, so the benchmark's parts that run the real `run` command start it as the
// DaemonSet's pods do.

import { accessSync, constants, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** The exact Node version of the Dockerfile's base images (`node:24.22.3-bookworm-slim` -> 24.22.3). */
export function imageNodeVersion(dockerfileText: string): string {
  const versions = new Set([...dockerfileText.matchAll(/^FROM\s+node:(\d+\.\d+\.\d+)-\S+/gm)].map((m) => m[1] as string));
  if (versions.size !== 1) throw new Error(`the Dockerfile's FROM lines name ${versions.size} exact Node versions, expected one`);
  return [...versions][0] as string;
}

export type ImageNodeLookup = { readonly ok: true; readonly path: string; readonly version: string } | { readonly ok: false; readonly reason: string };

export function findImageNode(repoRoot: string, env: Readonly<Record<string, string | undefined>> = process.env): ImageNodeLookup {
  const version = imageNodeVersion(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8'));
  const cacheDir = env.KEA_CACHE_DIR !== undefined && env.KEA_CACHE_DIR !== '' ? env.KEA_CACHE_DIR : join(env.HOME ?? homedir(), '.cache', 'kube-eviction-agent');
  const fromEnv = env.KEA_IMAGE_NODE_BIN;
  const path = fromEnv !== undefined && fromEnv !== '' ? fromEnv : join(cacheDir, `node-v${version}`, 'bin', 'node');
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return { ok: false, reason: `the image's Node ${version} is not at ${path}: run \`bash scripts/install-node.sh\`${fromEnv === undefined ? '' : ' and point KEA_IMAGE_NODE_BIN at its last line'}` };
  }
  return { ok: true, path, version };
}

/** The options the final ENTRYPOINT of `<repoRoot>/Dockerfile` puts between `node` and the script. */
export function imageNodeOptions(repoRoot: string): readonly string[] {
  const entrypoint = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8')
    .split('\n')
    .findLast((line) => line.startsWith('ENTRYPOINT '));
  if (entrypoint === undefined) throw new Error(`${repoRoot}/Dockerfile has no ENTRYPOINT`);
  const command = JSON.parse(entrypoint.slice('ENTRYPOINT '.length)) as unknown;
  if (!Array.isArray(command) || command[0] !== 'node' || !command.every((word) => typeof word === 'string')) throw new Error(`the Dockerfile's ENTRYPOINT is not an exec-form node command: ${entrypoint}`);
  const script = command.findIndex((word: string) => word.endsWith('.js'));
  if (script < 0) throw new Error(`the Dockerfile's ENTRYPOINT names no script: ${entrypoint}`);
  return command.slice(1, script) as string[];
}

/** The NODE_OPTIONS the agent's container has in `<repoRoot>/deploy/daemonset.yaml` (the chart's defaults), or '' without one. */
export function daemonSetNodeOptions(repoRoot: string): string {
  const documents = parseAllDocuments(readFileSync(join(repoRoot, 'deploy', 'daemonset.yaml'), 'utf8')).map((d) => d.toJS() as unknown);
  const daemonSet = documents.find((d): d is { spec: { template: { spec: { containers: { name: string; env?: { name: string; value?: string }[] }[] } } } } => (d as { kind?: unknown } | null)?.kind === 'DaemonSet');
  if (daemonSet === undefined) throw new Error(`${repoRoot}/deploy/daemonset.yaml has no DaemonSet`);
  const env = daemonSet.spec.template.spec.containers.flatMap((c) => c.env ?? []);
  return env.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
}
