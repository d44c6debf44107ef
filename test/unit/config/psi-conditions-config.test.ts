// psiConditions in the configuration file: its defaults (off), every field read, and each bad
// value refused at its field path and line, with a did-you-mean where a name is near a known one.

import { parseConfigText } from '../../../src/config/load.js';
import { ConfigError } from '../../../src/errors.js';

function problems(text: string): { field: string; line: number | undefined; message: string }[] {
  try {
    parseConfigText(text, 'test.yaml');
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => ({ field: p.field, line: p.line, message: p.message }));
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('psiConditions settings', () => {
  test('defaults: off, full line, memory 10/10, I/O 20/20, holds 10s and 1m, read every 2s, no taint', () => {
    expect(parseConfigText('', 'test.yaml').agent.psiConditions).toEqual({
      enabled: false,
      line: 'full',
      memory: { enabled: true, avg10ThresholdPercent: 10, avg60ThresholdPercent: 10 },
      io: { enabled: true, avg10ThresholdPercent: 20, avg60ThresholdPercent: 20 },
      setHoldDurationMs: 10_000,
      clearHoldDurationMs: 60_000,
      intervalMs: 2000,
      taint: { enabled: false },
    });
  });

  test('two decimals, and an integer, are taken as percent', () => {
    const psi = parseConfigText('psiConditions:\n  memory:\n    avg10Threshold: 0.01\n    avg60Threshold: 100\n', 'test.yaml').agent.psiConditions;
    expect(psi.memory).toEqual({ enabled: true, avg10ThresholdPercent: 0.01, avg60ThresholdPercent: 100 });
  });

  test.each([
    ['zero', 'psiConditions:\n  memory:\n    avg10Threshold: 0\n', 'psiConditions.memory.avg10Threshold', 3, 'must be above 0 and at most 100: 0'],
    ['over 100', 'psiConditions:\n  io:\n    avg60Threshold: 100.5\n', 'psiConditions.io.avg60Threshold', 3, 'must be above 0 and at most 100: 100.5'],
    ['three decimals', 'psiConditions:\n  memory:\n    avg60Threshold: 10.125\n', 'psiConditions.memory.avg60Threshold', 3, "must have at most two decimals (the kernel's precision): 10.125"],
    ['a percent sign', 'psiConditions:\n  memory:\n    avg10Threshold: "10%"\n', 'psiConditions.memory.avg10Threshold', 3, 'must be a number of percent such as 10 or 12.5 (no % sign): "10%"'],
    ['a line the kernel does not have', 'psiConditions:\n  line: ful\n', 'psiConditions.line', 2, 'must be one of "full", "some", not "ful" (did you mean "full"?)'],
    ['a hold over an hour', 'psiConditions:\n  clearHoldDuration: 2h\n', 'psiConditions.clearHoldDuration', 2, 'must be between 0s and 1h: 2h'],
    ['an interval under a second', 'psiConditions:\n  interval: 500ms\n', 'psiConditions.interval', 2, 'must be between 1s and 1m (the kernel recomputes its averages every 2 s): 500ms'],
  ])('%s', (_name, text, field, line, message) => {
    expect(problems(text)).toEqual([{ field, line, message }]);
  });

  test('a misspelt field: unknown, with the near name', () => {
    const [problem] = problems('psiConditions:\n  memory:\n    avg10Treshold: 5\n');
    expect(problem?.field).toBe('psiConditions.memory.avg10Treshold');
    expect(problem?.message).toBe('unknown field "avg10Treshold"; did you mean avg10Threshold?');
  });

  test('cpu: refused with why', () => {
    expect(problems('psiConditions:\n  cpu:\n    enabled: true\n')[0]?.message).toContain('is not supported: CPU pressure also rises when a pod is throttled at its own CPU limit');
  });
});
