// Validation of a Summary from outside, and the filesystem layout guessed from one: wrong shapes
// become problems and are dropped, never crashes; unknown fields are ignored.

import { filesystemLayoutFromSummary, fsStatsDiffer } from '../../../src/observe/filesystem-layout.js';
import { validateSummary } from '../../../src/api/summary-validation.js';

describe('validateSummary', () => {
  test('a complete summary passes unchanged, extra fields dropped', () => {
    const document = {
      node: {
        nodeName: 'n',
        startTime: 'ignored',
        cpu: { usageNanoCores: 1 },
        memory: { time: '2026-11-01T12:00:00Z', availableBytes: 1, usageBytes: 2, workingSetBytes: 3, rssBytes: 4, pageFaults: 9 },
        systemContainers: [{ name: 'pods', memory: { availableBytes: 5, workingSetBytes: 6 } }, { name: 'kubelet' }],
        fs: { time: '2026-11-01T12:00:00Z', availableBytes: 1, capacityBytes: 2, usedBytes: 3, inodesFree: 4, inodes: 5, inodesUsed: 6 },
        runtime: { imageFs: { availableBytes: 1 }, containerFs: { capacityBytes: 2 } },
        rlimit: { time: '2026-11-01T12:00:00Z', maxpid: 10, curproc: 3 },
      },
      pods: [
        {
          podRef: { name: 'a', namespace: 'ns', uid: 'u' },
          memory: { workingSetBytes: 1 },
          containers: [{ name: 'c', memory: { usageBytes: 1 }, rootfs: { usedBytes: 2 }, logs: { inodesUsed: 3 }, cpu: {} }],
          volume: [{ name: 'v', usedBytes: 1, pvcRef: { name: 'x' } }],
          'ephemeral-storage': { usedBytes: 4, inodesUsed: 5 },
          process_stats: { process_count: 7 },
        },
      ],
    };
    const { summary, problems } = validateSummary(document);
    expect(problems).toEqual([]);
    expect(summary).toEqual({
      node: {
        nodeName: 'n',
        memory: { time: '2026-11-01T12:00:00Z', availableBytes: 1, usageBytes: 2, workingSetBytes: 3, rssBytes: 4 },
        systemContainers: [{ name: 'pods', memory: { availableBytes: 5, workingSetBytes: 6 } }, { name: 'kubelet' }],
        fs: { time: '2026-11-01T12:00:00Z', availableBytes: 1, capacityBytes: 2, usedBytes: 3, inodesFree: 4, inodes: 5, inodesUsed: 6 },
        runtime: { imageFs: { availableBytes: 1 }, containerFs: { capacityBytes: 2 } },
        rlimit: { time: '2026-11-01T12:00:00Z', maxpid: 10, curproc: 3 },
      },
      pods: [
        {
          podRef: { name: 'a', namespace: 'ns', uid: 'u' },
          memory: { workingSetBytes: 1 },
          containers: [{ name: 'c', memory: { usageBytes: 1 }, rootfs: { usedBytes: 2 }, logs: { inodesUsed: 3 } }],
          volume: [{ name: 'v', usedBytes: 1 }],
          'ephemeral-storage': { usedBytes: 4, inodesUsed: 5 },
          process_stats: { process_count: 7 },
        },
      ],
    });
  });

  const cases = [
    { name: 'string-counter', doc: { node: { memory: { availableBytes: '5', usageBytes: 1 } } }, path: ['node', 'memory'], want: { usageBytes: 1 }, problem: 'node.memory.availableBytes: expected a non-negative integer, got "5"' },
    { name: 'negative-counter', doc: { node: { fs: { capacityBytes: -1 } } }, path: ['node', 'fs'], want: {}, problem: 'node.fs.capacityBytes: expected a non-negative integer, got -1' },
    { name: 'numeric-time', doc: { node: { rlimit: { time: 5, maxpid: 1 } } }, path: ['node', 'rlimit'], want: { maxpid: 1 }, problem: 'node.rlimit.time: expected an RFC 3339 timestamp, got 5' },
    { name: 'memory-not-an-object', doc: { node: { memory: [1] } }, path: ['node', 'memory'], want: undefined, problem: 'node.memory: expected an object, got [1]' },
    { name: 'system-container-without-name', doc: { node: { systemContainers: [{ memory: {} }] } }, path: ['node', 'systemContainers'], want: [], problem: 'node.systemContainers[0].name: expected a name, got undefined' },
    { name: 'pods-not-an-array', doc: { node: {}, pods: {} }, path: ['pods'], want: undefined, problem: 'pods: expected an array, got {}' },
    { name: 'pod-without-uid', doc: { node: {}, pods: [{ podRef: { name: 'a', namespace: 'b' } }] }, path: ['pods'], want: [], problem: 'pods[0].podRef: expected a name, namespace and uid, got {"name":"a","namespace":"b"}' },
    {
      name: 'container-without-name',
      doc: { node: {}, pods: [{ podRef: { name: 'a', namespace: 'b', uid: 'c' }, containers: [{}, { name: 'ok' }] }] },
      path: ['pods', '0', 'containers'],
      want: [{ name: 'ok' }],
      problem: 'pods[0].containers[0].name: expected a name, got undefined',
    },
    {
      name: 'process-count-wrong-type',
      doc: { node: {}, pods: [{ podRef: { name: 'a', namespace: 'b', uid: 'c' }, process_stats: { process_count: null, x: 1 } }] },
      path: ['pods', '0', 'process_stats'],
      want: {},
      problem: undefined,
    },
    { name: 'infinite-ruled-out', doc: { node: { memory: { usageBytes: Number.POSITIVE_INFINITY } } }, path: ['node', 'memory'], want: {}, problem: 'node.memory.usageBytes: expected a non-negative integer, got null' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const { summary, problems } = validateSummary(tc.doc);
      let value: unknown = summary;
      for (const key of tc.path) value = (value as Record<string, unknown> | undefined)?.[key];
      expect(value).toEqual(tc.want);
      expect(problems).toEqual(tc.problem === undefined ? [] : [tc.problem]);
    });
  }

  const fatal = [
    { name: 'null', doc: null },
    { name: 'array', doc: [] },
    { name: 'no-node', doc: { pods: [] } },
    { name: 'node-not-an-object', doc: { node: 'x' } },
  ];
  for (const tc of fatal) {
    test(`not a summary: ${tc.name}`, () => {
      const { summary, problems } = validateSummary(tc.doc);
      expect(summary).toBeNull();
      expect(problems[0]).toMatch(/^summary: expected an object with a node object/);
    });
  }
});

