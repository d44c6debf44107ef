// The stats-coverage guard across observations that read the pods and observations that carried
// their last reading: only a reading changes the verdict (a pass that carried reads no pod's figure
// for any decision), and the first observation is judged whatever it is.

import { silentLogger } from '../../../src/api/logger.js';
import type { Pod } from '../../../src/api/pod.js';
import type { PodStatsReads } from '../../../src/api/summary.js';
import { PodStatsGuard } from '../../../src/daemon/pod-stats-guard.js';
import type { AgentEvent, EventRecorder, Observation } from '../../../src/daemon/ports.js';

const NOW_MS = Date.UTC(2026, 0, 1);
const pods: Pod[] = Array.from({ length: 4 }, (_, i) => ({
  metadata: { name: `p${i}`, namespace: 'default', uid: `00000000-0000-4000-8000-00000000000${i}` },
  spec: { containers: [{ name: 'app' }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'app', state: { running: { startedAt: new Date(NOW_MS - 3_600_000).toISOString() } } }] },
}));

// An observation in which `measured` pods have memory stats, read afresh or carried.
function observation(measured: number, podStatsRead?: PodStatsReads): Observation {
  const summaryPods = pods.slice(0, measured).map((p) => ({ podRef: { name: p.metadata.name ?? '', namespace: 'default', uid: p.metadata.uid ?? '' }, memory: { workingSetBytes: 1 } }));
  return { summary: { node: {}, pods: summaryPods }, dedicatedImageFs: false, splitContainerFs: false, problems: [], ...(podStatsRead === undefined ? {} : { podStatsRead }) };
}

const READ = { memory: true, processes: false };
const CARRIED = { memory: false, processes: false };

const cases = [
  { name: 'read, all measured', steps: [observation(4, READ)], blind: [false] },
  { name: 'read, none measured', steps: [observation(0, READ)], blind: [true] },
  { name: 'a carried observation leaves a seeing verdict', steps: [observation(4, READ), observation(0, CARRIED)], blind: [false, false] },
  { name: 'a carried observation leaves a blind verdict', steps: [observation(0, READ), observation(4, CARRIED)], blind: [true, true] },
  { name: 'the next reading changes it', steps: [observation(0, READ), observation(4, CARRIED), observation(4, READ)], blind: [true, true, false] },
  { name: 'the first observation is judged even if it carried', steps: [observation(0, CARRIED)], blind: [true] },
  { name: 'an observation from a source that always reads everything', steps: [observation(4, READ), observation(0)], blind: [false, true] },
];

describe('PodStatsGuard with carried observations', () => {
  test.each(cases)('$name', ({ steps, blind }) => {
    const events: AgentEvent[] = [];
    const recorder: EventRecorder = { podEvent: async () => undefined, objectEvent: async () => undefined, nodeEvent: async (e) => void events.push(e) };
    const guard = new PodStatsGuard({ events: recorder, logger: silentLogger });
    const verdicts = steps.map((o) => guard.assess(o, pods, NOW_MS).size > 0);
    expect(verdicts).toEqual(blind);
    expect(guard.refusal() !== null).toBe(blind.at(-1));
    // One Event per change of verdict, never one for a carried observation.
    const changes = blind.filter((b, i) => b !== (i === 0 ? false : blind[i - 1])).length;
    expect(events).toHaveLength(changes);
  });
});
