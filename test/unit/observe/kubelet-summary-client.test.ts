// The kubelet /stats/summary source against a local server: the request it makes (path, bearer
// token re-read each time, TLS options), the Summary and layout it returns, and how it fails
// (bad shapes become problems; no summary at all rejects with EVA_ERR_OBSERVE, reported once).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../fakes/fake-clock.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { systemClock } from '../../../src/api/clock.js';
import { defaultAgentSettings } from '../../../src/config/defaults.js';
import { createKubeletSummaryObserver, type KubeletSummaryObserver, type KubeletSummaryObserverContext } from '../../../src/observe/kubelet-summary-client.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let scratch: string;
let server: http.Server | https.Server | undefined;
const requests: { url: string | undefined; authorization: string | undefined }[] = [];

beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'kea-kubelet-'));
  requests.length = 0;
});
afterEach(async () => {
  if (server !== undefined) {
    server.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  }
  rmSync(scratch, { recursive: true, force: true });
});

async function listen(handler: Handler, tls?: { key: string; cert: string }, host = '127.0.0.1'): Promise<string> {
  const record: Handler = (req, res) => {
    requests.push({ url: req.url, authorization: req.headers.authorization });
    handler(req, res);
  };
  server = tls === undefined ? http.createServer(record) : https.createServer(tls, record);
  await new Promise<void>((resolve) => server?.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return `${tls === undefined ? 'http' : 'https'}://${host}:${port}`;
}

const json = (body: unknown, status = 200): Handler => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};

const realSummary = {
  node: {
    nodeName: 'node-a',
    memory: { time: '2026-01-01T00:00:00Z', availableBytes: 6e9, usageBytes: 3e9, workingSetBytes: 2e9 },
    systemContainers: [{ name: 'pods', memory: { availableBytes: 5e9, usageBytes: 2e9, workingSetBytes: 1.5e9 } }],
    fs: { capacityBytes: 100e9, availableBytes: 40e9, inodes: 6e6, inodesFree: 5e6 },
    runtime: { imageFs: { capacityBytes: 500e9, availableBytes: 300e9, inodes: 3e7, inodesFree: 2e7 }, containerFs: { capacityBytes: 500e9, availableBytes: 300e9, inodes: 3e7, inodesFree: 2e7 } },
    rlimit: { time: '2026-01-01T00:00:00Z', maxpid: 4194304, curproc: 900 },
  },
  pods: [{ podRef: { name: 'web', namespace: 'default', uid: 'u1' }, memory: { workingSetBytes: 7e8 }, process_stats: { process_count: 3 } }],
};

interface ObserverOptions extends Partial<KubeletSummaryObserverContext> {
  readonly tokenFile?: string | null;
  /** observe.allowTokenOverHttpLoopback; on here, where the test kubelet is plain http on loopback. */
  readonly allowTokenOverHttpLoopback?: boolean;
  readonly insecureSkipVerify?: boolean;
  /** observe.kubeletCaFile. */
  readonly caFileSetting?: string;
  readonly hostRoot?: string;
}

// No token file by default (kubeletTokenFile: ""): no Authorization header is sent.
function summaryObserver(url: string, { tokenFile, allowTokenOverHttpLoopback, insecureSkipVerify, caFileSetting, hostRoot, ...context }: ObserverOptions = {}): KubeletSummaryObserver {
  return createKubeletSummaryObserver(
    { kubeletUrl: url, kubeletTokenFile: tokenFile ?? null, allowTokenOverHttpLoopback: allowTokenOverHttpLoopback ?? true, kubeletInsecureSkipVerify: insecureSkipVerify ?? false, kubeletCaFile: caFileSetting ?? null, hostRoot: hostRoot ?? join(scratch, 'no-host'), kubeletRootDir: '/var/lib/kubelet' },
    { timeoutMs: 5000, clock: systemClock, logger: new RecordingLogger(), ...context },
  );
}

test('fetches /stats/summary with the bearer token and returns the summary with its layout', async () => {
  const url = await listen(json(realSummary));
  const tokenFile = join(scratch, 'token');
  writeFileSync(tokenFile, 'secret-1\n');
  const observer = summaryObserver(`${url}/`, { tokenFile });
  const observation = await observer.observe([]);
  expect(requests).toEqual([{ url: '/stats/summary', authorization: 'Bearer secret-1' }]);
  expect(observation).toEqual({ summary: realSummary, dedicatedImageFs: true, splitContainerFs: false, problems: [] });
});

