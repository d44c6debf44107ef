// Patches: strategic merge (merge keys of the fields the agent touches), RFC 7386 merge patch and
// RFC 6902 JSON patch, chosen by the request's Content-Type as the API server does, with its 415
// for any other type.

import { jsonPatch } from './json-patch.js';
import { clone, isObject, type JsonObject } from './json.js';
import { mergePatch } from './merge-patch.js';
import { badRequest, StatusError } from './status-error.js';
import { strategicMerge } from './strategic-merge.js';

/** The object `current` would become under `patch`; `current` itself is left as it is. */
export function applyPatch(contentType: string, current: JsonObject, patch: unknown): unknown {
  switch (contentType) {
    case 'application/strategic-merge-patch+json':
      if (!isObject(patch)) throw badRequest('a strategic merge patch must be a JSON object');
      return strategicMerge(clone(current), patch, '');
    case 'application/merge-patch+json':
      if (!isObject(patch)) throw badRequest('a merge patch must be a JSON object');
      return mergePatch(clone(current), patch);
    case 'application/json-patch+json':
      return jsonPatch(current, patch);
    default:
      throw new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`);
  }
}
