// Which reloaded fields need a restart: the sections the node side, the endpoint and the logger
// are built from at start, named field by field; everything else is applied live.

import { parseConfigText } from '../../../src/config/load.js';
import { inForce, restartOnlyChanges } from '../../../src/daemon/restart-only.js';

const BASE = 'evictionHard:\n  memory.available: 500Mi\n';
const parse = (extra: string): ReturnType<typeof parseConfigText> => parseConfigText(`${BASE}${extra}`, 'test.yaml');

test.each([
  ['thresholds and actions only', 'evictionHard:\n  memory.available: 700Mi\n', []],
  ['the port and the bind address', 'server:\n  address: 127.0.0.1\n  port: 9191\n', ['server.address', 'server.port']],
  ['the statistics source', 'observe:\n  source: kubelet\n', ['observe.source']],
  ['the notifier mode', 'notifier:\n  mode: psi\n', ['notifier.mode']],
  ['the log level', 'logLevel: debug\n', ['logLevel']],
  ['the node name', 'nodeName: other\n', ['nodeName']],
  ['the kernel OOM kill watcher', 'oomKills:\n  kernelLog: false\n', ['oomKills.kernelLog']],
])('%s', (_what, extra, fields) => {
  const running = parse('');
  const next = extra.startsWith('evictionHard') ? parseConfigText(extra, 'test.yaml') : parse(extra);
  expect(restartOnlyChanges(running, next)).toEqual(fields);
  // What is in force after the reload: the new file but for those fields.
  expect(restartOnlyChanges(running, inForce(running, next))).toEqual([]);
  expect(inForce(running, next).eviction).toEqual(next.eviction);
});

test('HugepageAwareEviction needs a restart (the observer built at start subtracts hugepages); the other gates apply at once', () => {
  const running = parse('');
  const next = parse('featureGates:\n  HugepageAwareEviction: false\n  KubeletSeparateDiskGC: false\n');
  expect(restartOnlyChanges(running, next)).toEqual(['featureGates.HugepageAwareEviction']);
  const applied = inForce(running, next);
  expect(applied.eviction.featureGates).toMatchObject({ HugepageAwareEviction: true, KubeletSeparateDiskGC: false });
  expect(restartOnlyChanges(running, applied)).toEqual([]);
});
