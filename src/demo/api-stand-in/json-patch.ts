// The RFC 6902 JSON patch and the RFC 6901 JSON pointers it addresses fields with; a failed
// operation or a missing path refuses the whole patch with the API server's 422.

import { clone, deepEqual, isObject, str } from './json.js';
import { badRequest, rejected, type StatusError } from './status-error.js';

export function jsonPatch(document: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let doc = clone(document);
  for (const raw of operations) {
    if (!isObject(raw)) throw badRequest('invalid JSON patch operation');
    const op = str(raw.op);
    const path = str(raw.path);
    switch (op) {
      case 'add':
        doc = pointerSet(doc, path, clone(raw.value), 'add');
        break;
      case 'replace':
        pointerGet(doc, path);
        doc = pointerSet(doc, path, clone(raw.value), 'replace');
        break;
      case 'remove':
        doc = pointerRemove(doc, path);
        break;
      case 'test':
        if (!deepEqual(pointerGet(doc, path), raw.value)) throw rejected(`testing value ${path} failed: test failed`);
        break;
      case 'copy':
        doc = pointerSet(doc, path, clone(pointerGet(doc, str(raw.from))), 'add');
        break;
      case 'move': {
        const value = pointerGet(doc, str(raw.from));
        doc = pointerSet(pointerRemove(doc, str(raw.from)), path, value, 'add');
        break;
      }
      default:
        throw badRequest(`unexpected JSON patch operation "${op}"`);
    }
  }
  return doc;
}

function pointerTokens(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw rejected(`invalid JSON pointer ${path}`);
  return path
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function missing(path: string): StatusError {
  return rejected(`path ${path} does not exist`);
}

function pointerGet(doc: unknown, path: string): unknown {
  let node: unknown = doc;
  for (const token of pointerTokens(path)) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = node[token];
    else throw missing(path);
    if (node === undefined) throw missing(path);
  }
  return node;
}

/** The container of the field the tokens name (the tokens without their last one, re-escaped). */
function pointerParent(doc: unknown, parentTokens: readonly string[]): unknown {
  return pointerGet(doc, parentTokens.length === 0 ? '' : `/${parentTokens.map((t) => t.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`);
}

function pointerSet(doc: unknown, path: string, value: unknown, mode: 'add' | 'replace'): unknown {
  const tokens = pointerTokens(path);
  if (tokens.length === 0) return value;
  const last = tokens.pop() as string;
  const parent = pointerParent(doc, tokens);
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length) throw missing(path);
    if (mode === 'add') parent.splice(index, 0, value);
    else parent[index] = value;
  } else if (isObject(parent)) {
    parent[last] = value;
  } else {
    throw missing(path);
  }
  return doc;
}

function pointerRemove(doc: unknown, path: string): unknown {
  const tokens = pointerTokens(path);
  const last = tokens.pop();
  if (last === undefined) return undefined;
  const parent = pointerParent(doc, tokens);
  if (Array.isArray(parent)) {
    const index = Number(last);
    if (!Number.isInteger(index) || index < 0 || index >= parent.length) throw missing(path);
    parent.splice(index, 1);
  } else if (isObject(parent) && last in parent) {
    delete parent[last];
  } else {
    throw missing(path);
  }
  return doc;
}
