// Reading the host's identity: each file under the host root, the D-Bus machine ID as fallback,
// values trimmed and lowercased, and a missing or malformed file leaving its part null with the reason.

import { readHostIdentity } from '../../../src/host/host-identity.js';

const BOOT = 'F946514D-0E04-4C27-A296-EFA5BF0192D1\n';
const MACHINE = '3d1219c7c4c5404aaa1f6d2a48adfda4\n';
const UUID = 'EC2A7B3E-1D4C-4F5A-8B9C-0D1E2F3A4B5C\n';

function reader(files: Record<string, string>): (path: string) => string {
  return (path) => {
    const text = files[path];
    if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return text;
  };
}

describe('readHostIdentity', () => {
  const cases: { name: string; files: Record<string, string>; expected: { bootID: string | null; machineID: string | null; systemUUID: string | null }; problems: RegExp[] }[] = [
    {
      name: 'all three under the host root',
      files: { '/host/proc/sys/kernel/random/boot_id': BOOT, '/host/etc/machine-id': MACHINE, '/host/sys/class/dmi/id/product_uuid': UUID },
      expected: { bootID: 'f946514d-0e04-4c27-a296-efa5bf0192d1', machineID: '3d1219c7c4c5404aaa1f6d2a48adfda4', systemUUID: 'ec2a7b3e-1d4c-4f5a-8b9c-0d1e2f3a4b5c' },
      problems: [],
    },
    {
      name: 'no /etc/machine-id: D-Bus\'s copy; no DMI table (a VM without it)',
      files: { '/host/proc/sys/kernel/random/boot_id': BOOT, '/host/var/lib/dbus/machine-id': MACHINE },
      expected: { bootID: 'f946514d-0e04-4c27-a296-efa5bf0192d1', machineID: '3d1219c7c4c5404aaa1f6d2a48adfda4', systemUUID: null },
      problems: [/system UUID is unknown: \/host\/sys\/class\/dmi\/id\/product_uuid: ENOENT/],
    },
    {
      name: 'malformed files are not identities',
      files: { '/host/proc/sys/kernel/random/boot_id': 'not-a-uuid\n', '/host/etc/machine-id': '\n', '/host/var/lib/dbus/machine-id': 'x'.repeat(500), '/host/sys/class/dmi/id/product_uuid': UUID },
      expected: { bootID: null, machineID: null, systemUUID: 'ec2a7b3e-1d4c-4f5a-8b9c-0d1e2f3a4b5c' },
      problems: [/boot ID is unknown: .*not a boot ID \("not-a-uuid"\)/, /machine ID is unknown: \/host\/etc\/machine-id: not a machine ID \(""\); \/host\/var\/lib\/dbus\/machine-id: not a machine ID \("x{64}"\)/],
    },
  ];
  test.each(cases)('$name', ({ files, expected, problems }) => {
    const identity = readHostIdentity({ hostRoot: '/host', procRoot: '/proc' }, reader(files));
    expect({ bootID: identity.bootID, machineID: identity.machineID, systemUUID: identity.systemUUID }).toEqual(expected);
    expect(identity.problems).toHaveLength(problems.length);
    problems.forEach((pattern, i) => expect(identity.problems[i]).toMatch(pattern));
  });

  test('this machine: the boot ID the kernel reports', () => {
    const identity = readHostIdentity({ hostRoot: '/', procRoot: '/proc' });
    expect(identity.bootID).toMatch(/^[0-9a-f-]{36}$/);
  });
});