test("a static pod: the kubelet's entry is the engine's through the mirror annotation; a refused annotation is reported", async () => {
  const staticUid = '9b1f7c3ad2e84f6a0c5b8e1d3f7a9c2e';
  const summary = { ...realSummary, pods: [...realSummary.pods, { podRef: { name: 'etcd-node-a', namespace: 'kube-system', uid: staticUid }, memory: { workingSetBytes: 2e8 } }] };
  const url = await listen(json(summary));
  const observer = summaryObserver(url);
  const mirror = (annotation: string) => ({
    metadata: { name: 'etcd-node-a', namespace: 'kube-system', uid: '6f0c2a1e-3b4d-4c5e-8f90-a1b2c3d4e5f6', annotations: { 'kubernetes.io/config.mirror': annotation } },
    spec: { containers: [{ name: 'etcd' }] },
  });
  const ok = await observer.observe([mirror(staticUid)]);
  expect(ok.summary).toEqual(summary);
  expect(ok.problems).toEqual([]);
  const refused = await observer.observe([mirror('f00d')]);
  expect(refused.problems).toEqual([expect.stringMatching(/^pod kube-system\/etcd-node-a not observed: its kubernetes.io\/config.mirror annotation "f00d" is not a static pod UID/)]);
});

test('the token file is re-read on every request (projected tokens rotate)', async () => {
  const url = await listen(json(realSummary));
  const tokenFile = join(scratch, 'token');
  writeFileSync(tokenFile, 'first');
  const observer = summaryObserver(url, { tokenFile });
  await observer.observe([]);
  writeFileSync(tokenFile, 'second');
  await observer.observe([]);
  expect(requests.map((r) => r.authorization)).toEqual(['Bearer first', 'Bearer second']);
});

test('an empty token file sends no Authorization header', async () => {
  const url = await listen(json(realSummary));
  const tokenFile = join(scratch, 'empty-token');
  writeFileSync(tokenFile, '');
  await summaryObserver(url, { tokenFile }).observe([]);
  expect(requests[0]?.authorization).toBeUndefined();
});

// The token never goes out in cleartext: over plain http only to loopback, and only when the
// setting allows it, whatever the caller built the settings from (the configuration refuses the rest).
describe('the bearer token and plain http', () => {
  function tokenAt(): string {
    const file = join(scratch, 'token');
    writeFileSync(file, 'secret-1\n');
    return file;
  }

  test('on loopback without observe.allowTokenOverHttpLoopback: no Authorization header, and a warning', async () => {
    const url = await listen(json(realSummary));
    const logger = new RecordingLogger();
    await summaryObserver(url, { tokenFile: tokenAt(), allowTokenOverHttpLoopback: false, logger }).observe([]);
    expect(requests).toEqual([{ url: '/stats/summary', authorization: undefined }]);
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([expect.stringMatching(/^the kubelet token is not sent: the URL is plain http/)]);
  });

  test('on loopback with the setting: the token is sent, with a warning that it is unencrypted', async () => {
    const url = await listen(json(realSummary));
    const logger = new RecordingLogger();
    await summaryObserver(url, { tokenFile: tokenAt(), allowTokenOverHttpLoopback: true, logger }).observe([]);
    expect(requests).toEqual([{ url: '/stats/summary', authorization: 'Bearer secret-1' }]);
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([expect.stringMatching(/^the kubelet token is sent unencrypted over loopback http/)]);
  });

  // The same listener reached through this host's own non-loopback address: not loopback by the URL.
  const external = Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
  const externalTest = external === undefined ? test.skip : test;
  if (external === undefined) console.log('skipped: this host has no non-loopback IPv4 address to reach a local listener by');
  externalTest('to a host that is not loopback, even with the setting: no Authorization header', async () => {
    const url = await listen(json(realSummary), undefined, external as string);
    await summaryObserver(url, { tokenFile: tokenAt(), allowTokenOverHttpLoopback: true }).observe([]);
    expect(requests).toEqual([{ url: '/stats/summary', authorization: undefined }]);
  });

  test('no token file (kubeletTokenFile: ""): nothing is read, nothing is sent, nothing is warned', async () => {
    const url = await listen(json(realSummary));
    const logger = new RecordingLogger();
    const { problems } = await summaryObserver(url, { tokenFile: null, logger }).observe([]);
    expect(problems).toEqual([]);
    expect(requests[0]?.authorization).toBeUndefined();
    expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
  });
});

