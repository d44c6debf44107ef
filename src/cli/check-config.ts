// `kube-eviction-agent check-config FILE`: prints the effective thresholds (defaults applied,
// allocatable copies shown), or every problem found; exits non-zero on an invalid file.

import type { Command } from 'commander';
import { formatConfigErrors, formatEffectiveThresholds } from '../config/effective-table.js';
import { loadConfigFile } from '../config/load.js';
import { ConfigError, formatConfigProblem } from '../errors.js';

export function registerCheckConfig(program: Command): void {
  program
    .command('check-config')
    .description('Validate a configuration file and print the effective eviction thresholds')
    .argument('<file>', 'AgentConfiguration or KubeletConfiguration (kubelet.config.k8s.io/v1beta1) file')
    .action(async (file: string) => {
      try {
        const loaded = await loadConfigFile(file);
        process.stdout.write(`${file}: valid ${loaded.kind}\n\n${formatEffectiveThresholds(loaded)}\n`);
        if (loaded.warnings.length > 0) {
          process.stdout.write(`\nwarnings:\n${loaded.warnings.map((w) => `  ${formatConfigProblem(w)}`).join('\n')}\n`);
        }
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        process.stderr.write(`${file}: invalid configuration (${err.problems.length} problem${err.problems.length === 1 ? '' : 's'})\n${formatConfigErrors(err)}\n`);
        process.exitCode = 1;
      }
    });
}
