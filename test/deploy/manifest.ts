// Loads deploy/daemonset.yaml for the deployment tests: every document as plain data, plus the
// pieces most tests need (the DaemonSet's pod spec and agent container, the ConfigMap's embedded
// configuration), with the repository paths they sit at.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MANIFEST_PATH = join(REPO_ROOT, 'deploy', 'daemonset.yaml');
export const DOCKERFILE_PATH = join(REPO_ROOT, 'Dockerfile');
export const DOCKERIGNORE_PATH = join(REPO_ROOT, '.dockerignore');
export const RUNTIME_TREE_SCRIPT = join(REPO_ROOT, 'scripts', 'runtime-tree.sh');

/** Loosely typed Kubernetes object: the tests check the shape themselves. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type KubeObject = Record<string, any>;

export interface Manifest {
  readonly documents: readonly KubeObject[];
  one(kind: string): KubeObject;
}

export function loadManifest(path = MANIFEST_PATH): Manifest {
  const parsed = parseAllDocuments(readFileSync(path, 'utf8'), { uniqueKeys: true });
  const documents: KubeObject[] = [];
  for (const doc of parsed) {
    if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value = doc.toJS() as unknown;
    if (value !== null && value !== undefined) documents.push(value as KubeObject);
  }
  return {
    documents,
    one(kind: string): KubeObject {
      const found = documents.filter((d) => d.kind === kind);
      if (found.length !== 1) throw new Error(`${path}: expected one ${kind}, found ${found.length}`);
      return found[0] as KubeObject;
    },
  };
}

/** The DaemonSet's only container. */
export function agentContainer(manifest: Manifest): KubeObject {
  const containers = manifest.one('DaemonSet').spec.template.spec.containers as KubeObject[];
  if (containers.length !== 1) throw new Error(`expected one container, found ${containers.length}`);
  return containers[0] as KubeObject;
}

/** The configuration file the DaemonSet's `--config` names, as the ConfigMap provides it. */
export function embeddedConfig(manifest: Manifest): { readonly path: string; readonly key: string; readonly text: string } {
  const container = agentContainer(manifest);
  const args = container.args as string[];
  const configArg = args.find((a) => a.startsWith('--config='));
  if (configArg === undefined) throw new Error('the agent container passes no --config=FILE');
  const path = configArg.slice('--config='.length);
  const key = path.slice(path.lastIndexOf('/') + 1);
  const configMap = manifest.one('ConfigMap');
  const text = configMap.data?.[key] as string | undefined;
  if (text === undefined) throw new Error(`ConfigMap ${configMap.metadata.name} has no key ${key}`);
  return { path, key, text };
}

export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}
