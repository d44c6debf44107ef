// The Summary codec gives back what the validator kept, field for field and in the same key order,
// for Summaries with every field, with few, with fields left out one by one, and across batches,
// including the batch where its string dictionary starts over.

import { validateSummary } from '../../../src/api/summary-validation.js';
import type { Summary } from '../../../src/api/summary.js';
import { MAX_DICTIONARY_STRINGS, SummaryDecoder, SummaryEncoder } from '../../../src/replay/summary-codec.js';

const T = '2026-11-01T12:00:00Z';
const fs = (n: number) => ({ time: T, availableBytes: n, capacityBytes: 2 * n, usedBytes: n + 1, inodesFree: 7, inodes: 9, inodesUsed: 2 });
const memory = (n: number) => ({ time: T, availableBytes: n, usageBytes: n + 2, workingSetBytes: n + 1, rssBytes: n + 3 });

// Every field the validator keeps, in an order of its own (the kept order is the validator's).
const full = {
  pods: [
    {
      process_stats: { process_count: 3, time: T },
      'ephemeral-storage': fs(5),
      volume: [{ ...fs(6), name: 'scratch' }, { name: 'empty' }],
      containers: [{ logs: fs(8), rootfs: fs(9), memory: memory(10), name: 'main' }, { name: 'bare' }],
      memory: memory(11),
      podRef: { uid: 'u-1', namespace: 'ns', name: 'p-1' },
      cpu: { usageNanoCores: 5 },
    },
    { podRef: { name: 'p-2', namespace: 'ns', uid: 'u-2' } },
  ],
  node: {
    rlimit: { curproc: 40, maxpid: 4_194_304, time: T },
    runtime: { containerFs: fs(12), imageFs: fs(13) },
    fs: fs(14),
    systemContainers: [{ name: 'pods', memory: memory(15) }, { name: 'kubelet' }],
    memory: memory(2 ** 53 + 2),
    nodeName: 'node-ä-1',
    network: { rxBytes: 1 },
  },
};

function kept(raw: unknown): Summary {
  const { summary, problems } = validateSummary(raw);
  expect(problems).toEqual([]);
  if (summary === null) throw new Error('not a Summary');
  return summary;
}

/** Each object's keys in order, and the values, as text: equal when the objects are the same JSON with the same key order. */
const exact = (value: unknown): string => JSON.stringify(value);

function roundTrip(batches: readonly (readonly Summary[])[]): { decoded: Summary[][]; restarts: number } {
  const encoder = new SummaryEncoder();
  const decoder = new SummaryDecoder();
  let restarts = 0;
  const decoded = batches.map((batch) => {
    for (const summary of batch) encoder.add(summary);
    const encoded = encoder.take();
    if (encoded.restart) restarts++;
    decoder.begin(encoded);
    return batch.map(() => decoder.next());
  });
  return { decoded, restarts };
}

const cases: readonly { name: string; raw: unknown }[] = [
  { name: 'every field', raw: full },
  { name: 'a node alone', raw: { node: {} } },
  { name: 'no pods key, node memory only', raw: { node: { memory: { availableBytes: 1 } } } },
  { name: 'an empty pod list', raw: { node: { nodeName: 'n' }, pods: [] } },
  { name: 'counters of zero and past 2^53', raw: { node: { fs: { availableBytes: 0, capacityBytes: 1e300 } } } },
  ...Object.keys(full.node).map((key) => ({ name: `every field but node.${key}`, raw: { ...full, node: Object.fromEntries(Object.entries(full.node).filter(([k]) => k !== key)) } })),
  ...Object.keys(full.pods[0] as object)
    .filter((key) => key !== 'podRef')
    .map((key) => ({ name: `every field but the pod's ${key}`, raw: { ...full, pods: [Object.fromEntries(Object.entries(full.pods[0] as object).filter(([k]) => k !== key))] } })),
];

describe('SummaryEncoder and SummaryDecoder', () => {
  test.each(cases)('$name', ({ raw }) => {
    const summary = kept(raw);
    const [[decoded]] = roundTrip([[summary]]).decoded as [[Summary]];
    expect(exact(decoded)).toBe(exact(summary));
    expect(decoded).toEqual(summary);
  });

  test('many Summaries in many batches, the dictionary started over between them', () => {
    // Every pod's name and UID new: the dictionary passes its limit after a few batches.
    const pods = 500;
    const batches = Array.from({ length: 4 + Math.ceil((2 * MAX_DICTIONARY_STRINGS) / (2 * pods * 3)) }, (_, b) =>
      Array.from({ length: 3 }, (_, s) => kept({ node: { nodeName: 'n', memory: memory(b) }, pods: Array.from({ length: pods }, (_, p) => ({ podRef: { name: `p-${b}-${s}-${p}`, namespace: 'ns', uid: `u-${b}-${s}-${p}` }, memory: memory(p) })) })),
    );
    const { decoded, restarts } = roundTrip(batches);
    expect(restarts).toBeGreaterThanOrEqual(1);
    expect(decoded.map((batch) => batch.map(exact))).toEqual(batches.map((batch) => batch.map(exact)));
  });
});
