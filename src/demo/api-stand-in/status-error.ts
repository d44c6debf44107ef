// Status bodies and errors, as the API server writes them: every refusal the stand-in makes is
// a StatusError, answered with the code, reason, message and details a real client would see.

import type { JsonObject } from './json.js';

/** An error answered with a Status body. */
export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string | undefined,
    message: string,
    readonly details?: JsonObject,
  ) {
    super(message);
  }

  body(): JsonObject {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      ...(this.reason === undefined ? {} : { reason: this.reason }),
      ...(this.details === undefined ? {} : { details: this.details }),
      code: this.code,
    };
  }
}

export const notFound = (resource: string, name: string): StatusError => new StatusError(404, 'NotFound', `${resource} "${name}" not found`, { name, kind: resource });
export const alreadyExists = (resource: string, name: string): StatusError => new StatusError(409, 'AlreadyExists', `${resource} "${name}" already exists`, { name, kind: resource });
export const conflict = (resource: string, name: string, why: string): StatusError =>
  new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${resource} "${name}": ${why}`, { name, kind: resource });
export const OBJECT_MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again';

/** A failed UID precondition, in the storage layer's words (as the API server passes them on). */
export function uidPreconditionFailed(resource: 'pods' | 'nodes', key: string, name: string, wanted: string, actual: string): StatusError {
  const storageKey = `/registry/${resource === 'nodes' ? 'minions' : 'pods'}/${key}`;
  return conflict(resource, name, `StorageError: invalid object, Code: 4, Key: ${storageKey}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${wanted}, UID in object meta: ${actual}`);
}
export const badRequest = (message: string): StatusError => new StatusError(400, 'BadRequest', message);
export const namespaceMismatch = (): StatusError => badRequest('the namespace of the provided object does not match the namespace sent on the request');
/** A request the API server understood but could not apply (a failed patch). */
export const rejected = (why: string): StatusError => new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: ${why}`);

export interface FieldError {
  readonly field: string;
  readonly type: 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueNotSupported';
  readonly detail: string;
}

export function invalid(kind: string, name: string, errors: readonly FieldError[]): StatusError {
  const texts = errors.map((e) => `${e.field}: ${e.detail}`);
  const summary = texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
  return new StatusError(422, 'Invalid', `${kind} "${name}" is invalid: ${summary}`, {
    name,
    kind,
    causes: errors.map((e) => ({ reason: e.type, message: e.detail, field: e.field })),
  });
}
