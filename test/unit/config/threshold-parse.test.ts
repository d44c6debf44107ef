// parseThresholdConfig against the kubelet's TestParseThresholdConfig and TestAddAllocatableThresholds
// cases, the behaviours of §2.3-2.5 of the reference, the deterministic output order, and the
// deliberate difference: every problem is reported, each with its field path and raw value.

import { formatQuantity, parseQuantity } from '../../../src/api/quantity.js';
import { getThresholdQuantity, percentageRatio, type Threshold, type ThresholdValue } from '../../../src/api/threshold.js';
import { addAllocatableThresholds, parseThresholdConfig, type ThresholdConfigInput } from '../../../src/config/threshold-parse.js';

const q = (text: string): ThresholdValue => ({ kind: 'quantity', quantity: parseQuantity(text) });
const pct = (percent: number): ThresholdValue => ({ kind: 'percentage', ratio: percentageRatio(percent) });
const GRACE_30S_MS = 30_000;

function quantityError(text: string): string {
  try {
    parseQuantity(text);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`${text} parsed`);
}

type Input = Partial<ThresholdConfigInput>;

function parse(input: Input): ReturnType<typeof parseThresholdConfig> {
  return parseThresholdConfig({
    enforceNodeAllocatable: [],
    evictionHard: {},
    evictionSoft: {},
    evictionSoftGracePeriod: {},
    evictionMinimumReclaim: {},
    ...input,
  });
}

interface OkCase {
  readonly name: string;
  readonly input: Input;
  readonly thresholds: readonly Threshold[];
}

