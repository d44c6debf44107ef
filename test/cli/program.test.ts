// The program registers only the command being run (so `replay` does not pay for loading the
// daemon), and every command when none is named, so help and suggestions stay whole.

import { buildProgram } from '../../src/cli/program.js';

const ALL = ['demo', 'run', 'check-config', 'replay', 'record', 'explain', 'cleanup'];

describe('buildProgram', () => {
  test.each([
    { argv: ['replay', '--config', 'c.yaml', 'r.jsonl'], commands: ['replay'] },
    { argv: ['check-config', 'c.yaml'], commands: ['check-config'] },
    { argv: ['run'], commands: ['run'] },
    { argv: [], commands: ALL },
    { argv: ['--help'], commands: ALL },
    { argv: ['replai'], commands: ALL },
    { argv: ['toString'], commands: ALL },
  ])('$argv registers $commands', async ({ argv, commands }) => {
    const program = await buildProgram(['node', 'kube-eviction-agent', ...argv]);
    expect(program.commands.map((c) => c.name())).toEqual(commands);
  });
});