test('an unreadable token file is a problem, and the request still goes out', async () => {
  const url = await listen(json(realSummary));
  const observer = summaryObserver(url, { tokenFile: join(scratch, 'missing') });
  const { problems } = await observer.observe([]);
  expect(problems).toEqual([`cannot read the token file ${join(scratch, 'missing')}: ENOENT`]);
  expect(requests).toHaveLength(1);
});

test('wrong shapes are dropped and reported, the rest is used', async () => {
  const broken = { node: { memory: { availableBytes: 'lots', workingSetBytes: 1 } }, pods: [{ podRef: { name: 'x' } }, realSummary.pods[0]] };
  const url = await listen(json(broken));
  const observer = summaryObserver(url);
  const { summary, problems } = await observer.observe([]);
  expect(summary).toEqual({ node: { memory: { workingSetBytes: 1 } }, pods: [realSummary.pods[0]] });
  expect(problems).toEqual([
    'kubelet summary field dropped: node.memory.availableBytes: expected a non-negative integer, got "lots"',
    'kubelet summary field dropped: pods[0].podRef: expected a name, namespace and uid, got {"name":"x"}',
  ]);
  expect(observer.problems()).toEqual(problems);
});

const failures: { name: string; handler: Handler; reason: RegExp }[] = [
  { name: 'not-json', handler: json('<html>'), reason: /^kubelet summary unavailable: GET http:\/\/127\.0\.0\.1:\d+\/stats\/summary: Unexpected token/ },
  { name: 'unauthorized', handler: json('Unauthorized', 401), reason: /: HTTP 401: Unauthorized$/ },
  { name: 'forbidden', handler: json('Forbidden (user=system:serviceaccount:x:y, verb=get, resource=nodes, subresource=stats)', 403), reason: /: HTTP 403: Forbidden/ },
  { name: 'not-a-summary', handler: json({ items: [] }), reason: /^kubelet summary unusable: summary: expected an object with a node object/ },
];
for (const tc of failures) {
  test(`no summary at all rejects with EVA_ERR_OBSERVE: ${tc.name}`, async () => {
    const url = await listen(tc.handler);
    const logger = new RecordingLogger();
    const observer = summaryObserver(url, { logger });
    for (let i = 0; i < 2; i++) {
      const error = await observer.observe([]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ name: 'AgentError', code: 'EVA_ERR_OBSERVE' });
      expect((error as Error).message).toMatch(tc.reason);
    }
    expect(observer.problems()).toHaveLength(1);
    expect(observer.problems()[0]).toMatch(tc.reason);
    expect(logger.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
  });
}

test('connection refused rejects with EVA_ERR_OBSERVE', async () => {
  const url = await listen(json(realSummary));
  server?.close();
  server = undefined;
  await expect(summaryObserver(url).observe([])).rejects.toMatchObject({ code: 'EVA_ERR_OBSERVE', message: expect.stringMatching(/ECONNREFUSED$/) });
});

test('a kubelet that does not answer times out on the injected clock', async () => {
  let received!: () => void;
  const gotRequest = new Promise<void>((resolve) => (received = resolve));
  const url = await listen(() => received());
  const clock = new FakeClock();
  const result = summaryObserver(url, { clock, timeoutMs: 2000 }).observe([]);
  await gotRequest;
  clock.step(1999);
  expect(clock.pendingTimers()).toBe(1);
  clock.step(1);
  await expect(result).rejects.toMatchObject({ code: 'EVA_ERR_OBSERVE', message: expect.stringMatching(/no response within 2000 ms$/) });
});

test('the timeout timer is cancelled once the answer arrives', async () => {
  const url = await listen(json(realSummary));
  const clock = new FakeClock();
  await summaryObserver(url, { clock, timeoutMs: 2000 }).observe([]);
  expect(clock.pendingTimers()).toBe(0);
});

