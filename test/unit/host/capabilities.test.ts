// The capability bookkeeping: the effective set read from a status file's CapEff line, the one
// coded warning per capability a configured feature needs and lacks, the sentence operators see,
// and the hint an EACCES on pod files gets. The refusals themselves are shown on the real kernel
// under capsh (test/kernel/capabilities.test.ts).

import { describePodFileError, effectiveCapabilities, missingCapabilityError, reportMissingCapabilities, type CapabilityName } from '../../../src/host/capabilities.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';

const status = (capEff: string): string => `Name:\tnode\nUmask:\t0022\nCapInh:\t0000000000000000\nCapPrm:\t${capEff}\nCapEff:\t${capEff}\nCapBnd:\t${capEff}\n`;

describe('effectiveCapabilities', () => {
  const cases: { name: string; text: string; want: CapabilityName[] | null }[] = [
    { name: 'none', text: status('0000000000000000'), want: [] },
    { name: 'CAP_KILL and CAP_DAC_READ_SEARCH (the DaemonSet\'s set)', text: status('0000000000000024'), want: ['CAP_DAC_READ_SEARCH', 'CAP_KILL'] },
    { name: 'a full root set without CAP_SYS_RESOURCE', text: status('000001fffeffffff'), want: ['CAP_DAC_READ_SEARCH', 'CAP_KILL'] },
    { name: 'every capability', text: status('000001ffffffffff'), want: ['CAP_DAC_READ_SEARCH', 'CAP_KILL', 'CAP_SYS_RESOURCE'] },
    { name: 'CAP_SYS_RESOURCE alone', text: status('0000000001000000'), want: ['CAP_SYS_RESOURCE'] },
    { name: 'no CapEff line', text: 'Name:\tnode\n', want: null },
    { name: 'a malformed CapEff line', text: 'CapEff:\tnot-hex\n', want: null },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const got = effectiveCapabilities(tc.text);
      expect(got === null ? null : [...got].sort()).toEqual(tc.want);
    });
  }
});

describe('reportMissingCapabilities', () => {
  const all = { signalsPodProcesses: true, walksPodFiles: true };
  const cases: { name: string; text: string | null; features: typeof all; missing: CapabilityName[] }[] = [
    { name: 'the DaemonSet\'s set covers every feature', text: status('0000000000000024'), features: all, missing: [] },
    { name: 'without CAP_KILL, local termination is reported', text: status('0000000000000004'), features: all, missing: ['CAP_KILL'] },
    { name: 'without CAP_DAC_READ_SEARCH, the disk walk is reported', text: status('0000000000000020'), features: all, missing: ['CAP_DAC_READ_SEARCH'] },
    { name: 'with nothing, both', text: status('0000000000000000'), features: all, missing: ['CAP_KILL', 'CAP_DAC_READ_SEARCH'] },
    { name: 'a feature that is off needs nothing', text: status('0000000000000000'), features: { signalsPodProcesses: false, walksPodFiles: false }, missing: [] },
    { name: 'an unreadable status file reports nothing missing', text: null, features: all, missing: [] },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const logger = new RecordingLogger();
      expect(reportMissingCapabilities(tc.text, tc.features, logger)).toEqual(tc.missing);
      const coded = logger.lines.filter((l) => l.fields.code === 'EVA_ERR_CAPABILITY');
      expect(coded.map((l) => [l.level, l.fields.capability])).toEqual(tc.missing.map((c) => ['warn', c]));
      for (const line of coded) expect(line.msg).toContain(`this needs ${String(line.fields.capability)}, which the agent's container lacks`);
    });
  }
});

test('the coded error is one sentence: what was refused, the capability, and what happens instead', () => {
  const error = missingCapabilityError('CAP_KILL', 'Sending SIGKILL to 2 process(es) of pod app/p was refused (EPERM)', 'the pod is left to the API server and the kubelet');
  expect(error.code).toBe('EVA_ERR_CAPABILITY');
  expect(error.message).toBe("Sending SIGKILL to 2 process(es) of pod app/p was refused (EPERM): this needs CAP_KILL, which the agent's container lacks; the pod is left to the API server and the kubelet");
  expect(error.message).not.toContain('\n');
});

test('an EACCES on pod files names CAP_DAC_READ_SEARCH; other errors are described as before', () => {
  const fsError = (code: string): Error => Object.assign(new Error(code), { code });
  expect(describePodFileError(fsError('EACCES'))).toBe('EACCES (reading what another user owns needs CAP_DAC_READ_SEARCH)');
  expect(describePodFileError(fsError('EIO'))).toBe('EIO');
  expect(describePodFileError(new Error('boom'))).toBe('boom');
});
