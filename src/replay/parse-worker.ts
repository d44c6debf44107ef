// A thread that parses and validates batches of replay lines for threaded-replay.ts: one batch per
// message, answered in the order received. It decides nothing and keeps no state but the Summary
// codec's dictionary, which the deciding thread mirrors.

import { parentPort } from 'node:worker_threads';
import { parseBatch } from './line-batches.js';
import { PARSE_WORKER_READY, replyOf, type ParseRequest } from './parse-protocol.js';
import { SummaryEncoder } from './summary-codec.js';

const port = parentPort;
if (port === null) throw new Error('parse-worker.js runs as a worker thread of replay');
const encoder = new SummaryEncoder();
port.on('message', (request: ParseRequest) => {
  const bytes = Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength);
  const reply = replyOf(parseBatch({ firstLine: request.firstLine, bytes }, request.maxLineBytes), encoder);
  port.postMessage(reply, [reply.summaries.codes.buffer, reply.summaries.numbers.buffer]);
});
port.postMessage(PARSE_WORKER_READY);
