// Whether `run` starts the kill path: only for the memcg-v1 notifier, and only while
// `notifier.killPath` is on (the operator's choice of the thread's memory against its milliseconds).

import { hostKillPath, type NodeSideContext } from '../../../src/compose/node-side.js';
import { parseConfigText } from '../../../src/config/load.js';
import type { MemoryThresholdNotifier } from '../../../src/daemon/ports.js';
import type { PodTerminator } from '../../../src/act/pod-terminator.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';

const context: NodeSideContext = { nodeName: 'n1', clock: new FakeClock(), logger: new RecordingLogger() };
const terminator = {} as PodTerminator;
const notifier = (mode: string): MemoryThresholdNotifier => ({ mode }) as unknown as MemoryThresholdNotifier;
const config = (notifierYaml: string): ReturnType<typeof parseConfigText> =>
  parseConfigText(`apiVersion: kube-eviction-agent.io/v1alpha1\nkind: AgentConfiguration\nobserve:\n  cgroupDriver: cgroupfs\nnotifier:\n${notifierYaml}`, 'c.yaml');

test.each([
  { name: 'memcg-v1, the default: on', notifierYaml: '  mode: auto\n', mode: 'memcg-v1', started: true },
  { name: 'memcg-v1, killPath: false: off', notifierYaml: '  killPath: false\n', mode: 'memcg-v1', started: false },
  { name: 'psi: never (cgroup v2 has no threshold eventfd)', notifierYaml: '  killPath: true\n', mode: 'psi', started: false },
])('$name', ({ notifierYaml, mode, started }) => {
  expect(hostKillPath(config(notifierYaml), context, notifier(mode), terminator) !== undefined).toBe(started);
});
