// Parsing of /proc/<pid>/mountinfo, to find container writable layers: containerd mounts each
// container's root filesystem at `.../io.containerd.runtime.v2.task/<namespace>/<container-id>/rootfs`
// as an overlay whose `upperdir` option is the writable layer on disk. That is the one runtime
// whose mount point names the container; CRI-O and Docker mount at layer IDs, so their writable
// layers are not found (the container's rootfs stat is then left out, which the kubelet reads as
// no usage).

export interface MountInfoEntry {
  readonly mountPoint: string;
  readonly fsType: string;
  readonly source: string;
  /** The per-superblock options after the ` - ` separator (`rw,lowerdir=...,upperdir=...`). */
  readonly superOptions: string;
}

// mountinfo escapes space, tab, newline and backslash as three octal digits.
function unescapeOctal(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** Parses mountinfo lines; lines that do not have the documented shape are skipped. */
export function parseMountInfo(text: string): MountInfoEntry[] {
  const entries: MountInfoEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-', 6);
    if (fields.length < 10 || separator === -1 || fields.length < separator + 4) continue;
    entries.push({
      mountPoint: unescapeOctal(fields[4] as string),
      fsType: fields[separator + 1] as string,
      source: unescapeOctal(fields[separator + 2] as string),
      superOptions: unescapeOctal(fields.slice(separator + 3).join(' ')),
    });
  }
  return entries;
}

/** The value of one `key=value` mount option, or undefined. */
export function mountOption(options: string, key: string): string | undefined {
  for (const option of options.split(',')) {
    if (option.startsWith(`${key}=`)) return option.slice(key.length + 1);
  }
  return undefined;
}

/**
 * Container ID -> writable layer directory (a host path), from containerd's overlay rootfs mounts.
 * Only IDs in `containerIds` are returned.
 */
export function writableLayerDirs(entries: readonly MountInfoEntry[], containerIds: ReadonlySet<string>): Map<string, string> {
  const dirs = new Map<string, string>();
  for (const entry of entries) {
    if (entry.fsType !== 'overlay') continue;
    const match = /\/([^/]+)\/rootfs$/.exec(entry.mountPoint);
    if (match === null) continue;
    const id = match[1] as string;
    if (!containerIds.has(id)) continue;
    const upperDir = mountOption(entry.superOptions, 'upperdir');
    if (upperDir !== undefined) dirs.set(id, upperDir);
  }
  return dirs;
}
