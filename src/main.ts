#!/usr/bin/env node
// The command-line entry point: builds the program and runs it. The wiring of adapters to the
// core is the composition root's (src/compose). Nothing imports this file.

import { errorMessage } from './errors.js';
import { buildProgram } from './cli/program.js';

buildProgram(process.argv)
  .then((program) => program.parseAsync(process.argv))
  .catch((err: unknown) => {
    process.stderr.write(`${errorMessage(err)}\n`);
    process.exitCode = 2;
  });
