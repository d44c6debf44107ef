// Request bodies: read whole, then decoded as JSON with the API server's 400 for a body that is
// not JSON (an empty body decodes to undefined).

import type { IncomingMessage } from 'node:http';
import { errorMessage } from '../../errors.js';
import { badRequest } from './status-error.js';

export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequest(`the body of the request could not be decoded: ${errorMessage(err)}`);
  }
}
