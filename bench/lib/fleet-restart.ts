// The API server restart under the fleet: it is killed, a storm on 10 % of the nodes comes while
// it is down (the agents end the leakers locally and their requests fail), and it starts again.
// Measured: how long it was down, how soon every agent had both watches open again and how many
// LISTs that took, and whether every eviction decided during the outage landed once: each pod
// deleted, ended locally once, with one Evicted Event.

import { countByVerbAndResource } from '../../test/e2e/harness/audit-log.js';
import { FLEET_NAMESPACE, STORM_BYTES } from '../../test/e2e/harness/fleet.js';
import { leakersOn, resetLeakers, sleep, storm, tallyEvictions, waitUntil, workerStats, type FleetContext } from './fleet-context.js';
import type { RestartResult } from './fleet-result.js';
import { total } from './fleet-workers.js';

const REOPEN_CAP_MS = 300_000;
const ALL_GONE_CAP_MS = 300_000;
// The agents retry an Event the API server did not answer every 10 s, for two minutes.
const EVENTS_CAP_MS = 130_000;
const RECOVERY_CAP_MS = 240_000;

export async function measureRestart(context: FleetContext, nodes: readonly string[]): Promise<RestartResult> {
  const { admin, plane, kubelets, fleetNodes, agentUser, say } = context;
  const targets = await leakersOn(admin, nodes);
  const statsBefore = await workerStats(context);
  const killAtMs = Date.now();
  say(`API server restart: killed; a storm on ${nodes.length} nodes while it is down`);
  await plane.stopApiServer();
  await sleep(1_000);
  await storm(context, nodes, STORM_BYTES);
  await sleep(2_000);
  await plane.startApiServer();
  const readyAtMs = Date.now();
  say(`API server restart: ready again ${readyAtMs - killAtMs} ms after the kill`);

  // Each agent's first watch of its pods and of its Node since the kill, by node.
  const reopened = (): { agents: number; lastMs: number } => {
    const first = new Map<string, number>();
    for (const r of context.audit.between(agentUser, killAtMs)) {
      if (r.verb !== 'watch' || r.code >= 300) continue;
      const key = `${r.resource} ${r.fieldSelector}`;
      if (!first.has(key)) first.set(key, r.receivedAtMs);
    }
    let agents = 0;
    let lastMs = readyAtMs;
    for (const node of context.assignment.keys()) {
      const pods = first.get(`pods spec.nodeName=${node}`);
      const own = first.get(`nodes metadata.name=${node}`);
      if (pods === undefined || own === undefined) continue;
      agents++;
      lastMs = Math.max(lastMs, pods, own);
    }
    return { agents, lastMs };
  };
  const converged = await waitUntil(context, () => reopened().agents === context.nodeCount, REOPEN_CAP_MS, 2_000);
  const { agents: agentsReopened, lastMs } = reopened();
  say(`API server restart: ${agentsReopened}/${context.nodeCount} agents watch again, the last ${lastMs - readyAtMs} ms after /readyz`);
  const allGone = await waitUntil(context, () => [...targets.keys()].every((uid) => kubelets.goneAtMs.has(uid)), ALL_GONE_CAP_MS);
  const eventsIn = await waitUntil(
    context,
    async () => {
      const events = await admin.get<{ items: { involvedObject: { uid?: string } }[] }>(`/api/v1/namespaces/${FLEET_NAMESPACE}/events`, { fieldSelector: 'reason=Evicted' });
      return new Set(events.items.map((e) => e.involvedObject.uid).filter((uid) => targets.has(uid ?? ''))).size === targets.size;
    },
    EVENTS_CAP_MS,
    5_000,
  );
  await sleep(15_000);
  const recovered = await waitUntil(context, () => fleetNodes.underPressure() === 0, RECOVERY_CAP_MS, 1_000);
  const statsAfter = await workerStats(context);
  const agent = context.audit.between(agentUser, killAtMs);
  const tally = await tallyEvictions(context, targets, killAtMs, agent, statsAfter);
  const cut = [converged, allGone, eventsIn, recovered].find((outcome) => outcome !== true);
  const result: RestartResult = {
    stormNodes: nodes.length,
    downMs: readyAtMs - killAtMs,
    watchesReopenedMs: converged === true ? lastMs - readyAtMs : null,
    agentsReopened,
    relists: agent.filter((r) => r.verb === 'list').length,
    requests: countByVerbAndResource(agent),
    failedRequests: countByVerbAndResource(agent.filter((r) => r.code < 200 || r.code >= 300).map((r) => ({ ...r, resource: `${r.resource} ${r.code}` }))),
    status429: agent.filter((r) => r.code === 429).length,
    agentApiErrors: total(statsAfter, 'apiErrors') - total(statsBefore, 'apiErrors'),
    ...tally,
    ...(cut === undefined ? {} : { cutShort: String(cut) }),
  };
  say(`API server restart: ${result.relists} LISTs; ${tally.podsEvicted}/${tally.podsTargeted} evicted, all gone ${tally.allGoneMs} ms after the kill; repeated deletes ${tally.repeatedDeletes}, kills ${tally.repeatedLocalKills}; Events lost ${tally.lostEvents}, doubled ${tally.doubledEvents}`);
  await resetLeakers(context, nodes);
  return result;
}
