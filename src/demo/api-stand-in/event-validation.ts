// core/v1 Event validation, with the API server's field errors: the agent's Events must pass it
// here as they would against a real cluster.

import { isObject, str, type JsonObject } from './json.js';
import { metaOf } from './object-meta.js';
import type { FieldError } from './status-error.js';

/** core/v1 Event validation: the legacy rules without eventTime, the new ones with it. */
export function validateEvent(event: JsonObject, namespace: string): FieldError[] {
  const errors: FieldError[] = [];
  const meta = metaOf(event);
  if (str(meta.name) === '') errors.push({ field: 'metadata.name', type: 'FieldValueRequired', detail: 'Required value: name or generateName is required' });
  const ref = isObject(event.involvedObject) ? event.involvedObject : null;
  if (ref === null) {
    errors.push({ field: 'involvedObject', type: 'FieldValueRequired', detail: 'Required value' });
  } else {
    if (str(ref.kind) === '') errors.push({ field: 'involvedObject.kind', type: 'FieldValueRequired', detail: 'Required value' });
    if (str(ref.name) === '') errors.push({ field: 'involvedObject.name', type: 'FieldValueRequired', detail: 'Required value' });
  }
  const refNamespace = str(ref?.namespace);
  const hasEventTime = event.eventTime !== undefined && event.eventTime !== null;
  if (!hasEventTime) {
    if (refNamespace === '' ? namespace !== '' && namespace !== 'default' : namespace !== refNamespace) {
      errors.push({ field: 'involvedObject.namespace', type: 'FieldValueInvalid', detail: `Invalid value: "${refNamespace}": does not match event.namespace` });
    }
  } else {
    if (refNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') {
      errors.push({ field: 'involvedObject.namespace', type: 'FieldValueInvalid', detail: `Invalid value: "${refNamespace}": does not match event.namespace` });
    }
    if (str(event.reportingComponent) === '') errors.push({ field: 'reportingComponent', type: 'FieldValueRequired', detail: 'Required value' });
    if (str(event.reportingInstance) === '') errors.push({ field: 'reportingInstance', type: 'FieldValueRequired', detail: 'Required value' });
    if (str(event.action) === '') errors.push({ field: 'action', type: 'FieldValueRequired', detail: 'Required value' });
  }
  if (str(event.reason) === '') errors.push({ field: 'reason', type: 'FieldValueRequired', detail: 'Required value' });
  if (str(event.message) === '') errors.push({ field: 'message', type: 'FieldValueRequired', detail: 'Required value' });
  if (event.type !== 'Normal' && event.type !== 'Warning') {
    errors.push({ field: 'type', type: 'FieldValueNotSupported', detail: `Unsupported value: "${str(event.type)}": supported values: "Normal", "Warning"` });
  }
  return errors;
}
