// `kube-eviction-agent demo`: a leaking pod on a sandboxed node, evicted by the real run loop
// before the kernel OOM killer fires. No cluster needed.

import type { Command } from 'commander';
import { AgentError } from '../errors.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('Run the agent on a sandboxed node with a leaking pod and watch it evict the pod before the OOM killer fires (no cluster needed)')
    .option('--leak-rate <MiB/s>', 'how fast the leaking pod allocates', '50')
    .option('--time-limit <seconds>', 'stop after this long whatever happened', '60')
    .option('--simulated', 'simulate the node\'s memory even where real cgroups are available')
    .option('--dry-run', 'the agent decides but does not act: the kernel OOM killer fires, and the agent attributes its kill to the leaking pod')
    .action(async (options: { leakRate: string; timeLimit: string; simulated?: boolean; dryRun?: boolean }) => {
      const leakMiBPerSecond = Number(options.leakRate);
      const timeLimitSeconds = Number(options.timeLimit);
      if (!(leakMiBPerSecond > 0 && leakMiBPerSecond <= 4096)) throw new AgentError('EVA_ERR_USAGE', `--leak-rate must be between 0 and 4096 MiB/s: ${options.leakRate}`);
      if (!(timeLimitSeconds > 0)) throw new AgentError('EVA_ERR_USAGE', `--time-limit must be a positive number of seconds: ${options.timeLimit}`);
      const { runDemo } = await import('../demo/demo.js');
      const abort = new AbortController();
      const onInterrupt = (): void => abort.abort();
      process.once('SIGINT', onInterrupt);
      process.once('SIGTERM', onInterrupt);
      try {
        const dryRun = options.dryRun === true;
        const summary = await runDemo({ leakMiBPerSecond, timeLimitMs: timeLimitSeconds * 1000, simulated: options.simulated === true, dryRun, out: process.stdout, signal: abort.signal });
        // A dry run shows what it is for when the kill is attributed to the leak; a live run, when the agent evicts first.
        const shown = dryRun ? summary.evicted.length === 0 && summary.attributed.some((kill) => kill.pod === 'shop/leaky') : summary.evicted.length > 0 && summary.oomKills === 0;
        process.exitCode = shown ? 0 : 1;
      } finally {
        process.off('SIGINT', onInterrupt);
        process.off('SIGTERM', onInterrupt);
      }
    });
}
