import { readFileSync } from 'node:fs';
import { AgentError, ConfigError, ERROR_CODES, errorMessage, KubeApiError, NativeError, ReplayInputError } from '../../src/errors.js';

describe('the error catalog', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  for (const code of Object.keys(ERROR_CODES)) {
    test(`${code} is documented in docs/errors.md`, () => {
      expect(doc).toContain(`\`${code}\``);
    });
  }

  test('every documented code exists', () => {
    const documented = [...doc.matchAll(/`(EVA_ERR_[A-Z_]+)`/g)].map((m) => m[1]);
    for (const code of documented) expect(Object.keys(ERROR_CODES)).toContain(code);
  });

  const cases: { name: string; error: AgentError; code: string; message: string }[] = [
    {
      name: 'config-error-lists-every-problem-with-its-field',
      error: new ConfigError([
        { field: 'evictionHard["mem.available"]', value: '1Gi', message: 'unsupported eviction signal mem.available' },
        { field: 'evictionSoft["memory.available"]', value: '2Gi', message: 'grace period must be specified for the soft eviction threshold memory.available', line: 7 },
      ]),
      code: 'EVA_ERR_CONFIG_INVALID',
      message:
        'evictionHard["mem.available"]: unsupported eviction signal mem.available\n' +
        'evictionSoft["memory.available"] (line 7): grace period must be specified for the soft eviction threshold memory.available',
    },
    { name: 'replay-error-names-line-and-field', error: new ReplayInputError(3, 'pods[0].metadata.uid', 'is required'), code: 'EVA_ERR_REPLAY_INPUT', message: 'line 3: pods[0].metadata.uid: is required' },
    { name: 'native-error-names-the-call', error: new NativeError('epoll_ctl', 9), code: 'EVA_ERR_NATIVE', message: 'epoll_ctl failed with errno 9' },
    { name: 'kube-error-keeps-status', error: new KubeApiError(429, 'Cannot evict pod as it would violate the pod\'s disruption budget'), code: 'EVA_ERR_KUBE_API', message: 'Cannot evict pod as it would violate the pod\'s disruption budget' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(tc.error).toBeInstanceOf(AgentError);
      expect(tc.error).toBeInstanceOf(Error);
      expect(tc.error.code).toBe(tc.code);
      expect(tc.error.message).toBe(tc.message);
    });
  }
});

describe('errorMessage: what a thrown or rejected value says', () => {
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  const cases: { name: string; thrown: unknown; message: string }[] = [
    { name: 'an Error is its message', thrown: new TypeError('bad type'), message: 'bad type' },
    { name: 'a string as it is', thrown: 'went wrong', message: 'went wrong' },
    { name: 'an object as JSON', thrown: { code: 410, reason: 'Expired' }, message: '{"code":410,"reason":"Expired"}' },
    { name: 'undefined', thrown: undefined, message: 'undefined' },
    { name: 'a bigint, which JSON refuses', thrown: 5n, message: '5' },
    { name: 'a circular object, which JSON refuses', thrown: circular, message: '[object Object]' },
  ];
  for (const tc of cases) test(tc.name, () => expect(errorMessage(tc.thrown)).toBe(tc.message));
});

