import type { ClientLibrary } from '../../../src/kube/client-library.js';
import { createApiCaller, toApiFailure, type ApiFailure } from '../../../src/kube/api-call.js';
import { deletionOutcome, evictionOutcome, PDB_REFUSAL_MESSAGE } from '../../../src/kube/pod-actions.js';
import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';

// The generated client's ApiException: the status in `code`, the raw response text in `body`.
class ApiException extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly body: unknown,
  ) {
    super(`HTTP-Code: ${code}\nMessage: ${message}\nBody: ${JSON.stringify(body)}\nHeaders: {}`);
  }
}

const pdbBody = JSON.stringify({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: PDB_REFUSAL_MESSAGE,
  reason: 'TooManyRequests',
  details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 3 healthy pods and has 3 currently' }] },
  code: 429,
});

describe('toApiFailure reads the status and the Status body', () => {
  const cases: { name: string; error: unknown; failure: ApiFailure }[] = [
    {
      name: 'pdb-refusal-keeps-message-and-causes',
      error: new ApiException(429, 'Unknown API Status Code!', pdbBody),
      failure: { status: 429, reason: 'TooManyRequests', message: PDB_REFUSAL_MESSAGE, causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 3 healthy pods and has 3 currently' }] },
    },
    {
      name: 'not-found',
      error: new ApiException(404, 'Unknown API Status Code!', '{"kind":"Status","message":"pods \\"a\\" not found","reason":"NotFound","code":404}'),
      failure: { status: 404, reason: 'NotFound', message: 'pods "a" not found', causes: [] },
    },
    {
      name: 'unauthorized-without-body-uses-the-exception-message',
      error: new ApiException(401, 'Unauthorized', undefined),
      failure: { status: 401, reason: 'Unauthorized', message: 'Unauthorized', causes: [] },
    },
    {
      name: 'non-json-body-is-the-message',
      error: new ApiException(502, 'Unknown API Status Code!', 'Bad Gateway'),
      failure: { status: 502, reason: 'InternalError', message: 'Bad Gateway', causes: [] },
    },
    {
      name: 'connection-refused-is-status-0',
      error: Object.assign(new Error('request to http://127.0.0.1:1/api failed, reason: connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      failure: { status: 0, reason: 'NetworkError', message: 'request to http://127.0.0.1:1/api failed, reason: connect ECONNREFUSED 127.0.0.1:1', causes: [] },
    },
  ];
  for (const tc of cases) test(tc.name, () => expect(toApiFailure(tc.error)).toEqual(tc.failure));
});

describe('eviction and deletion answers map to outcomes', () => {
  const failure = (status: number, message: string, causes: ApiFailure['causes'] = []): ApiFailure => ({ status, reason: '', message, causes });
  const cases: { name: string; map: typeof evictionOutcome; failure: ApiFailure; outcome: ReturnType<typeof evictionOutcome> }[] = [
    {
      name: 'eviction-429-from-a-budget-is-blocked-with-the-cause',
      map: evictionOutcome,
      failure: failure(429, PDB_REFUSAL_MESSAGE, [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 3 healthy pods and has 3 currently' }]),
      outcome: { result: 'blocked', message: `${PDB_REFUSAL_MESSAGE} The disruption budget web needs 3 healthy pods and has 3 currently` },
    },
    { name: 'eviction-429-budget-message-without-causes-is-blocked', map: evictionOutcome, failure: failure(429, PDB_REFUSAL_MESSAGE), outcome: { result: 'blocked', message: PDB_REFUSAL_MESSAGE } },
    {
      name: 'eviction-429-from-priority-and-fairness-is-a-failure-to-retry',
      map: evictionOutcome,
      failure: failure(429, 'Too many requests, please try again later.'),
      outcome: { result: 'failed', status: 429, message: 'Too many requests, please try again later.' },
    },
    { name: 'eviction-404-is-gone', map: evictionOutcome, failure: failure(404, 'pods "a" not found'), outcome: { result: 'gone', message: 'pods "a" not found' } },
    {
      name: 'eviction-409-uid-precondition-is-gone',
      map: evictionOutcome,
      failure: failure(409, 'Operation cannot be fulfilled on pods "a": Precondition failed: UID in precondition: 1, UID in object meta: 2'),
      outcome: { result: 'gone', message: 'Operation cannot be fulfilled on pods "a": Precondition failed: UID in precondition: 1, UID in object meta: 2' },
    },
    {
      name: 'eviction-409-object-modified-is-a-failure-to-retry',
      map: evictionOutcome,
      failure: failure(409, 'Operation cannot be fulfilled on pods "a": the object has been modified; please apply your changes to the latest version and try again'),
      outcome: { result: 'failed', status: 409, message: 'Operation cannot be fulfilled on pods "a": the object has been modified; please apply your changes to the latest version and try again' },
    },
    { name: 'eviction-500-fails', map: evictionOutcome, failure: failure(500, 'boom'), outcome: { result: 'failed', status: 500, message: 'boom' } },
    { name: 'eviction-network-error-fails-with-status-0', map: evictionOutcome, failure: failure(0, 'ECONNREFUSED'), outcome: { result: 'failed', status: 0, message: 'ECONNREFUSED' } },
    { name: 'deletion-429-is-never-blocked', map: deletionOutcome, failure: failure(429, PDB_REFUSAL_MESSAGE), outcome: { result: 'failed', status: 429, message: PDB_REFUSAL_MESSAGE } },
    { name: 'deletion-403-fails', map: deletionOutcome, failure: failure(403, 'forbidden'), outcome: { result: 'failed', status: 403, message: 'forbidden' } },
  ];
  for (const tc of cases) test(tc.name, () => expect(tc.map(tc.failure)).toEqual(tc.outcome));
});

describe('createApiCaller bounds every call on the injected clock', () => {
  class Observable<T> {
    constructor(private readonly promise: Promise<T>) {}
    toPromise(): Promise<T> {
      return this.promise;
    }
  }
  const lib = { Observable } as unknown as ClientLibrary;
  interface Middleware {
    pre(context: unknown): { toPromise(): Promise<unknown> };
  }

  test('a request that never answers is aborted and reported as status 0 after the timeout', async () => {
    const clock = new FakeClock(0);
    const caller = createApiCaller({ lib, clock, timeoutMs: 10_000 });
    let signal: AbortSignal | undefined;
    const headers: Record<string, string> = {};
    const result = caller.call(
      async (options) => {
        const [middleware] = (options as unknown as { middleware: Middleware[] }).middleware;
        await middleware?.pre({ setSignal: (s: AbortSignal) => (signal = s), setHeaderParam: (k: string, v: string) => (headers[k] = v) }).toPromise();
        return new Promise<never>(() => {});
      },
      { contentType: 'application/merge-patch+json' },
    );
    await flushMicrotasks();
    expect(headers['Content-Type']).toBe('application/merge-patch+json');
    expect(signal?.aborted).toBe(false);
    await clock.stepAsync(9_999);
    expect(signal?.aborted).toBe(false);
    await clock.stepAsync(1);
    await expect(result).resolves.toEqual({ ok: false, failure: { status: 0, reason: 'Timeout', message: 'no answer from the API server within 10000 ms', causes: [] } });
    expect(signal?.aborted).toBe(true);
  });

  test('an answer in time cancels the timer', async () => {
    const clock = new FakeClock(0);
    const caller = createApiCaller({ lib, clock, timeoutMs: 10_000 });
    await expect(caller.call(async () => 42)).resolves.toEqual({ ok: true, value: 42 });
    expect(clock.pendingTimers()).toBe(0);
  });

  test('a thrown ApiException resolves as a failure, never a rejection', async () => {
    const caller = createApiCaller({ lib, clock: new FakeClock(0) });
    const result = await caller.call(async () => {
      throw new ApiException(404, 'Unknown API Status Code!', '{"message":"pods \\"a\\" not found","reason":"NotFound"}');
    });
    expect(result).toEqual({ ok: false, failure: { status: 404, reason: 'NotFound', message: 'pods "a" not found', causes: [] } });
  });
});