describe('https', () => {
  let tls: { key: string; cert: string } | undefined;
  let skipReason = '';
  beforeAll(() => {
    const dir = mkdtempSync(join(tmpdir(), 'kea-tls-'));
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
      tls = { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
    } catch (error) {
      skipReason = `openssl cannot make a test certificate: ${String(error)}`;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  function skipped(): boolean {
    if (tls !== undefined) return false;
    console.log(`skipped: ${skipReason}`);
    return true;
  }

  test('a self-signed kubelet certificate is refused unless verification is skipped', async () => {
    if (skipped()) return;
    const url = await listen(json(realSummary), tls);
    await expect(summaryObserver(url).observe([])).rejects.toMatchObject({ code: 'EVA_ERR_OBSERVE', message: expect.stringMatching(/SELF_SIGNED/) });
    const { summary } = await summaryObserver(url, { insecureSkipVerify: true }).observe([]);
    expect(summary).toEqual(realSummary);
  });

  test('a CA file verifies the kubelet certificate', async () => {
    if (skipped() || tls === undefined) return;
    const url = await listen(json(realSummary), tls);
    const caFile = join(scratch, 'ca.pem');
    writeFileSync(caFile, tls.cert);
    const { summary } = await summaryObserver(url, { caFile }).observe([]);
    expect(summary).toEqual(realSummary);
  });

  // A host root with the kubelet's self-signed serving certificate where the kubelet writes it.
  function hostWithKubeletCert(cert: string, at = 'var/lib/kubelet/pki/kubelet.crt'): string {
    const hostRoot = mkdtempSync(join(scratch, 'host-'));
    execFileSync('mkdir', ['-p', join(hostRoot, at, '..')]);
    writeFileSync(join(hostRoot, at), cert);
    return hostRoot;
  }

  test("by default the kubelet's serving certificate under the host root verifies it, and says so at start", async () => {
    if (skipped() || tls === undefined) return;
    const url = await listen(json(realSummary), tls);
    const hostRoot = hostWithKubeletCert(tls.cert);
    const logger = new RecordingLogger();
    const { summary } = await summaryObserver(url, { hostRoot, logger }).observe([]);
    expect(summary).toEqual(realSummary);
    expect(logger.lines.find((e) => e.msg === "verifying the kubelet's serving certificate")?.fields).toMatchObject({ caFile: join(hostRoot, 'var/lib/kubelet/pki/kubelet.crt') });
  });

  test('observe.kubeletCaFile is read under the host root; the wrong CA is refused with a clear error', async () => {
    if (skipped() || tls === undefined) return;
    const url = await listen(json(realSummary), tls);
    const right = hostWithKubeletCert(tls.cert, 'etc/kubernetes/pki/kubelet-ca.crt');
    expect((await summaryObserver(url, { hostRoot: right, caFileSetting: '/etc/kubernetes/pki/kubelet-ca.crt' }).observe([])).summary).toEqual(realSummary);
    // Another self-signed certificate: a CA, but not the kubelet's.
    const dir = mkdtempSync(join(scratch, 'other-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=other'], { stdio: 'ignore' });
    const wrong = hostWithKubeletCert(readFileSync(join(dir, 'cert.pem'), 'utf8'), 'etc/kubernetes/pki/kubelet-ca.crt');
    await expect(summaryObserver(url, { hostRoot: wrong, caFileSetting: '/etc/kubernetes/pki/kubelet-ca.crt' }).observe([])).rejects.toMatchObject({
      code: 'EVA_ERR_OBSERVE',
      message: expect.stringMatching(/^kubelet summary unavailable: GET https:\/\/127\.0\.0\.1:\d+\/stats\/summary: .*(SELF_SIGNED|unable to verify|self-signed)/i),
    });
  });

  test('skipping verification is an opt-in that warns at start', async () => {
    if (skipped() || tls === undefined) return;
    const url = await listen(json(realSummary), tls);
    const logger = new RecordingLogger();
    await summaryObserver(url, { insecureSkipVerify: true, logger }).observe([]);
    expect(logger.lines.filter((e) => e.level === 'warn').map((e) => e.msg)).toEqual([
      "the kubelet's serving certificate is not verified (observe.kubeletInsecureSkipVerify): anything answering at its address is believed",
    ]);
    expect(defaultAgentSettings().observe.kubeletInsecureSkipVerify).toBe(false);
  });
});

test("a hugepage node's summary is the kubelet's, never adjusted again (the kubelet applied its own HugepageAwareEviction)", async () => {
  // As the kubelet v1.37.2 served it in the cgroup v2 guest with 192 MiB of hugepages reserved and
  // the gate on: availableBytes + workingSetBytes is MemTotal less the pools.
  const memTotalBytes = 2062622720;
  const hugepagesBytes = 192 * 1024 * 1024;
  const summary = { ...realSummary, node: { ...realSummary.node, memory: { time: '2026-01-01T00:00:00Z', availableBytes: memTotalBytes - hugepagesBytes - 53e6, workingSetBytes: 53e6, usageBytes: 90e6 } } };
  const observation = await summaryObserver(await listen(json(summary))).observe([]);
  expect(observation.summary.node.memory).toEqual(summary.node.memory);
  expect(observation.hugepages).toBeUndefined();
});
