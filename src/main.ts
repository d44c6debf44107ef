#!/usr/bin/env node
// The composition root and command-line entry point: the only place that wires adapters to the
// core. Nothing imports this file.

import { errorMessage } from './errors.js';
import { buildProgram } from './cli/program.js';

const program = buildProgram();
program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`${errorMessage(err)}\n`);
  process.exitCode = 2;
});
