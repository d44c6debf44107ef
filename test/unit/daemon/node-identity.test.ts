// Is the Node this host? The comparison as a table (match, mismatch, nothing to compare), and the
// guard on a fake watch: refused until the watch has the Node, one log line and one Event per
// change of verdict, listeners told when acting becomes allowed or refused.

import type { HostIdentity } from '../../../src/api/host-identity.js';
import type { Node } from '../../../src/api/pod.js';
import { compareNodeIdentity, NodeIdentityGuard } from '../../../src/daemon/node-identity.js';
import { fakeCluster } from '../../fakes/fake-cluster.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { TEST_HOST, testNode } from '../../fixtures/host-identity.js';

const OTHER_BOOT = '11111111-2222-4333-8444-555555555555';

function withInfo(nodeInfo: Record<string, string> | undefined): Node {
  return { metadata: { name: 'node-a' }, ...(nodeInfo === undefined ? {} : { status: { nodeInfo } }) };
}

describe('compareNodeIdentity', () => {
  const host = TEST_HOST;
  const cases: { name: string; node: Node | null; host?: HostIdentity; state: string; detail: RegExp | string[] }[] = [
    { name: 'all three equal', node: testNode('node-a'), state: 'match', detail: ['bootID', 'machineID', 'systemUUID'] },
    { name: 'equal whatever the case of the hex digits', node: withInfo({ bootID: (host.bootID ?? '').toUpperCase(), machineID: '', systemUUID: ` ${(host.systemUUID ?? '').toUpperCase()} ` }), state: 'match', detail: ['bootID', 'systemUUID'] },
    { name: 'the boot ID differs', node: withInfo({ bootID: OTHER_BOOT, machineID: host.machineID ?? '' }), state: 'mismatch', detail: /the Node node-a is another machine: its bootID "11111111-2222-4333-8444-555555555555" is not this host's "0b7e8d1c/ },
    // kind: containers as nodes share the kernel, hence the boot ID; the machine ID tells them apart.
    { name: 'same boot ID, another machine ID (nodes in containers on one kernel)', node: withInfo({ bootID: host.bootID ?? '', machineID: 'ffffffffffffffffffffffffffffffff' }), state: 'mismatch', detail: /its machineID "f{32}" is not this host's/ },
    { name: 'a very long value from the API is shown cut', node: withInfo({ bootID: 'a'.repeat(10_000) }), state: 'mismatch', detail: /its bootID "a{64}…" is not/ },
    { name: 'no Node', node: null, state: 'unverified', detail: /the Node node-a does not exist/ },
    { name: 'a Node without nodeInfo (not registered by a kubelet yet)', node: withInfo(undefined), state: 'unverified', detail: /cannot check that this host is the Node node-a: no bootID, machineID or systemUUID/ },
    {
      name: 'the host\'s files unreadable: said why',
      node: testNode('node-a'),
      host: { bootID: null, machineID: null, systemUUID: null, problems: ["the host's boot ID is unknown: /proc/sys/kernel/random/boot_id: EACCES"] },
      state: 'unverified',
      detail: /readable on this host; the host's boot ID is unknown: \/proc\/sys\/kernel\/random\/boot_id: EACCES/,
    },
    { name: 'only the fields both sides have are compared', node: withInfo({ systemUUID: host.systemUUID ?? '' }), host: { ...host, systemUUID: null }, state: 'unverified', detail: /no bootID, machineID or systemUUID both/ },
  ];
  test.each(cases)('$name', ({ node, host: h, state, detail }) => {
    const verdict = compareNodeIdentity('node-a', node, h ?? host);
    expect(verdict.state).toBe(state);
    if (verdict.state === 'match') expect(verdict.compared).toEqual(detail);
    else expect(verdict.reason).toMatch(detail as RegExp);
  });
});

describe('NodeIdentityGuard', () => {
  test('refused until the watch has synced; a mismatch refuses with one log line and one Event; the right identity allows, and says so', () => {
    const cluster = fakeCluster({ node: withInfo({ bootID: OTHER_BOOT }), synced: false });
    const logger = new RecordingLogger();
    const guard = new NodeIdentityGuard({ nodeName: 'node-a', host: TEST_HOST, cluster: cluster.view, events: cluster.events, logger });
    const changes: boolean[] = [];
    guard.onChange((allowed) => changes.push(allowed));
    guard.start();
    expect(guard.refusal()).toBe('the Node node-a has not been read yet');
    expect(cluster.events.events).toEqual([]);

    cluster.view.synced = true;
    for (let i = 0; i < 3; i++) expect(guard.refusal()).toMatch(/is another machine/);
    cluster.view.setNode({ ...withInfo({ bootID: OTHER_BOOT }), metadata: { name: 'node-a', labels: { x: 'y' } } });
    expect(cluster.events.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'NodeIdentityMismatch']]);
    expect(cluster.events.events[0]?.message).toMatch(/^kube-eviction-agent refuses to act \(no eviction, no taint or condition written\): the Node node-a is another machine/);
    expect(logger.find('refusing to act: this host is not the Node')).toHaveLength(1);
    expect(changes).toEqual([]);

    // The kubelet reports this host's identity (after a reboot, its new boot ID).
    cluster.view.setNode(testNode('node-a'));
    expect(guard.refusal()).toBeNull();
    expect(changes).toEqual([true]);
    expect(cluster.events.events.map((e) => e.reason)).toEqual(['NodeIdentityMismatch', 'NodeIdentityVerified']);

    cluster.view.setNode(null);
    expect(guard.refusal()).toMatch(/does not exist/);
    expect(changes).toEqual([true, false]);
    expect(cluster.events.events.map((e) => e.reason)).toEqual(['NodeIdentityMismatch', 'NodeIdentityVerified', 'NodeIdentityUnverified']);
    guard.stop();
    expect(cluster.view.listenerCount().node).toBe(0);
  });
});