// Successful parses: the thresholds, in the documented order, and no problem.
const okCases: OkCase[] = [
  { name: 'no-values', input: {}, thresholds: [] },
  {
    name: 'all-memory-eviction-values',
    input: {
      enforceNodeAllocatable: ['pods'],
      evictionHard: { 'memory.available': '150Mi' },
      evictionSoft: { 'memory.available': '300Mi' },
      evictionSoftGracePeriod: { 'memory.available': '30s' },
      evictionMinimumReclaim: { 'memory.available': '0' },
    },
    thresholds: [
      { signal: 'memory.available', value: q('150Mi'), gracePeriodMs: 0, minReclaim: q('0') },
      { signal: 'memory.available', value: q('300Mi'), gracePeriodMs: GRACE_30S_MS, minReclaim: q('0') },
      { signal: 'allocatableMemory.available', value: q('150Mi'), gracePeriodMs: 0, minReclaim: q('0') },
    ],
  },
  {
    name: 'all-memory-eviction-values-in-percentages',
    input: {
      evictionHard: { 'memory.available': '10%' },
      evictionSoft: { 'memory.available': '30%' },
      evictionSoftGracePeriod: { 'memory.available': '30s' },
      evictionMinimumReclaim: { 'memory.available': '5%' },
    },
    thresholds: [
      { signal: 'memory.available', value: pct(10), gracePeriodMs: 0, minReclaim: pct(5) },
      { signal: 'memory.available', value: pct(30), gracePeriodMs: GRACE_30S_MS, minReclaim: pct(5) },
    ],
  },
  {
    name: 'all-memcg-threshold-signals',
    input: {
      evictionHard: { 'memory.available': '100Mi', 'allocatableMemory.available': '200Mi' },
      evictionSoft: { 'allocatableMemory.available': '400Mi', 'memory.available': '300Mi' },
      evictionSoftGracePeriod: { 'memory.available': '1m', 'allocatableMemory.available': '2m' },
    },
    thresholds: [
      { signal: 'memory.available', value: q('100Mi'), gracePeriodMs: 0, minReclaim: null },
      { signal: 'allocatableMemory.available', value: q('200Mi'), gracePeriodMs: 0, minReclaim: null },
      { signal: 'memory.available', value: q('300Mi'), gracePeriodMs: 60_000, minReclaim: null },
      { signal: 'allocatableMemory.available', value: q('400Mi'), gracePeriodMs: 120_000, minReclaim: null },
    ],
  },
  {
    name: 'disk-eviction-values',
    input: {
      evictionHard: { 'imagefs.available': '150Mi', 'nodefs.available': '100Mi' },
      evictionSoft: { 'imagefs.available': '300Mi', 'nodefs.available': '200Mi' },
      evictionSoftGracePeriod: { 'imagefs.available': '30s', 'nodefs.available': '30s' },
      evictionMinimumReclaim: { 'imagefs.available': '2Gi', 'nodefs.available': '1Gi' },
    },
    thresholds: [
      { signal: 'nodefs.available', value: q('100Mi'), gracePeriodMs: 0, minReclaim: q('1Gi') },
      { signal: 'imagefs.available', value: q('150Mi'), gracePeriodMs: 0, minReclaim: q('2Gi') },
      { signal: 'nodefs.available', value: q('200Mi'), gracePeriodMs: GRACE_30S_MS, minReclaim: q('1Gi') },
      { signal: 'imagefs.available', value: q('300Mi'), gracePeriodMs: GRACE_30S_MS, minReclaim: q('2Gi') },
    ],
  },
  {
    name: 'disk-eviction-values-in-percentages',
    input: {
      evictionHard: { 'imagefs.available': '15%', 'nodefs.available': '10.5%' },
      evictionSoft: { 'imagefs.available': '30%', 'nodefs.available': '20.5%' },
      evictionSoftGracePeriod: { 'imagefs.available': '30s', 'nodefs.available': '30s' },
      evictionMinimumReclaim: { 'imagefs.available': '10%', 'nodefs.available': '5%' },
    },
    thresholds: [
      { signal: 'nodefs.available', value: pct(10.5), gracePeriodMs: 0, minReclaim: pct(5) },
      { signal: 'imagefs.available', value: pct(15), gracePeriodMs: 0, minReclaim: pct(10) },
      { signal: 'nodefs.available', value: pct(20.5), gracePeriodMs: GRACE_30S_MS, minReclaim: pct(5) },
      { signal: 'imagefs.available', value: pct(30), gracePeriodMs: GRACE_30S_MS, minReclaim: pct(10) },
    ],
  },
  {
    name: 'inode-eviction-values',
    input: {
      evictionHard: { 'imagefs.inodesFree': '150Mi', 'nodefs.inodesFree': '100Mi' },
      evictionSoft: { 'imagefs.inodesFree': '300Mi', 'nodefs.inodesFree': '200Mi' },
      evictionSoftGracePeriod: { 'imagefs.inodesFree': '30s', 'nodefs.inodesFree': '30s' },
      evictionMinimumReclaim: { 'imagefs.inodesFree': '2Gi', 'nodefs.inodesFree': '1Gi' },
    },
    thresholds: [
      { signal: 'nodefs.inodesFree', value: q('100Mi'), gracePeriodMs: 0, minReclaim: q('1Gi') },
      { signal: 'imagefs.inodesFree', value: q('150Mi'), gracePeriodMs: 0, minReclaim: q('2Gi') },
      { signal: 'nodefs.inodesFree', value: q('200Mi'), gracePeriodMs: GRACE_30S_MS, minReclaim: q('1Gi') },
      { signal: 'imagefs.inodesFree', value: q('300Mi'), gracePeriodMs: GRACE_30S_MS, minReclaim: q('2Gi') },
    ],
  },
  {
    name: 'all-nine-signals-in-signals-order',
    input: {
      // Written in reverse: the output follows src/api/signals.ts, not the file.
      evictionHard: {
        'pid.available': '1k',
        'containerfs.inodesFree': '5%',
        'containerfs.available': '10%',
        'imagefs.inodesFree': '5%',
        'imagefs.available': '15%',
        'nodefs.inodesFree': '5%',
        'nodefs.available': '10%',
        'allocatableMemory.available': '50Mi',
        'memory.available': '100Mi',
      },
    },
    thresholds: [
      { signal: 'memory.available', value: q('100Mi'), gracePeriodMs: 0, minReclaim: null },
      { signal: 'allocatableMemory.available', value: q('50Mi'), gracePeriodMs: 0, minReclaim: null },
      { signal: 'nodefs.available', value: pct(10), gracePeriodMs: 0, minReclaim: null },
      { signal: 'nodefs.inodesFree', value: pct(5), gracePeriodMs: 0, minReclaim: null },
      { signal: 'imagefs.available', value: pct(15), gracePeriodMs: 0, minReclaim: null },
      { signal: 'imagefs.inodesFree', value: pct(5), gracePeriodMs: 0, minReclaim: null },
      { signal: 'containerfs.available', value: pct(10), gracePeriodMs: 0, minReclaim: null },
      { signal: 'containerfs.inodesFree', value: pct(5), gracePeriodMs: 0, minReclaim: null },
      { signal: 'pid.available', value: q('1k'), gracePeriodMs: 0, minReclaim: null },
    ],
  },
  {
    name: 'zero-percent-disables',
    // A soft 0% is dropped before the grace-period check, so it needs none.
    input: { evictionHard: { 'memory.available': '0%' }, evictionSoft: { 'memory.available': '0%' } },
    thresholds: [],
  },
  {
    name: 'hundred-percent-disables',
    input: { evictionHard: { 'memory.available': '100%' }, evictionSoft: { 'memory.available': '100%' } },
    thresholds: [],
  },
  {
    name: 'zero-percent-disables-only-its-signal',
    input: { enforceNodeAllocatable: ['pods'], evictionHard: { 'memory.available': '0%', 'nodefs.available': '10%' } },
    thresholds: [{ signal: 'nodefs.available', value: pct(10), gracePeriodMs: 0, minReclaim: null }],
  },
  {
    name: 'fractional-percent',
    // "0.0%" is not the literal "0%": it parses to a threshold of 0 that can never be met.
    input: { evictionHard: { 'memory.available': '0.0%', 'nodefs.available': '10.5%', 'pid.available': '100.0%' } },
    thresholds: [
      { signal: 'memory.available', value: pct(0), gracePeriodMs: 0, minReclaim: null },
      { signal: 'nodefs.available', value: pct(10.5), gracePeriodMs: 0, minReclaim: null },
      { signal: 'pid.available', value: pct(100), gracePeriodMs: 0, minReclaim: null },
    ],
  },
  {
    name: 'percent-signs-trimmed-like-trimright',
    input: { evictionHard: { 'nodefs.available': '10%%' } },
    thresholds: [{ signal: 'nodefs.available', value: pct(10), gracePeriodMs: 0, minReclaim: null }],
  },
  {
    name: 'zero-quantity-reclaim-ok',
    input: { evictionHard: { 'memory.available': '1Gi' }, evictionMinimumReclaim: { 'memory.available': '0' } },
    thresholds: [{ signal: 'memory.available', value: q('1Gi'), gracePeriodMs: 0, minReclaim: q('0') }],
  },
  {
    name: 'reclaim-over-100-percent-accepted',
    // Upstream checks only that a percentage reclaim is positive.
    input: { evictionHard: { 'nodefs.available': '10%' }, evictionMinimumReclaim: { 'nodefs.available': '150%' } },
    thresholds: [{ signal: 'nodefs.available', value: pct(10), gracePeriodMs: 0, minReclaim: pct(150) }],
  },
  {
    name: 'reclaim-applies-to-hard-and-soft',
    input: {
      evictionHard: { 'nodefs.available': '1Gi' },
      evictionSoft: { 'nodefs.available': '2Gi' },
      evictionSoftGracePeriod: { 'nodefs.available': '1m30s' },
      evictionMinimumReclaim: { 'nodefs.available': '500Mi' },
    },
    thresholds: [
      { signal: 'nodefs.available', value: q('1Gi'), gracePeriodMs: 0, minReclaim: q('500Mi') },
      { signal: 'nodefs.available', value: q('2Gi'), gracePeriodMs: 90_000, minReclaim: q('500Mi') },
    ],
  },
  {
    name: 'grace-period-without-soft-ignored',
    input: { evictionHard: { 'memory.available': '100Mi' }, evictionSoftGracePeriod: { 'nodefs.available': '1m' } },
    thresholds: [{ signal: 'memory.available', value: q('100Mi'), gracePeriodMs: 0, minReclaim: null }],
  },
  {
    name: 'reclaim-without-threshold-ignored',
    input: { evictionHard: { 'memory.available': '100Mi' }, evictionMinimumReclaim: { 'pid.available': '100' } },
    thresholds: [{ signal: 'memory.available', value: q('100Mi'), gracePeriodMs: 0, minReclaim: null }],
  },
  {
    name: 'soft-zero-grace-period-accepted',
    // 0s is a valid grace period; the threshold is then hard in all but name.
    input: { evictionSoft: { 'nodefs.available': '1Gi' }, evictionSoftGracePeriod: { 'nodefs.available': '0s' } },
    thresholds: [{ signal: 'nodefs.available', value: q('1Gi'), gracePeriodMs: 0, minReclaim: null }],
  },
  {
    name: 'allocatable-copies-for-two-hard-memory-thresholds',
    // The soft one has a 0s grace period, so isHardEvictionThreshold holds for it too.
    input: {
      enforceNodeAllocatable: ['pods'],
      evictionHard: { 'memory.available': '100Mi' },
      evictionSoft: { 'memory.available': '200Mi' },
      evictionSoftGracePeriod: { 'memory.available': '0s' },
      evictionMinimumReclaim: { 'memory.available': '50Mi' },
    },
    thresholds: [
      { signal: 'memory.available', value: q('100Mi'), gracePeriodMs: 0, minReclaim: q('50Mi') },
      { signal: 'memory.available', value: q('200Mi'), gracePeriodMs: 0, minReclaim: q('50Mi') },
      { signal: 'allocatableMemory.available', value: q('100Mi'), gracePeriodMs: 0, minReclaim: q('50Mi') },
      { signal: 'allocatableMemory.available', value: q('200Mi'), gracePeriodMs: 0, minReclaim: q('50Mi') },
    ],
  },
  {
    name: 'no-allocatable-copy-for-soft',
    input: {
      enforceNodeAllocatable: ['pods'],
      evictionSoft: { 'memory.available': '200Mi' },
      evictionSoftGracePeriod: { 'memory.available': '30s' },
    },
    thresholds: [{ signal: 'memory.available', value: q('200Mi'), gracePeriodMs: GRACE_30S_MS, minReclaim: null }],
  },
  {
    name: 'allocatable-copy-of-a-percentage',
    input: { enforceNodeAllocatable: ['system-reserved', 'pods'], evictionHard: { 'memory.available': '5%' } },
    thresholds: [
      { signal: 'memory.available', value: pct(5), gracePeriodMs: 0, minReclaim: null },
      { signal: 'allocatableMemory.available', value: pct(5), gracePeriodMs: 0, minReclaim: null },
    ],
  },
  {
    name: 'allocatable-copy-next-to-an-explicit-allocatable-threshold',
    input: {
      enforceNodeAllocatable: ['pods'],
      evictionHard: { 'allocatableMemory.available': '300Mi', 'memory.available': '100Mi' },
      evictionMinimumReclaim: { 'allocatableMemory.available': '10Mi' },
    },
    // The copy carries memory.available's minimum reclaim (none), not allocatableMemory.available's.
    thresholds: [
      { signal: 'memory.available', value: q('100Mi'), gracePeriodMs: 0, minReclaim: null },
      { signal: 'allocatableMemory.available', value: q('300Mi'), gracePeriodMs: 0, minReclaim: q('10Mi') },
      { signal: 'allocatableMemory.available', value: q('100Mi'), gracePeriodMs: 0, minReclaim: null },
    ],
  },
  {
    name: 'enforceNodeAllocatable-empty',
    input: { enforceNodeAllocatable: [], evictionHard: { 'memory.available': '100Mi' } },
    thresholds: [{ signal: 'memory.available', value: q('100Mi'), gracePeriodMs: 0, minReclaim: null }],
  },
  {
    name: 'enforceNodeAllocatable-without-pods',
    input: { enforceNodeAllocatable: ['system-reserved', 'kube-reserved'], evictionHard: { 'memory.available': '100Mi' } },
    thresholds: [{ signal: 'memory.available', value: q('100Mi'), gracePeriodMs: 0, minReclaim: null }],
  },
  {
    name: 'decimal-and-exponent-quantities',
    input: { evictionHard: { 'memory.available': '1.5Gi', 'pid.available': '1e3', 'nodefs.inodesFree': '10k' } },
    thresholds: [
      { signal: 'memory.available', value: q('1536Mi'), gracePeriodMs: 0, minReclaim: null },
      { signal: 'nodefs.inodesFree', value: q('10k'), gracePeriodMs: 0, minReclaim: null },
      { signal: 'pid.available', value: q('1e3'), gracePeriodMs: 0, minReclaim: null },
    ],
  },
];

