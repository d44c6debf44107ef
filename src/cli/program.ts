// The command-line program: one subcommand per operator task.

import { Command } from 'commander';
import { readFileSync } from 'node:fs';

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export function buildProgram(): Command {
  const program = new Command('kube-eviction-agent')
    .description('Node-local Kubernetes eviction agent: the kubelet eviction manager\'s decisions, reacting to kernel memory notifications')
    .version(packageVersion());
  return program;
}
