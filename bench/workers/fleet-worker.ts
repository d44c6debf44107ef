// One process of the fleet benchmark: a few hundred nodes' agents, each built by the product's
// composition root on a simulated host (test/e2e/harness/fleet.ts), sharing this process's
// one copy of the Kubernetes client library (its import alone is ~75 MB; per agent, what its
// informers hold). Driven over IPC by bench/fleet.ts: start, storm, calm, stats, stop.

import { silentLogger } from '../../src/api/logger.js';
import { startFleetAgent, type FleetAgent } from '../../test/e2e/harness/fleet.js';

type Command =
  | { type: 'start'; nodes: string[]; server: string; caPem: string; token: string }
  | { type: 'storm'; nodes: string[]; bytes: number; spreadMs: number }
  | { type: 'calm' }
  | { type: 'stats' }
  | { type: 'stop' };

const agents = new Map<string, FleetAgent>();
const send = (message: unknown): void => {
  process.send?.(message);
};

async function handle(command: Command): Promise<void> {
  switch (command.type) {
    case 'start': {
      // Ten at a time: start-up's lists are the heaviest requests an agent makes.
      const queue = [...command.nodes];
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
            agents.set(node, await startFleetAgent({ server: command.server, caPem: command.caPem, token: command.token, nodeName: node, logger: silentLogger }));
          }
        }),
      );
      send({ type: 'started', rssBytes: process.memoryUsage().rss });
      return;
    }
    case 'storm': {
      // Spread over spreadMs: every node crosses within it, each at its own moment.
      await Promise.all(
        command.nodes.map(async (node) => {
          await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * command.spreadMs)));
          agents.get(node)?.host.storm(command.bytes);
        }),
      );
      send({ type: 'stormed' });
      return;
    }
    case 'calm':
      for (const agent of agents.values()) agent.host.calm();
      send({ type: 'calmed' });
      return;
    case 'stats': {
      const terminations: Record<string, number> = {};
      for (const agent of agents.values()) for (const [uid, times] of agent.host.terminations()) terminations[uid] = times;
      const usage = process.cpuUsage();
      let retries = 0;
      let stormReports = 0;
      for (const agent of agents.values()) {
        const text = await agent.agent.metrics.registry.metrics();
        for (const line of text.split('\n')) {
          if (line.startsWith('kube_eviction_agent_api_errors_total')) retries += Number(line.split(' ').at(-1));
          if (line.startsWith('kube_eviction_agent_eviction_storms_total')) stormReports += Number(line.split(' ').at(-1));
        }
      }
      send({ type: 'stats', agents: agents.size, rssBytes: process.memoryUsage().rss, cpuMicros: usage.user + usage.system, terminations, apiErrors: retries, stormReports });
      return;
    }
    case 'stop':
      await Promise.all([...agents.values()].map((a) => a.stop()));
      send({ type: 'stopped' });
      process.exit(0);
  }
}

process.on('message', (command: Command) => {
  handle(command).catch((err: unknown) => send({ type: 'error', message: err instanceof Error ? err.stack ?? err.message : String(err) }));
});
// The driver gone: nothing of this process may outlive it.
process.on('disconnect', () => process.exit(0));
