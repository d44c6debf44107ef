// The Node's hugepage capacity the cgroupfs observer subtracts, read from the Node the agent
// watches: the sum of its status.capacity hugepages-* entries, as the kubelet's summary provider
// sums them; unknown (the host's pools stand in) before the Node is seen or when an entry is not
// a quantity.

import type { Node } from '../../../src/api/pod.js';
import { nodeHugepageCapacity } from '../../../src/compose/node-side.js';

const node = (capacity: Record<string, string> | undefined): Node => ({ metadata: { name: 'node-a' }, ...(capacity === undefined ? {} : { status: { capacity } }) });

test.each([
  { name: 'both page sizes summed', capacity: { cpu: '4', memory: '8131640Ki', 'hugepages-1Gi': '2Gi', 'hugepages-2Mi': '192Mi', pods: '110' }, expected: 2n * 1024n ** 3n + 192n * 1024n ** 2n },
  { name: 'no hugepages: 0, nothing subtracted', capacity: { cpu: '4', memory: '8Gi' }, expected: 0n },
  { name: 'pools of zero pages', capacity: { 'hugepages-2Mi': '0' }, expected: 0n },
  { name: 'no capacity yet: unknown', capacity: undefined, expected: undefined },
  { name: 'an entry that is not a quantity: unknown', capacity: { 'hugepages-2Mi': 'lots' }, expected: undefined },
])('$name', ({ capacity, expected }) => {
  expect(nodeHugepageCapacity(() => node(capacity))()).toBe(expected);
});

test('no Node seen yet: unknown', () => {
  expect(nodeHugepageCapacity(() => null)()).toBeUndefined();
});