describe('parseThresholdConfig: accepted configurations', () => {
  for (const tc of okCases) {
    test(tc.name, () => {
      const result = parse(tc.input);
      expect(result.problems).toEqual([]);
      expect(result.thresholds).toEqual(tc.thresholds);
      expect(result.sources).toHaveLength(result.thresholds.length);
    });
  }
});

interface ProblemCase {
  readonly name: string;
  readonly input: Input;
  readonly problems: readonly { field: string; value: unknown; message: string }[];
}

// Rejected configurations: every problem, with its field path, raw value and the kubelet's wording.
const problemCases: ProblemCase[] = [
  {
    name: 'invalid-signal',
    input: { evictionHard: { 'mem.available': '150Mi' } },
    problems: [{ field: 'evictionHard["mem.available"]', value: '150Mi', message: 'unsupported eviction signal mem.available' }],
  },
  {
    name: 'valid-and-invalid-signal',
    input: { evictionHard: { 'memory.available': '150Mi', 'invalid.foo': '150Mi' } },
    problems: [{ field: 'evictionHard["invalid.foo"]', value: '150Mi', message: 'unsupported eviction signal invalid.foo' }],
  },
  {
    name: 'hard-signal-negative',
    input: { evictionHard: { 'memory.available': '-150Mi' } },
    problems: [{ field: 'evictionHard["memory.available"]', value: '-150Mi', message: 'eviction threshold memory.available must be positive: -150Mi' }],
  },
  {
    name: 'neg-threshold-percent',
    input: { evictionHard: { 'memory.available': '-5%' } },
    problems: [{ field: 'evictionHard["memory.available"]', value: '-5%', message: 'eviction percentage threshold memory.available must be >= 0%: -5%' }],
  },
  {
    name: 'over-100-percent',
    input: { evictionHard: { 'memory.available': '150%' } },
    problems: [{ field: 'evictionHard["memory.available"]', value: '150%', message: 'eviction percentage threshold memory.available must be <= 100%: 150%' }],
  },
  {
    name: 'infinite-percent',
    input: { evictionHard: { 'nodefs.available': 'inf%' } },
    problems: [{ field: 'evictionHard["nodefs.available"]', value: 'inf%', message: 'eviction percentage threshold nodefs.available must be <= 100%: inf%' }],
  },
  {
    name: 'nan-percent-refused',
    // Upstream accepts it (NaN passes both comparisons); refused here, see docs/configuration.md.
    input: { evictionHard: { 'nodefs.available': 'NaN%' } },
    problems: [{ field: 'evictionHard["nodefs.available"]', value: 'NaN%', message: 'eviction percentage threshold nodefs.available must be a number: NaN%' }],
  },
  {
    name: 'zero-quantity',
    input: { evictionHard: { 'memory.available': '0' } },
    problems: [{ field: 'evictionHard["memory.available"]', value: '0', message: 'eviction threshold memory.available must be positive: 0' }],
  },
  {
    name: 'zero-quantity-with-suffix',
    input: { evictionHard: { 'memory.available': '0Mi' } },
    problems: [{ field: 'evictionHard["memory.available"]', value: '0Mi', message: 'eviction threshold memory.available must be positive: 0' }],
  },
  {
    name: 'percent-not-a-number',
    input: { evictionHard: { 'nodefs.available': 'foo%' } },
    problems: [{ field: 'evictionHard["nodefs.available"]', value: 'foo%', message: 'strconv.ParseFloat: parsing "foo": invalid syntax' }],
  },
  {
    name: 'percent-sign-inside',
    // Does not end in %, so it is parsed as a quantity; the quantity parser's own message is passed on.
    input: { evictionHard: { 'nodefs.available': '12%345' } },
    problems: [{ field: 'evictionHard["nodefs.available"]', value: '12%345', message: quantityError('12%345') }],
  },
  {
    name: 'bad-quantity-suffix',
    input: { evictionHard: { 'memory.available': '100MB' } },
    problems: [{ field: 'evictionHard["memory.available"]', value: '100MB', message: quantityError('100MB') }],
  },
  {
    name: 'soft-signal-negative',
    input: { evictionSoft: { 'memory.available': '-150Mi' }, evictionSoftGracePeriod: { 'memory.available': '30s' } },
    problems: [{ field: 'evictionSoft["memory.available"]', value: '-150Mi', message: 'eviction threshold memory.available must be positive: -150Mi' }],
  },
  {
    name: 'soft-no-grace-period',
    input: { evictionSoft: { 'memory.available': '150Mi' } },
    problems: [{ field: 'evictionSoft["memory.available"]', value: '150Mi', message: 'grace period must be specified for the soft eviction threshold memory.available' }],
  },
  {
    name: 'soft-negative-grace-period',
    // Reported once, as the bad grace period, not again as a missing one.
    input: { evictionSoft: { 'memory.available': '150Mi' }, evictionSoftGracePeriod: { 'memory.available': '-30s' } },
    problems: [{ field: 'evictionSoftGracePeriod["memory.available"]', value: '-30s', message: 'invalid eviction grace period specified: -30s, must be a positive value' }],
  },
  {
    name: 'grace-period-without-unit',
    input: { evictionSoft: { 'memory.available': '150Mi' }, evictionSoftGracePeriod: { 'memory.available': '30' } },
    problems: [{ field: 'evictionSoftGracePeriod["memory.available"]', value: '30', message: 'time: missing unit in duration "30"' }],
  },
  {
    name: 'grace-period-invalid-signal',
    input: { evictionSoftGracePeriod: { 'memory.availble': '30s' } },
    problems: [{ field: 'evictionSoftGracePeriod["memory.availble"]', value: '30s', message: 'unsupported eviction signal memory.availble' }],
  },
  {
    name: 'neg-reclaim',
    input: { evictionMinimumReclaim: { 'memory.available': '-300Mi' } },
    problems: [{ field: 'evictionMinimumReclaim["memory.available"]', value: '-300Mi', message: 'negative eviction minimum reclaim specified for memory.available' }],
  },
  {
    name: 'zero-percent-reclaim-error',
    input: { evictionHard: { 'memory.available': '10%' }, evictionMinimumReclaim: { 'memory.available': '0%' } },
    problems: [{ field: 'evictionMinimumReclaim["memory.available"]', value: '0%', message: 'eviction percentage minimum reclaim memory.available must be positive: 0%' }],
  },
  {
    name: 'negative-percent-reclaim',
    input: { evictionMinimumReclaim: { 'nodefs.available': '-1%' } },
    problems: [{ field: 'evictionMinimumReclaim["nodefs.available"]', value: '-1%', message: 'eviction percentage minimum reclaim nodefs.available must be positive: -1%' }],
  },
  {
    name: 'reclaim-invalid-signal',
    input: { evictionMinimumReclaim: { 'disk.available': '1Gi' } },
    problems: [{ field: 'evictionMinimumReclaim["disk.available"]', value: '1Gi', message: 'unsupported eviction signal disk.available' }],
  },
  {
    name: 'every-problem-collected',
    // The kubelet stops at the first; here all five are reported, in field order.
    input: {
      evictionHard: { 'mem.available': '100Mi', 'nodefs.available': '-5%' },
      evictionSoft: { 'memory.available': '1Gi', 'pid.available': '0' },
      evictionSoftGracePeriod: { 'pid.available': '1d' },
      evictionMinimumReclaim: { 'memory.available': '0%' },
    },
    problems: [
      { field: 'evictionHard["mem.available"]', value: '100Mi', message: 'unsupported eviction signal mem.available' },
      { field: 'evictionHard["nodefs.available"]', value: '-5%', message: 'eviction percentage threshold nodefs.available must be >= 0%: -5%' },
      { field: 'evictionSoft["pid.available"]', value: '0', message: 'eviction threshold pid.available must be positive: 0' },
      { field: 'evictionSoftGracePeriod["pid.available"]', value: '1d', message: 'time: unknown unit "d" in duration "1d"' },
      { field: 'evictionMinimumReclaim["memory.available"]', value: '0%', message: 'eviction percentage minimum reclaim memory.available must be positive: 0%' },
      { field: 'evictionSoft["memory.available"]', value: '1Gi', message: 'grace period must be specified for the soft eviction threshold memory.available' },
    ],
  },
];

