// `kube-eviction-agent check-config FILE`: prints the effective thresholds (defaults applied,
// allocatable copies shown, any met on every pass called out first) and the feature gates that
// change a decision, whether the node lock's directory is the host's here, and the PSI node
// conditions (and, when they are on, whether this host can have them); or every problem found;
// exits non-zero on an invalid file.

import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { formatConfigErrors, formatEffectiveThresholds, formatNearWholeThresholds } from '../config/effective-table.js';
import { formatFeatureGates } from '../config/feature-gate-table.js';
import { loadConfigFile } from '../config/load.js';
import { describeNodeLock } from '../compose/node-lock.js';
import { describePsiConditions } from '../compose/psi-conditions.js';
import { ConfigError, formatConfigProblem } from '../errors.js';

/** Checks `file`, writing the report to `out` and the problems to `err`; resolves with the exit status. */
export async function checkConfig(file: string, out: Writable, err: Writable): Promise<number> {
  try {
    const loaded = await loadConfigFile(file);
    // Valid, as the kubelet would take it, but first on the page: such a threshold evicts continuously.
    const nearWhole = formatNearWholeThresholds(loaded);
    out.write(`${file}: valid ${loaded.kind}\n\n${nearWhole === '' ? '' : `${nearWhole}\n`}${formatEffectiveThresholds(loaded)}\n`);
    out.write(`\n${formatFeatureGates(loaded.eviction)}`);
    out.write(`\n${describeNodeLock(loaded)}`);
    out.write(`\n${describePsiConditions(loaded)}`);
    if (loaded.warnings.length > 0) {
      out.write(`\nwarnings:\n${loaded.warnings.map((w) => `  ${formatConfigProblem(w)}`).join('\n')}\n`);
    }
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    err.write(`${file}: invalid configuration (${error.problems.length} problem${error.problems.length === 1 ? '' : 's'})\n${formatConfigErrors(error)}\n`);
    return 1;
  }
}

export function registerCheckConfig(program: Command): void {
  program
    .command('check-config')
    .description('Validate a configuration file and print the effective eviction thresholds')
    .argument('<file>', 'AgentConfiguration or KubeletConfiguration (kubelet.config.k8s.io/v1beta1) file')
    .action(async (file: string) => {
      process.exitCode = await checkConfig(file, process.stdout, process.stderr);
    });
}
