// The pods' cgroup's pressure files for the PSI node conditions: `<kubepods>/memory.pressure` and
// `io.pressure` in the cgroup v2 hierarchy, the files the PSI notifier arms its memory trigger on,
// each kept open and read in place. Whether this node can have them at all is decided once, at
// start: cgroup v1 has no pressure file per cgroup, and a kernel built without PSI (or booted with
// psi=0) has none anywhere. A kubepods cgroup not there yet (the kubelet starting) is no such
// verdict: each read then fails with its reason, and the conditions are Unknown until it appears.

import { PSI_FILES, PSI_RESOURCES, type PressureFile, type PsiResource } from '../api/psi.js';
import { detectCgroupLayout } from '../host/cgroup-layout.js';
import type { HostFs } from '../host/host-fs.js';
import { KeptOpenFile } from '../host/kept-open-file.js';
import { parsePressureFile } from '../host/pressure-file.js';
import { describeError } from '../host/read-result.js';

export interface PsiSourceOptions {
  /** The cgroup mount as the agent sees it (hostRoot + observe.cgroupRoot). */
  readonly cgroupRoot: string;
  /** The kubepods cgroup relative to it (node cgroup included). */
  readonly podCgroupRoot: string;
  /** /proc as the agent sees it: /proc/pressure tells whether the kernel has PSI at all. */
  readonly procRoot: string;
  readonly fs: HostFs;
}

type FileReading = { readonly ok: true; readonly value: PressureFile } | { readonly ok: false; readonly reason: string };

// The kernel answers EOPNOTSUPP on every pressure file when PSI is compiled in but off (psi=0).
const isPsiDisabled = (error: unknown): boolean => typeof error === 'object' && error !== null && 'code' in error && error.code === 'EOPNOTSUPP';

/** Why the pods' cgroup cannot have pressure files on this node, or null. */
export function psiUnavailability(options: PsiSourceOptions): string | null {
  const { fs, cgroupRoot, procRoot } = options;
  const layout = detectCgroupLayout(fs, cgroupRoot);
  if (!layout.ok) return `no cgroup v2 memory hierarchy: ${layout.reason}`;
  if (layout.value.version === 'v1') return `the node runs cgroup v1 (${cgroupRoot}/memory), which has no pressure file per cgroup; PSI node conditions need cgroup v2`;
  const system = `${procRoot}/pressure/memory`;
  if (!fs.exists(system)) return `the kernel has no PSI (${system} does not exist: built without CONFIG_PSI)`;
  try {
    fs.readSingleRecordFile(system);
  } catch (error) {
    if (isPsiDisabled(error)) return `PSI is off in this kernel (reading ${system}: EOPNOTSUPP; the kernel was booted with psi=0)`;
    return `cannot read ${system}: ${describeError(error)}`;
  }
  return null;
}

export function createPsiSource(options: PsiSourceOptions): { readonly unavailable: string | null; readonly paths: Readonly<Record<PsiResource, string>>; read(): Record<PsiResource, FileReading>; close(): void } {
  const unavailable = psiUnavailability(options);
  const dir = options.podCgroupRoot === '' ? options.cgroupRoot : `${options.cgroupRoot}/${options.podCgroupRoot}`;
  const paths = Object.fromEntries(PSI_RESOURCES.map((r) => [r, `${dir}/${PSI_FILES[r]}`])) as Record<PsiResource, string>;
  const files = new Map(PSI_RESOURCES.map((r) => [r, new KeptOpenFile(options.fs, paths[r])]));
  const readOne = (resource: PsiResource): FileReading => {
    const file = files.get(resource) as KeptOpenFile;
    let text: string;
    try {
      text = file.read();
    } catch (error) {
      return { ok: false, reason: `cannot read ${file.path}: ${describeError(error)}` };
    }
    const parsed = parsePressureFile(text);
    return parsed.ok ? parsed : { ok: false, reason: `${file.path} is not a pressure file: ${parsed.reason}` };
  };
  return {
    unavailable,
    paths,
    read: () => Object.fromEntries(PSI_RESOURCES.map((r) => [r, readOne(r)])) as Record<PsiResource, FileReading>,
    close: () => {
      for (const file of files.values()) file.close();
    },
  };
}