describe('parseThresholdConfig: rejected configurations', () => {
  for (const tc of problemCases) {
    test(tc.name, () => {
      expect(parse(tc.input).problems).toEqual(tc.problems);
    });
  }
});

describe('parseThresholdConfig: ignored entries are warned about', () => {
  test('grace-period-without-soft-ignored', () => {
    const result = parse({ evictionSoftGracePeriod: { 'nodefs.available': '1m' } });
    expect(result.warnings).toEqual([{ field: 'evictionSoftGracePeriod["nodefs.available"]', value: '1m', message: 'ignored: there is no soft threshold for nodefs.available' }]);
  });
  test('reclaim-without-threshold-ignored', () => {
    const result = parse({ evictionMinimumReclaim: { 'pid.available': '100' } });
    expect(result.warnings).toEqual([{ field: 'evictionMinimumReclaim["pid.available"]', value: '100', message: 'ignored: there is no threshold for pid.available' }]);
  });
  test('reclaim-for-a-disabled-threshold-ignored', () => {
    const result = parse({ evictionHard: { 'nodefs.available': '0%' }, evictionMinimumReclaim: { 'nodefs.available': '1Gi' } });
    expect(result.thresholds).toEqual([]);
    expect(result.warnings.map((w) => w.field)).toEqual(['evictionMinimumReclaim["nodefs.available"]']);
  });
  test('a used grace period and reclaim raise no warning', () => {
    const result = parse({
      evictionSoft: { 'nodefs.available': '2Gi' },
      evictionSoftGracePeriod: { 'nodefs.available': '1m' },
      evictionMinimumReclaim: { 'nodefs.available': '1Gi' },
    });
    expect(result.warnings).toEqual([]);
  });
});

