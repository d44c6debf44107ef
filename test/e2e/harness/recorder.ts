// Records, as admin and independently of the agent, every version of the objects the tests
// watch: each pod of a namespace (so a DisruptionTarget condition that lived only a few
// milliseconds before the pod was deleted is still seen), or a node's conditions over time. Each
// version is stamped with the time it arrived, for the timing assertions.

import type { ApiClient } from './api-client.js';
import { ListWatch, type ChangeType, type KubeObject } from './list-watch.js';
import type { PodLike } from './objects.js';
import { waitFor } from './wait.js';

export interface Recorded<T> {
  readonly type: ChangeType;
  readonly object: T;
  /** When the harness received it (ms since the epoch). */
  readonly atMs: number;
}

export class Recorder<T extends KubeObject = KubeObject> {
  private readonly byName = new Map<string, Recorded<T>[]>();
  private readonly watch: ListWatch;

  private constructor(api: ApiClient, path: string, fieldSelector?: string) {
    this.watch = new ListWatch(api, {
      path,
      ...(fieldSelector === undefined ? {} : { fieldSelector }),
      onChange: (type, object) => {
        const name = object.metadata.name ?? '';
        const list = this.byName.get(name) ?? [];
        list.push({ type, object: object as T, atMs: Date.now() });
        this.byName.set(name, list);
      },
    });
  }

  /** Records every pod of a namespace. */
  static async pods(api: ApiClient, namespace: string): Promise<Recorder<PodLike & KubeObject>> {
    const recorder = new Recorder<PodLike & KubeObject>(api, `/api/v1/namespaces/${namespace}/pods`);
    await recorder.watch.synced;
    return recorder;
  }

  /** Records one node. */
  static async node(api: ApiClient, nodeName: string): Promise<Recorder> {
    const recorder = new Recorder(api, '/api/v1/nodes', `metadata.name=${nodeName}`);
    await recorder.watch.synced;
    return recorder;
  }

  /** Every version of the object seen, oldest first. */
  versions(name: string): readonly Recorded<T>[] {
    return this.byName.get(name) ?? [];
  }

  /** The latest version, or undefined once deleted (or never seen). */
  latest(name: string): T | undefined {
    const last = this.versions(name).at(-1);
    return last === undefined || last.type === 'DELETED' ? undefined : last.object;
  }

  /** When the object was first seen deleted, or undefined. */
  deletedAtMs(name: string): number | undefined {
    return this.versions(name).find((v) => v.type === 'DELETED')?.atMs;
  }

  /** The first version that satisfies `predicate`. */
  first(name: string, predicate: (object: T) => boolean): Recorded<T> | undefined {
    return this.versions(name).find((v) => predicate(v.object));
  }

  /** Waits until the object has been deleted; resolves with when. */
  waitDeleted(name: string, timeoutMs: number): Promise<number> {
    return waitFor(() => this.deletedAtMs(name), { what: `${name} deleted`, timeoutMs, detail: () => this.describe(name) });
  }

  /** Waits for a version that satisfies `predicate`. */
  waitFor(name: string, predicate: (object: T) => boolean, what: string, timeoutMs: number): Promise<Recorded<T>> {
    return waitFor(() => this.first(name, predicate), { what: `${name}: ${what}`, timeoutMs, detail: () => this.describe(name) });
  }

  /** A short history of one object, for failure messages. */
  describe(name: string): string {
    return this.versions(name)
      .map((v) => `${new Date(v.atMs).toISOString()} ${v.type} ${name} rv=${v.object.metadata.resourceVersion ?? ''}${(v.object.metadata as { deletionTimestamp?: string }).deletionTimestamp === undefined ? '' : ' terminating'}`)
      .join('\n');
  }

  stop(): Promise<void> {
    return this.watch.stop();
  }
}
