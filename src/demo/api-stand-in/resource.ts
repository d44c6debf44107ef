// The resources the stand-in serves and the kinds it names them by; pods and nodes can be
// watched, Events only listed.

export type Resource = 'pods' | 'nodes' | 'events';
export type WatchedResource = 'pods' | 'nodes';

export const KINDS: Readonly<Record<Resource, string>> = { pods: 'Pod', nodes: 'Node', events: 'Event' };
export const LIST_KINDS: Readonly<Record<Resource, string>> = { pods: 'PodList', nodes: 'NodeList', events: 'EventList' };