describe('parseThresholdConfig: sources', () => {
  test('each threshold records its origin, its field and the values as written', () => {
    const result = parse({
      enforceNodeAllocatable: ['pods'],
      evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%' },
      evictionSoft: { 'nodefs.available': '15%' },
      evictionSoftGracePeriod: { 'nodefs.available': '1m30s' },
      evictionMinimumReclaim: { 'memory.available': '50Mi' },
      defaultedHardSignals: new Set(['nodefs.available']),
      mergedHardSignals: new Set(['nodefs.available']),
    });
    expect(result.sources).toEqual([
      { origin: 'user', field: 'evictionHard["memory.available"]', rawValue: '100Mi', rawGracePeriod: null, rawMinReclaim: '50Mi', merged: false },
      { origin: 'default', field: 'evictionHard["nodefs.available"]', rawValue: '10%', rawGracePeriod: null, rawMinReclaim: null, merged: true },
      { origin: 'user', field: 'evictionSoft["nodefs.available"]', rawValue: '15%', rawGracePeriod: '1m30s', rawMinReclaim: null, merged: false },
      { origin: 'allocatable-copy', field: 'evictionHard["memory.available"]', rawValue: '100Mi', rawGracePeriod: null, rawMinReclaim: '50Mi', merged: false },
    ]);
  });
});

