// Runs the commands as an operator would, with a config and a recording written to a temporary
// directory: in process (the command's own function, with in-memory streams) for the tables of
// cases, and through the built command line (`dist/src/main.js`, built by `npm test`'s pretest
// step) for the few cases that prove the real command does the same.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { checkConfig } from '../../src/cli/check-config.js';
import { replayCommand } from '../../src/cli/replay.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = join(REPO_ROOT, 'dist/src/main.js');

export interface CliResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Throws, naming the fix, when the command has not been built. */
export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`);
}

/** Runs the CLI with these arguments (and optional standard input and environment overrides). */
export function runCli(args: readonly string[], input?: string, env: Record<string, string> = {}): CliResult {
  assertBuilt();
  const result = spawnSync(process.execPath, [CLI, ...args], { input, encoding: 'utf8', cwd: REPO_ROOT, timeout: 60_000, env: { ...process.env, ...env } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Runs the CLI without blocking this process, for commands that talk to a server running in it (a
 * spawnSync would stall that server); `env` is the command's whole environment.
 */
export function runCliAsync(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<CliResult> {
  assertBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Collects what a command writes. */
class MemoryOutput extends Writable {
  text = '';

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.text += chunk.toString();
    done();
  }
}

/** Writes `files` to a fresh directory, runs `body` with their paths, and removes the directory. */
async function withFiles<T>(files: Readonly<Record<string, string>>, body: (paths: Record<string, string>) => Promise<T> | T): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'kea-cli-'));
  try {
    const paths: Record<string, string> = {};
    for (const [name, text] of Object.entries(files)) {
      paths[name] = join(dir, name);
      writeFileSync(join(dir, name), text);
    }
    return await body(paths);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `check-config` on a file holding `text`, in process. */
export async function checkConfigText(text: string): Promise<CliResult> {
  return withFiles({ 'config.yaml': text }, async (paths) => {
    const [stdout, stderr] = [new MemoryOutput(), new MemoryOutput()];
    const status = await checkConfig(paths['config.yaml'] ?? '', stdout, stderr);
    return { status, stdout: stdout.text, stderr: stderr.text };
  });
}

/** `check-config` on a file holding `text`, through the command. */
export async function checkConfigTextThroughCli(text: string): Promise<CliResult> {
  return withFiles({ 'config.yaml': text }, (paths) => runCli(['check-config', paths['config.yaml'] ?? '']));
}

export type ReplayResult = CliResult & { lines: Record<string, unknown>[] };

function recording(steps: readonly unknown[] | string): string {
  return typeof steps === 'string' ? steps : steps.map((s) => JSON.stringify(s)).join('\n') + '\n';
}

function withLines(result: CliResult): ReplayResult {
  const lines = result.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { ...result, lines };
}

/** Replays `steps` (objects, one per line) with `configYaml` in process; returns the parsed output lines. */
export async function replay(configYaml: string, steps: readonly unknown[] | string): Promise<ReplayResult> {
  return withFiles({ 'config.yaml': configYaml, 'recording.jsonl': recording(steps) }, async (paths) => {
    const [stdout, stderr] = [new MemoryOutput(), new MemoryOutput()];
    const status = await replayCommand(paths['config.yaml'] ?? '', paths['recording.jsonl'] ?? '', { stdin: Readable.from([]), stdout, stderr });
    return withLines({ status, stdout: stdout.text, stderr: stderr.text });
  });
}

/** The same through the command. */
export async function replayThroughCli(configYaml: string, steps: readonly unknown[] | string): Promise<ReplayResult> {
  return withFiles({ 'config.yaml': configYaml, 'recording.jsonl': recording(steps) }, (paths) => withLines(runCli(['replay', '--config', paths['config.yaml'] ?? '', paths['recording.jsonl'] ?? ''])));
}
