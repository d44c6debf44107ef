// The pass a memory notification gets before the full one: fresh node memory, and when a hard
// memory threshold is met on it, the pod the kubelet's memory ranking puts first, found while
// reading as few working sets as the ranking allows (src/eviction/memory-shortcut.ts). Everything is
// read synchronously, so from the kernel's wake-up to the kill nothing waits for the thread pool,
// the API server, or the rest of the node's stats.

import type { Pod } from '../api/pod.js';
import type { Summary } from '../api/summary.js';
import type { EvictionManager } from '../eviction/manager.js';
import { MemoryVictimSearch, type HardMemoryPressure } from '../eviction/memory-shortcut.js';
import type { Eviction } from '../eviction/types.js';
import type { MemoryReader } from './ports.js';

export type ShortcutOutcome =
  /** No hard memory threshold met on the fresh figures: the full pass decides the rest. */
  | { readonly kind: 'not-met'; readonly node: Summary }
  /** Met, and every pod is critical (or there are none). */
  | { readonly kind: 'no-victim'; readonly node: Summary }
  | { readonly kind: 'evict'; readonly node: Summary; readonly pressure: HardMemoryPressure; readonly reclaim: HardMemoryPressure['reclaim']; readonly eviction: Eviction; readonly workingSetsRead: number };

export function memoryShortcut(manager: EvictionManager, reader: MemoryReader, pods: readonly Pod[]): ShortcutOutcome {
  const node = reader.nodeMemory();
  const pressure = manager.hardMemoryPressure(node);
  if (pressure === null) return { kind: 'not-met', node };
  const search = new MemoryVictimSearch(pods, reader.podBounds(pods), manager.featureGates.PodLevelResources);
  for (let pod = search.next(); pod !== null; pod = search.next()) search.settle(reader.podWorkingSet(pod));
  const victim = search.victim;
  if (victim === null) return { kind: 'no-victim', node };
  return { kind: 'evict', node, pressure, reclaim: pressure.reclaim, eviction: manager.memoryEviction(pressure, victim, reader.podStats(victim)), workingSetsRead: search.workingSetsRead };
}
