// The UID under which the node knows a pod. The kubelet names a pod's cgroup (`pod<uid>`), its log
// directory (`<namespace>_<name>_<uid>`) and `pods/<uid>` after it, and reports the pod's stats
// under it. For a pod from the API server that is its API UID. A static pod has its own UID, and
// what the API server holds is its mirror pod, with another UID: the static pod's is in the
// mirror's `kubernetes.io/config.mirror` annotation (equal to `kubernetes.io/config.hash`).
// The kubelet generates it as the hex of a 128-bit FNV-1a hash of the manifest
// (`pkg/kubelet/config/common.go` `applyDefaults`), unless the manifest sets `metadata.uid`. The
// annotation is anyone's to write, so its value must have one of those two forms before it
// names a path or matches stats.

import { isPodUid, type Pod } from './pod.js';

/** Present on the API-server copy of a static pod; its value is the static pod's UID. */
export const CONFIG_MIRROR_ANNOTATION_KEY = 'kubernetes.io/config.mirror';
/** The static pod's UID, which the kubelet also copies onto the mirror pod. */
export const CONFIG_HASH_ANNOTATION_KEY = 'kubernetes.io/config.hash';


export type NodePodUid =
  /** `mirror`: the UID came from the mirror annotation (a static pod). */
  | { readonly ok: true; readonly uid: string; readonly mirror: boolean }
  | { readonly ok: false; readonly reason: string };

/** Whether `value` has the form of a static pod's UID: the kubelet's generated hash, or a UUID. */
export function isStaticPodUid(value: string): boolean {
  // The generated hash (32 lowercase hex digits), or a UID the manifest sets itself in the API server's form.
  return isPodUid(value);
}

/**
 * The UID the node knows `pod` by: the static pod's own UID for a mirror pod (refused unless it
 * has a static pod UID's form and agrees with `config.hash` when that is present), the API UID
 * otherwise (refused when empty).
 */
export function nodePodUid(pod: Pod): NodePodUid {
  const annotations = pod.metadata.annotations;
  const mirror = annotations?.[CONFIG_MIRROR_ANNOTATION_KEY];
  if (mirror === undefined) {
    const uid = pod.metadata.uid;
    return uid === undefined || uid === '' ? { ok: false, reason: 'the pod has no UID' } : { ok: true, uid, mirror: false };
  }
  if (!isStaticPodUid(mirror)) {
    return { ok: false, reason: `its ${CONFIG_MIRROR_ANNOTATION_KEY} annotation ${JSON.stringify(mirror.slice(0, 80))} is not a static pod UID (32 lowercase hex digits, or a UUID)` };
  }
  const hash = annotations?.[CONFIG_HASH_ANNOTATION_KEY];
  if (hash !== undefined && hash !== mirror) {
    return { ok: false, reason: `its ${CONFIG_MIRROR_ANNOTATION_KEY} annotation ${mirror} differs from its ${CONFIG_HASH_ANNOTATION_KEY} ${JSON.stringify(hash.slice(0, 80))}` };
  }
  return { ok: true, uid: mirror, mirror: true };
}
