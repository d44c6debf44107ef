// core/v1 Events: creation with the API server's naming, namespace and validation rules, and the
// Events created so far in creation order, for a test or the demo to read back.

import { randomUUID } from 'node:crypto';
import type { Clock } from '../../api/clock.js';
import { validateEvent } from './event-validation.js';
import { clone, isObject, str, type JsonObject } from './json.js';
import { applyGenerateName, metaOf } from './object-meta.js';
import type { ObjectStore } from './object-store.js';
import { parseJson } from './request-body.js';
import { send, type RequestContext } from './responses.js';
import { rfc3339 } from './rfc3339.js';
import { alreadyExists, badRequest, invalid, namespaceMismatch } from './status-error.js';

export class Events {
  private readonly order: string[] = [];

  constructor(
    private readonly store: ObjectStore,
    private readonly clock: Clock,
  ) {}

  createRequest(ctx: RequestContext, namespace: string): void {
    const event = parseJson(ctx.body);
    if (!isObject(event)) throw badRequest('the body of the request must be an Event');
    const meta = metaOf(event);
    if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) throw namespaceMismatch();
    meta.namespace = namespace;
    applyGenerateName(meta);
    const name = str(meta.name);
    const errors = validateEvent(event, namespace);
    if (errors.length > 0) throw invalid('Event', name, errors);
    const key = `${namespace}/${name}`;
    if (this.store.has('events', key)) throw alreadyExists('events', name);
    event.kind = 'Event';
    event.apiVersion = 'v1';
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.clock.nowMs());
    this.order.push(key);
    send(ctx, 201, this.store.commit('events', key, event));
  }

  /** The Events created so far, in order. */
  list(): JsonObject[] {
    return this.order.map((key) => this.store.find('events', key)).filter((e): e is JsonObject => e !== undefined).map((e) => clone(e));
  }
}
