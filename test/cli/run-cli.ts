// Runs the built command line (`dist/src/main.js`, built by `npm test`'s pretest step) as an
// operator would, with a config and a recording written to a temporary directory.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = join(REPO_ROOT, 'dist/src/main.js');

export interface CliResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI with these arguments (and optional standard input and environment overrides). */
export function runCli(args: readonly string[], input?: string, env: Record<string, string> = {}): CliResult {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`);
  const result = spawnSync(process.execPath, [CLI, ...args], { input, encoding: 'utf8', cwd: REPO_ROOT, timeout: 60_000, env: { ...process.env, ...env } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Replays `steps` (objects, one per line) with `configYaml`; returns the parsed output lines. */
export function replay(configYaml: string, steps: readonly unknown[] | string): CliResult & { lines: Record<string, unknown>[] } {
  const dir = mkdtempSync(join(tmpdir(), 'kea-replay-'));
  try {
    const configPath = join(dir, 'config.yaml');
    const inputPath = join(dir, 'recording.jsonl');
    writeFileSync(configPath, configYaml);
    writeFileSync(inputPath, typeof steps === 'string' ? steps : steps.map((s) => JSON.stringify(s)).join('\n') + '\n');
    const result = runCli(['replay', '--config', configPath, inputPath]);
    const lines = result.stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    return { ...result, lines };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
