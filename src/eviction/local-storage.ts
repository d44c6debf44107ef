// Local ephemeral-storage limit enforcement (kubelet `localStorageEviction`): a pod whose emptyDir
// outgrows its sizeLimit, whose total ephemeral usage outgrows its containers' limits, or one of
// whose containers outgrows its own limit is evicted at once, every violator in the same pass,
// before and independently of threshold pressure.

import type { Pod } from '../api/pod.js';
import { compareQuantity, formatQuantity, quantityFromInteger, quantityValue, type Quantity } from '../api/quantity.js';
import type { PodStats } from '../api/summary.js';
import { isCriticalPod } from './critical.js';
import { IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS } from './grace-period.js';
import { optionalQuantity, podLimitQuantity, resourceQuantity } from './pod-resources.js';
import type { StatsFunc } from './ranking.js';
import type { Eviction } from './types.js';

/** The kubelet's metric label for each check, in the order the checks run. */
export type LocalStorageLimit = 'emptydirfs.limit' | 'ephemeralpodfs.limit' | 'ephemeralcontainerfs.limit';

/** A pod over one of its local-storage limits, with the kubelet's message for it. */
export interface LocalStorageViolation {
  readonly pod: Pod;
  readonly limit: LocalStorageLimit;
  readonly message: string;
  /** Critical pods are reported but never evicted (the kubelet logs "cannot evict a critical pod"). */
  readonly critical: boolean;
}

const CONTROL_ESCAPES: Readonly<Record<string, string>> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
  '"': '\\"',
};

/**
 * Go's `%q` for the strings these messages quote: double quotes, backslash escapes for quotes,
 * backslashes and ASCII control characters. Other characters are kept as they are; Go would also
 * escape non-printable Unicode, which cannot occur here (volume names are DNS labels, canonical
 * quantities are ASCII).
 */
export function goQuote(value: string): string {
  let quoted = '"';
  for (const ch of value) {
    const escape = CONTROL_ESCAPES[ch];
    const code = ch.codePointAt(0) ?? 0;
    if (escape !== undefined) quoted += escape;
    else if (code < 0x20 || code === 0x7f) quoted += `\\x${code.toString(16).padStart(2, '0')}`;
    else quoted += ch;
  }
  return `${quoted}"`;
}

function bytes(value: number | undefined): bigint {
  return value === undefined || value === null ? 0n : BigInt(Math.trunc(value));
}

// The limits a pod's checks compare against depend on its spec alone: found once per Pod object
// (the engine's pods are replaced, never edited, when they change), so a pass over pods with no
// local-storage limit (most of them) costs a lookup each.
interface PodStorageLimits {
  /** Disk and memory emptyDirs with a positive sizeLimit, in spec order. */
  readonly emptyDirs: readonly { readonly name: string; readonly size: Quantity; readonly memoryMedium: boolean }[];
  /** App containers with a non-zero ephemeral-storage limit, by name. */
  readonly containers: ReadonlyMap<string, Quantity>;
  /** The pod's ephemeral-storage limit; null when no container sets one. */
  readonly pod: Quantity | null;
  /** None of the three: no check can find a violation. */
  readonly none: boolean;
}

const limitsByPod = new WeakMap<Pod, PodStorageLimits>();

function storageLimitsOf(podObject: Pod): PodStorageLimits {
  let limits = limitsByPod.get(podObject);
  if (limits === undefined) {
    const emptyDirs: { name: string; size: Quantity; memoryMedium: boolean }[] = [];
    for (const volume of podObject.spec.volumes ?? []) {
      const emptyDir = volume.emptyDir;
      if (emptyDir === undefined || emptyDir === null) continue;
      const size = optionalQuantity(emptyDir.sizeLimit);
      if (size !== undefined && size.nanos > 0n) emptyDirs.push({ name: volume.name, size, memoryMedium: emptyDir.medium === 'Memory' });
    }
    const containers = new Map<string, Quantity>();
    for (const container of podObject.spec.containers ?? []) {
      const limit = resourceQuantity(container.resources?.limits, 'ephemeral-storage');
      if (limit !== undefined && quantityValue(limit) !== 0n) containers.set(container.name, limit);
    }
    const pod = podLimitQuantity(podObject, 'ephemeral-storage');
    limits = { emptyDirs, containers, pod, none: emptyDirs.length === 0 && containers.size === 0 && pod === null };
    limitsByPod.set(podObject, limits);
  }
  return limits;
}

/**
 * `emptyDirLimitEviction`: the first emptyDir in spec order with a positive sizeLimit whose volume
 * stat is strictly above it. Memory-medium emptyDirs count too when they have a stat, unless the
 * InPlacePodVerticalScalingMemoryBackedVolumes gate is on (`memoryBackedVolumes`): the kernel then
 * enforces their tmpfs size and the kubelet leaves them alone.
 */
