// A minimal informer for the harness's own watches (the fake kubelet's pods, the tests'
// recordings): list, then watch from the list's resourceVersion, resume from the last version
// seen when a watch ends, relist after 410 Gone, and retry every half second while the API server
// is down (the restart test). Every change reaches the handler in order, with the object as sent.

import type { ApiClient, WatchEvent } from './api-client.js';
import { sleep } from './wait.js';

export interface KubeObject {
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ListWatchOptions {
  /** The collection, e.g. `/api/v1/pods` or `/api/v1/namespaces/ns/pods`. */
  readonly path: string;
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
  readonly onChange: (type: ChangeType, object: KubeObject) => void | Promise<void>;
  readonly onError?: (error: Error) => void;
}

export class ListWatch {
  private stopped = false;
  private current: { stop(): void } | null = null;
  private readonly known = new Map<string, KubeObject>();
  private listedOnce = false;
  private readonly loop: Promise<void>;
  private syncedResolve: () => void = () => undefined;
  /** Resolves once the first list has been delivered. */
  readonly synced: Promise<void>;

  constructor(
    private readonly api: ApiClient,
    private readonly options: ListWatchOptions,
  ) {
    this.synced = new Promise((resolve) => (this.syncedResolve = resolve));
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.stop();
    await this.loop;
  }

  private selectors(): Record<string, string | undefined> {
    return { fieldSelector: this.options.fieldSelector, labelSelector: this.options.labelSelector };
  }

  private async deliver(type: ChangeType, object: KubeObject): Promise<void> {
    const key = `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
    if (type === 'DELETED') this.known.delete(key);
    else this.known.set(key, object);
    try {
      await this.options.onChange(type, object);
    } catch (err) {
      this.options.onError?.(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private async list(): Promise<string> {
    const answer = await this.api.get<{ metadata: { resourceVersion: string }; items: KubeObject[] }>(this.options.path, this.selectors());
    const seen = new Set<string>();
    for (const item of answer.items) {
      const key = `${item.metadata.namespace ?? ''}/${item.metadata.name ?? ''}`;
      seen.add(key);
      await this.deliver(this.known.has(key) ? 'MODIFIED' : 'ADDED', item);
    }
    for (const [key, object] of [...this.known]) if (!seen.has(key)) await this.deliver('DELETED', object);
    if (!this.listedOnce) {
      this.listedOnce = true;
      this.syncedResolve();
    }
    return answer.metadata.resourceVersion;
  }

  private async run(): Promise<void> {
    let resourceVersion: string | null = null;
    while (!this.stopped) {
      try {
        resourceVersion ??= await this.list();
        if (this.stopped) break;
        // Events are handled one after another, in order, even when a handler is async.
        let queue = Promise.resolve();
        let expired = false;
        const stream = this.api.watch<KubeObject>(this.options.path, { ...this.selectors(), resourceVersion, allowWatchBookmarks: true }, (event: WatchEvent<KubeObject>) => {
          if (event.type === 'ERROR') {
            if ((event.object as { code?: number }).code === 410) expired = true;
            return;
          }
          if (event.object.metadata.resourceVersion !== undefined) resourceVersion = event.object.metadata.resourceVersion;
          if (event.type === 'BOOKMARK') return;
          queue = queue.then(() => this.deliver(event.type as ChangeType, event.object));
        });
        this.current = stream;
        const outcome = await stream.done;
        await queue;
        this.current = null;
        if (expired || outcome.status === 410) resourceVersion = null;
        if (outcome.error !== undefined && !this.stopped) {
          this.options.onError?.(outcome.error);
          await sleep(500);
        }
      } catch (err) {
        if (this.stopped) break;
        this.options.onError?.(err instanceof Error ? err : new Error(String(err)));
        resourceVersion = null;
        await sleep(500);
      }
    }
  }
}
