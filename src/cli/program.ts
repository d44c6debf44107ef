// The command-line program: one subcommand per operator task.

import { Command } from 'commander';
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registerCheckConfig } from './check-config.js';
import { registerCleanup } from './cleanup.js';
import { registerRecord } from './record.js';
import { registerReplay } from './replay.js';
import { registerRun } from './run.js';
import { registerExplain } from './explain.js';
import { registerDemo } from './demo.js';

// The package's own package.json, found upward from this file (src/cli in tests, dist/src/cli built).
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

export function buildProgram(): Command {
  const program = new Command('kube-eviction-agent')
    .description('Node-local Kubernetes eviction agent: the kubelet eviction manager\'s decisions, reacting to kernel memory notifications')
    .version(packageVersion());
  registerDemo(program);
  registerRun(program);
  registerCheckConfig(program);
  registerReplay(program);
  registerRecord(program);
  registerExplain(program);
  registerCleanup(program);
  return program;
}