export function emptyDirLimitViolation(podStats: PodStats, pod: Pod, _dedicatedImageFs = false, memoryBackedVolumes = false): string | null {
  const { emptyDirs } = storageLimitsOf(pod);
  if (emptyDirs.length === 0) return null;
  const podVolumeUsedBytes = new Map<string, bigint>();
  for (const volume of podStats.volume ?? []) {
    // Upstream dereferences usedBytes unconditionally; a stat without it is skipped here.
    if (volume.usedBytes !== undefined && volume.usedBytes !== null) podVolumeUsedBytes.set(volume.name, bytes(volume.usedBytes));
  }
  for (const { name, size, memoryMedium } of emptyDirs) {
    if (memoryBackedVolumes && memoryMedium) continue;
    const usedBytes = podVolumeUsedBytes.get(name);
    if (usedBytes !== undefined && compareQuantity(quantityFromInteger(usedBytes), size) > 0) {
      return `Usage of EmptyDir volume ${goQuote(name)} exceeds the limit ${goQuote(formatQuantity(size))}. `;
    }
  }
  return null;
}

/**
 * `podEphemeralStorageLimitEviction`: the pod's ephemeral-storage usage against the sum of its
 * containers' limits (init containers by max). Skipped when no container sets a limit. A pod
 * where only one container sets a limit is therefore held, as a whole, to that one limit.
 */
export function podEphemeralStorageLimitViolation(podStats: PodStats, pod: Pod): string | null {
  const limit = storageLimitsOf(pod).pod;
  if (limit === null) return null;
  const usedBytes = bytes(podStats['ephemeral-storage']?.usedBytes);
  if (compareQuantity(quantityFromInteger(usedBytes), limit) > 0) {
    return `Pod ephemeral local storage usage exceeds the total limit of containers ${formatQuantity(limit)}. `;
  }
  return null;
}

/**
 * `containerEphemeralStorageLimitEviction`: each container stat (in stats order) whose app
 * container sets a non-zero ephemeral-storage limit, usage being its logs plus, without a
 * dedicated imagefs, its writable layer (with an imagefs the layer is on the image filesystem and
 * is not counted).
 */
export function containerEphemeralStorageLimitViolation(podStats: PodStats, pod: Pod, dedicatedImageFs: boolean): string | null {
  const limits = storageLimitsOf(pod).containers;
  if (limits.size === 0) return null;
  for (const containerStats of podStats.containers ?? []) {
    const limit = limits.get(containerStats.name);
    if (limit === undefined) continue;
    let usedBytes = bytes(containerStats.logs?.usedBytes);
    if (!dedicatedImageFs) usedBytes += bytes(containerStats.rootfs?.usedBytes);
    if (compareQuantity(limit, quantityFromInteger(usedBytes)) < 0) {
      return `Container ${containerStats.name} exceeded its local ephemeral storage limit ${goQuote(formatQuantity(limit))}. `;
    }
  }
  return null;
}

// The checks in the kubelet's order.
const CHECKS: readonly (readonly [LocalStorageLimit, (podStats: PodStats, pod: Pod, dedicatedImageFs: boolean, memoryBackedVolumes: boolean) => string | null])[] = [
  ['emptydirfs.limit', emptyDirLimitViolation],
  ['ephemeralpodfs.limit', podEphemeralStorageLimitViolation],
  ['ephemeralcontainerfs.limit', containerEphemeralStorageLimitViolation],
];

/**
 * Every local-storage violation, in pod order. A pod that can be evicted stops at its first
 * violation (emptyDir, then pod total, then container), as the kubelet stops checking a pod it
 * has evicted. For a critical pod every check runs, as upstream, where the refused eviction makes
 * each check return false; each check reports its first violation.
 */
export function localStorageViolations(pods: readonly Pod[], stats: StatsFunc, dedicatedImageFs: boolean, memoryBackedVolumes = false): LocalStorageViolation[] {
  const violations: LocalStorageViolation[] = [];
  for (const pod of pods) {
    if (storageLimitsOf(pod).none) continue;
    const podStats = stats(pod);
    if (podStats === undefined) continue;
    let critical: boolean | undefined;
    for (const [limit, check] of CHECKS) {
      const message = check(podStats, pod, dedicatedImageFs, memoryBackedVolumes);
      if (message === null) continue;
      critical ??= isCriticalPod(pod);
      violations.push({ pod, limit, message, critical });
      if (!critical) break;
    }
  }
  return violations;
}

/**
 * The pods to evict for local-storage limits (kubelet `localStorageEviction`), in pod order: every
 * non-critical violator, each with grace period 1, no annotations and no DisruptionTarget
 * condition. Pods without stats are skipped.
 */
export function localStorageEviction(pods: readonly Pod[], stats: StatsFunc, dedicatedImageFs: boolean): Eviction[] {
  return localStorageEvictionsOf(localStorageViolations(pods, stats, dedicatedImageFs));
}

/** {@link localStorageEviction} from violations already found. */
export function localStorageEvictionsOf(violations: readonly LocalStorageViolation[]): Eviction[] {
  return violations
    .filter((violation) => !violation.critical)
    .map((violation) => ({
      pod: violation.pod,
      reason: { kind: 'local-storage', limit: violation.limit },
      gracePeriodSeconds: IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS,
      message: violation.message,
      annotations: {},
      condition: null,
    }));
}
