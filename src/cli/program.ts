// The command-line program: one subcommand per operator task. Only the module of the command
// being run is loaded: the daemon's modules (its logger, metrics, FFI, the Kubernetes client's
// wiring) cost `replay` or `check-config` about a quarter of a second of start-up otherwise.

import { Command } from 'commander';
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

type Register = (program: Command) => void;

// In the order `--help` lists them.
const COMMANDS: Readonly<Record<string, () => Promise<Register>>> = {
  demo: async () => (await import('./demo.js')).registerDemo,
  run: async () => (await import('./run.js')).registerRun,
  'check-config': async () => (await import('./check-config.js')).registerCheckConfig,
  replay: async () => (await import('./replay.js')).registerReplay,
  record: async () => (await import('./record.js')).registerRecord,
  explain: async () => (await import('./explain.js')).registerExplain,
  cleanup: async () => (await import('./cleanup.js')).registerCleanup,
};

// The package's own package.json, found upward from this file (src/cli in tests, dist/src/cli built).
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * The program for these arguments (`process.argv` form): with a command name first, only that
 * command; otherwise (help, a version, a mistyped command) every command, so the listing and
 * commander's suggestions stay whole.
 */
export async function buildProgram(argv: readonly string[] = process.argv): Promise<Command> {
  const program = new Command('kube-eviction-agent')
    .description('Node-local Kubernetes eviction agent: the kubelet eviction manager\'s decisions, reacting to kernel memory notifications')
    .version(packageVersion());
  const named = argv[2] !== undefined && Object.hasOwn(COMMANDS, argv[2]) ? [argv[2]] : Object.keys(COMMANDS);
  const registers = await Promise.all(named.map((name) => (COMMANDS[name] as () => Promise<Register>)()));
  for (const register of registers) register(program);
  return program;
}