describe('percentages are float32, bit for bit', () => {
  const GI = 1n << 30n;
  const cases: { name: string; percent: string; capacityBytes: bigint; bytes: bigint }[] = [
    // 10% is 0.100000001490116... in float32, so 10% of 100Gi is 160 bytes more than a tenth.
    { name: 'ten-percent-of-100Gi', percent: '10%', capacityBytes: 100n * GI, bytes: 10737418400n },
    { name: 'fifteen-percent-of-100Gi', percent: '15%', capacityBytes: 100n * GI, bytes: BigInt(Math.trunc(Number(100n * GI) * Math.fround(Math.fround(15) / 100))) },
    { name: 'five-percent-of-1M-inodes', percent: '5%', capacityBytes: 1_000_000n, bytes: 50000n },
    { name: 'fractional-percent-of-16Gi', percent: '10.5%', capacityBytes: 16n * GI, bytes: BigInt(Math.trunc(Number(16n * GI) * Math.fround(Math.fround(10.5) / 100))) },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const [threshold] = parse({ evictionHard: { 'nodefs.available': tc.percent } }).thresholds;
      const bytes = getThresholdQuantity((threshold as Threshold).value, tc.capacityBytes);
      expect(bytes.nanos / 1_000_000_000n).toBe(tc.bytes);
    });
  }
  test('ten percent prints as plain bytes, not Gi', () => {
    const [threshold] = parse({ evictionHard: { 'nodefs.available': '10%' } }).thresholds;
    expect(formatQuantity(getThresholdQuantity((threshold as Threshold).value, 100n << 30n))).toBe('10737418400');
  });
  test('the ratio is the float32 of the float32 percentage divided by 100', () => {
    const [threshold] = parse({ evictionHard: { 'nodefs.available': '10%' } }).thresholds;
    expect((threshold as Threshold).value).toEqual({ kind: 'percentage', ratio: Math.fround(Math.fround(10) / 100) });
    expect(((threshold as Threshold).value as { ratio: number }).ratio).not.toBe(0.1);
  });
});

