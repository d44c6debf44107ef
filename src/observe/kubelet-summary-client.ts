// The second observation source: the local kubelet's own /stats/summary (port 10250, RBAC
// `nodes/stats`), which gives the engine exactly the inputs the kubelet's eviction manager sees
// (static pods under their own UIDs, as the kubelet knows them).
// The token is re-read on every request because projected service-account tokens rotate, and it is
// never sent over plain http except to loopback with observe.allowTokenOverHttpLoopback. The
// response is validated (summary-validation.ts), so a malformed field becomes a problem; only a
// failure to get any summary at all rejects, with EVA_ERR_OBSERVE, which the caller treats as "no
// summary this pass", as the kubelet does when its summary provider fails.

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import type { ObserveSettings } from '../api/agent-settings.js';
import { cleartextTokenRefusal } from '../api/loopback-host.js';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { Pod } from '../api/pod.js';
import { validateSummary } from '../api/summary-validation.js';
import type { NodeObserver, Observation } from '../daemon/ports.js';
import { AgentError } from '../errors.js';
import { describeError } from '../host/read-result.js';
import { filesystemLayoutFromSummary } from './filesystem-layout.js';
import { nodePods } from './node-pod-uids.js';
import { ProblemLog } from './problem-log.js';

/** What only the caller knows: the request bound, a CA bundle, the clock and the logger. */
export interface KubeletSummaryObserverContext {
  readonly timeoutMs: number;
  /** A PEM bundle to verify the kubelet's certificate with, in place of {@link kubeletCaFile}'s. */
  readonly caFile?: string;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** The settings it reads: the kubelet's URL, the bearer token's file and where it may go, how TLS is verified, and where the host is. */
export type KubeletSummarySettings = Pick<
  ObserveSettings,
  'kubeletUrl' | 'kubeletTokenFile' | 'allowTokenOverHttpLoopback' | 'kubeletInsecureSkipVerify' | 'kubeletCaFile' | 'hostRoot' | 'kubeletRootDir'
>;

/**
 * The token file the client may read and send, or undefined: over https always; over plain http
 * only to a loopback host with `allowTokenOverHttpLoopback` (the configuration refuses the rest,
 * and this holds whatever settings a caller builds).
 */
export function tokenFileToSend(settings: KubeletSummarySettings, url: URL): string | undefined {
  if (settings.kubeletTokenFile === null) return undefined;
  return cleartextTokenRefusal(url, settings.allowTokenOverHttpLoopback) === null ? settings.kubeletTokenFile : undefined;
}

/**
 * The CA bundle the kubelet's certificate is verified with: `kubeletCaFile` under the host root, or
 * the kubelet's self-signed serving certificate (`<kubeletRootDir>/pki/kubelet.crt`, which the
 * kubelet writes when no serving certificate is configured) where found; undefined: the system's CAs.
 */
export function kubeletCaFile(settings: KubeletSummarySettings): string | undefined {
  if (settings.kubeletCaFile !== null) return join(settings.hostRoot, settings.kubeletCaFile);
  const selfSigned = join(settings.hostRoot, settings.kubeletRootDir, 'pki', 'kubelet.crt');
  return existsSync(selfSigned) ? selfSigned : undefined;
}

export interface KubeletSummaryObserver extends NodeObserver {
  /** The problems of the latest observation. */
  problems(): readonly string[];
}

// A summary for 110 pods is well under a megabyte; anything this large is not a summary.
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** The observer for the compiled `observe` settings, as they are (`/stats/summary` under `kubeletUrl`). */
export function createKubeletSummaryObserver(settings: KubeletSummarySettings, context: KubeletSummaryObserverContext): KubeletSummaryObserver {
  const logger = context.logger.child({ component: 'kubelet-summary-client' });
  const problemLog = new ProblemLog(logger);
  const summaryUrl = new URL(`${settings.kubeletUrl.replace(/\/+$/, '')}/stats/summary`);
  const transport = summaryUrl.protocol === 'https:' ? https : http;
  const caFile = context.caFile ?? kubeletCaFile(settings);
  const tokenFile = tokenFileToSend(settings, summaryUrl);
  if (summaryUrl.protocol === 'http:' && settings.kubeletTokenFile !== null) {
    if (tokenFile === undefined) logger.warn('the kubelet token is not sent: the URL is plain http (only to loopback with observe.allowTokenOverHttpLoopback)', { url: summaryUrl.href });
    else logger.warn('the kubelet token is sent unencrypted over loopback http (observe.allowTokenOverHttpLoopback)', { url: summaryUrl.href });
  }
  if (summaryUrl.protocol === 'https:') {
    if (settings.kubeletInsecureSkipVerify) {
      logger.warn("the kubelet's serving certificate is not verified (observe.kubeletInsecureSkipVerify): anything answering at its address is believed", { url: summaryUrl.href });
    } else {
      logger.info("verifying the kubelet's serving certificate", { url: summaryUrl.href, caFile: caFile ?? "the system's CAs" });
    }
  }

  async function readOptional(path: string | undefined, what: string): Promise<string | undefined> {
    if (path === undefined) return undefined;
    try {
      return await readFile(path, 'utf8');
    } catch (error) {
      problemLog.report(`cannot read the ${what} ${path}: ${describeError(error)}`);
      return undefined;
    }
  }

  function get(token: string | undefined, ca: string | undefined): Promise<string> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { Accept: 'application/json' };
      if (token !== undefined && token !== '') headers.Authorization = `Bearer ${token}`;
      const request = transport.request(summaryUrl, {
        method: 'GET',
        headers,
        ...(summaryUrl.protocol === 'https:' ? { rejectUnauthorized: !settings.kubeletInsecureSkipVerify, ...(ca === undefined ? {} : { ca }) } : {}),
      });
      const cancelTimeout = context.clock.after(context.timeoutMs, () => {
        request.destroy(new Error(`no response within ${context.timeoutMs} ms`));
      });
      const fail = (error: unknown): void => {
        cancelTimeout();
        reject(error);
      };
      request.on('error', fail);
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        let lengthBytes = 0;
        response.on('data', (chunk: Buffer) => {
          lengthBytes += chunk.length;
          if (lengthBytes > MAX_RESPONSE_BYTES) {
            request.destroy(new Error(`response larger than ${MAX_RESPONSE_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', fail);
        response.on('end', () => {
          cancelTimeout();
          const body = Buffer.concat(chunks).toString('utf8');
          if (response.statusCode !== 200) {
            reject(new Error(`HTTP ${response.statusCode ?? 0}: ${body.slice(0, 200).trim()}`));
            return;
          }
          resolve(body);
        });
      });
      request.end();
    });
  }

  async function observe(pods: readonly Pod[]): Promise<Observation> {
    problemLog.begin();
    // The kubelet reports a static pod under its own UID, which the engine finds through the
    // mirror pod's annotation; a mirror pod whose annotation is refused gets no stats, visibly.
    for (const reason of nodePods(pods).refused) problemLog.report(reason);
    const token = (await readOptional(tokenFile, 'token file'))?.trim();
    const ca = await readOptional(caFile, 'CA file');
    let document: unknown;
    try {
      document = JSON.parse(await get(token, ca));
    } catch (error) {
      const reason = `kubelet summary unavailable: GET ${summaryUrl.href}: ${describeError(error)}`;
      problemLog.report(reason);
      problemLog.end();
      throw new AgentError('EVA_ERR_OBSERVE', reason, { cause: error });
    }
    const { summary, problems } = validateSummary(document);
    if (summary === null) {
      const reason = `kubelet summary unusable: ${problems.join('; ')}`;
      problemLog.report(reason);
      problemLog.end();
      throw new AgentError('EVA_ERR_OBSERVE', reason);
    }
    for (const problem of problems) problemLog.report(`kubelet summary field dropped: ${problem}`);
    const layout = filesystemLayoutFromSummary(summary.node);
    return { summary, ...layout, problems: problemLog.end() };
  }

  // One request at a time, so each observation's problems are its own.
  let queue: Promise<unknown> = Promise.resolve();
  const observeSerially = (pods: readonly Pod[]): Promise<Observation> => {
    const next = queue.then(() => observe(pods));
    queue = next.catch(() => undefined);
    return next;
  };

  return { observe: observeSerially, problems: () => problemLog.problems() };
}
