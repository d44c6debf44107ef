// The PSI node conditions as check-config and explain say them: off, or the settings in force with
// whether the host can have them (said only when on); and, for explain, each resource's pressure
// now against its thresholds, judged as the running agent judges a reading. The hosts are
// in-memory cgroup trees read through the real pressure-file source.

import { parseConfigText } from '../../../src/config/load.js';
import { describePsiConditions, explainPsiConditions } from '../../../src/compose/psi-conditions.js';
import { createPsiSource } from '../../../src/observe/psi-source.js';
import { MemoryHostFs } from '../../fakes/memory-host-fs.js';

const pressure = (full10: number, full60: number): string => `some avg10=${full10.toFixed(2)} avg60=${full60.toFixed(2)} avg300=0.00 total=1\nfull avg10=${full10.toFixed(2)} avg60=${full60.toFixed(2)} avg300=0.00 total=1\n`;
const v2 = (): MemoryHostFs =>
  new MemoryHostFs()
    .write('/sys/fs/cgroup/cgroup.controllers', 'cpu io memory pids\n')
    .write('/proc/pressure/memory', pressure(0, 0))
    .write('/sys/fs/cgroup/kubepods/memory.pressure', pressure(12.5, 4))
    .write('/sys/fs/cgroup/kubepods/io.pressure', pressure(25, 21));
const v1 = (): MemoryHostFs => new MemoryHostFs().write('/sys/fs/cgroup/memory/memory.usage_in_bytes', '0\n').write('/proc/pressure/memory', pressure(0, 0));
const source = (fs: MemoryHostFs) => createPsiSource({ cgroupRoot: '/sys/fs/cgroup', podCgroupRoot: 'kubepods', procRoot: '/proc', fs });
const ON = 'psiConditions:\n  enabled: true\n  taint:\n    enabled: true\n';

describe('describePsiConditions (check-config)', () => {
  test('off: one line, and the host is not looked at', () => {
    expect(describePsiConditions(parseConfigText('', 'c.yaml'), () => { throw new Error('the host is not read when off'); })).toBe('PSI node conditions: off (psiConditions.enabled is false)\n');
  });

  test('on, on a cgroup v2 host with PSI: the thresholds, the holds, the types and the files', () => {
    expect(describePsiConditions(parseConfigText(ON, 'c.yaml'), () => source(v2()))).toBe(
      'PSI node conditions: on, the "full" line of the pods\' cgroup: memory avg10 >= 10% and avg60 >= 10%; I/O avg10 >= 20% and avg60 >= 20%\n' +
        '  set after 10s over both, cleared after 1m under both, read every 2s; a NoSchedule taint while True\n' +
        '  conditions: kube-eviction-agent.io/KubepodsMemoryContentionPressure, kube-eviction-agent.io/KubepodsDiskContentionPressure\n' +
        '  on this host: available (/sys/fs/cgroup/kubepods/memory.pressure, /sys/fs/cgroup/kubepods/io.pressure)\n',
    );
  });

  test('on, on a cgroup v1 host: says that none will be reported, and why', () => {
    expect(describePsiConditions(parseConfigText(ON, 'c.yaml'), () => source(v1()))).toContain('on this host: NOT AVAILABLE, none will be reported: the node runs cgroup v1');
  });
});

describe('explainPsiConditions (explain)', () => {
  test('each resource now against its thresholds, with what holding it would do; shown even while off', () => {
    expect(explainPsiConditions(parseConfigText('', 'c.yaml'), source(v2()))).toBe(
      'PSI node conditions (off: the figures against the configured thresholds), the "full" line of the pods\' cgroup:\n' +
        '  memory avg10 12.50% (>= 10%), avg60 4.00% (< 10%): between, neither sets nor clears it\n' +
        '  I/O    avg10 25.00% (>= 20%), avg60 21.00% (>= 20%): over, held 10s sets the condition\n',
    );
  });

  test('a resource turned off is still shown, and marked off; an unreadable file gives its reason', () => {
    const fs = v2();
    fs.remove('/sys/fs/cgroup/kubepods/io.pressure');
    const text = explainPsiConditions(parseConfigText('psiConditions:\n  enabled: true\n  memory:\n    enabled: false\n', 'c.yaml'), source(fs));
    expect(text).toContain('memory avg10 12.50% (>= 10%), avg60 4.00% (< 10%): between, neither sets nor clears it (this resource is off)');
    expect(text).toContain('cannot read /sys/fs/cgroup/kubepods/io.pressure: ENOENT');
  });

  test('cgroup v1: not available, and why', () => {
    expect(explainPsiConditions(parseConfigText('', 'c.yaml'), source(v1()))).toContain('not available on this host: the node runs cgroup v1');
  });
});