describe('addAllocatableThresholds (kubelet TestAddAllocatableThresholds)', () => {
  const hardMemory: Threshold = { signal: 'memory.available', value: q('150Mi'), gracePeriodMs: 0, minReclaim: q('0') };
  const cases: { name: string; thresholds: Threshold[]; expected: Threshold[] }[] = [
    {
      name: 'non-memory-signal',
      thresholds: [{ signal: 'imagefs.available', value: q('150Mi'), gracePeriodMs: 0, minReclaim: q('0') }],
      expected: [{ signal: 'imagefs.available', value: q('150Mi'), gracePeriodMs: 0, minReclaim: q('0') }],
    },
    {
      name: 'memory-signal-with-grace',
      thresholds: [{ ...hardMemory, gracePeriodMs: 10 }],
      expected: [{ ...hardMemory, gracePeriodMs: 10 }],
    },
    {
      name: 'memory-signal-without-grace',
      thresholds: [hardMemory],
      expected: [hardMemory, { ...hardMemory, signal: 'allocatableMemory.available' }],
    },
    {
      name: 'memory-signal-without-grace-two-thresholds',
      thresholds: [hardMemory, { ...hardMemory, value: q('300Mi') }],
      expected: [
        hardMemory,
        { ...hardMemory, value: q('300Mi') },
        { ...hardMemory, signal: 'allocatableMemory.available' },
        { ...hardMemory, signal: 'allocatableMemory.available', value: q('300Mi') },
      ],
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const input = [...tc.thresholds];
      expect(addAllocatableThresholds(input)).toEqual(tc.expected);
      expect(input).toEqual(tc.thresholds);
    });
  }
});