describe('filesystem layout from a summary', () => {
  const fs = { capacityBytes: 100_000, availableBytes: 50_000, inodes: 1000 };
  const diffCases = [
    { name: 'identical', b: { ...fs }, want: false },
    { name: 'available-within-1-percent', b: { ...fs, availableBytes: 50_999 }, want: false },
    { name: 'available-beyond-1-percent', b: { ...fs, availableBytes: 51_001 }, want: true },
    { name: 'capacity-differs', b: { ...fs, capacityBytes: 100_001 }, want: true },
    { name: 'inodes-differ', b: { ...fs, inodes: 999 }, want: true },
  ];
  for (const tc of diffCases) test(`fsStatsDiffer ${tc.name}`, () => expect(fsStatsDiffer(fs, tc.b)).toBe(tc.want));

  const other = { capacityBytes: 200_000, availableBytes: 1, inodes: 5 };
  const third = { capacityBytes: 300_000, availableBytes: 1, inodes: 5 };
  const layoutCases = [
    { name: 'no-imagefs', node: { fs }, want: { dedicatedImageFs: false, splitContainerFs: false } },
    { name: 'imagefs-same-as-nodefs', node: { fs, runtime: { imageFs: fs, containerFs: fs } }, want: { dedicatedImageFs: false, splitContainerFs: false } },
    { name: 'dedicated-imagefs', node: { fs, runtime: { imageFs: other, containerFs: other } }, want: { dedicatedImageFs: true, splitContainerFs: false } },
    { name: 'dedicated-and-split', node: { fs, runtime: { imageFs: other, containerFs: fs } }, want: { dedicatedImageFs: true, splitContainerFs: true } },
    { name: 'split-on-a-third-fs', node: { fs, runtime: { imageFs: other, containerFs: third } }, want: { dedicatedImageFs: true, splitContainerFs: true } },
    { name: 'dedicated-without-containerfs', node: { fs, runtime: { imageFs: other } }, want: { dedicatedImageFs: true, splitContainerFs: false } },
  ];
  for (const tc of layoutCases) test(tc.name, () => expect(filesystemLayoutFromSummary(tc.node)).toEqual(tc.want));
});
