// Reads an OCI image archive (the tar scripts/build-image.sh writes: oci-layout, index.json,
// blobs/sha256/) without a container engine: the index, the manifest, the image configuration and
// each layer's entries, every blob checked against its digest. Enough of tar for these archives:
// ustar and GNU headers, GNU long names and link names, pax headers skipped.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

export interface TarEntry {
  readonly name: string;
  /** '0' file, '1' hard link, '2' symbolic link, '5' directory, ... */
  readonly type: string;
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  readonly mtimeS: number;
  readonly linkName: string;
  readonly data: Buffer;
}

const BLOCK_BYTES = 512;

function field(header: Buffer, offset: number, length: number): string {
  const raw = header.subarray(offset, offset + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString('utf8');
}

function octal(header: Buffer, offset: number, length: number, what: string): number {
  const text = field(header, offset, length).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new Error(`tar: the ${what} field is not octal: ${JSON.stringify(text)}`);
  return parseInt(text, 8);
}

/** The entries of an uncompressed tar, in archive order. */
export function readTar(tar: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  let offset = 0;
  let longName: string | null = null;
  let longLink: string | null = null;
  while (offset + BLOCK_BYTES <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK_BYTES);
    if (header.every((b) => b === 0)) break;
    const size = octal(header, 124, 12, 'size');
    const type = field(header, 156, 1) || '0';
    const data = tar.subarray(offset + BLOCK_BYTES, offset + BLOCK_BYTES + size);
    if (data.length !== size) throw new Error(`tar: an entry at byte ${offset} runs past the end of the archive`);
    offset += BLOCK_BYTES + Math.ceil(size / BLOCK_BYTES) * BLOCK_BYTES;
    if (type === 'L') {
      longName = data.toString('utf8').replace(/\0+$/, '');
      continue;
    }
    if (type === 'K') {
      longLink = data.toString('utf8').replace(/\0+$/, '');
      continue;
    }
    if (type === 'x' || type === 'g') continue;
    const prefix = field(header, 345, 155);
    const name = longName ?? (field(header, 257, 6).startsWith('ustar') && prefix !== '' ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100));
    entries.push({
      name,
      type,
      mode: octal(header, 100, 8, 'mode'),
      uid: octal(header, 108, 8, 'uid'),
      gid: octal(header, 116, 8, 'gid'),
      mtimeS: octal(header, 136, 12, 'mtime'),
      linkName: longLink ?? field(header, 157, 100),
      data,
    });
    longName = null;
    longLink = null;
  }
  return entries;
}

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly platform?: { readonly architecture: string; readonly os: string };
}

export interface ImageConfig {
  readonly created?: string;
  readonly architecture: string;
  readonly os: string;
  readonly config: {
    readonly User?: string;
    readonly Env?: readonly string[];
    readonly Entrypoint?: readonly string[];
    readonly Cmd?: readonly string[];
    readonly WorkingDir?: string;
    readonly Healthcheck?: { readonly Test: readonly string[]; readonly Interval: number; readonly Timeout: number; readonly StartPeriod: number; readonly Retries: number };
    readonly Labels?: Readonly<Record<string, string>>;
  };
  readonly rootfs: { readonly type: string; readonly diff_ids: readonly string[] };
  readonly history?: readonly { readonly created_by?: string }[];
}

export interface ImageArchive {
  /** The archive's own top-level entries (oci-layout, index.json, blobs/...). */
  readonly entries: readonly TarEntry[];
  readonly layout: { readonly imageLayoutVersion: string };
  readonly index: { readonly schemaVersion: number; readonly mediaType?: string; readonly manifests: readonly Descriptor[] };
  /** The one manifest's descriptor in index.json (its digest is the image's). */
  readonly manifestDescriptor: Descriptor;
  readonly manifest: { readonly schemaVersion: number; readonly mediaType: string; readonly config: Descriptor; readonly layers: readonly Descriptor[] };
  readonly config: ImageConfig;
  /** Each layer's entries, uncompressed, in the manifest's order. */
  layerEntries(index: number): TarEntry[];
}

/** Reads and checks an OCI archive holding exactly one image. */
export function readImageArchive(path: string): ImageArchive {
  const entries = readTar(readFileSync(path));
  const byName = new Map(entries.map((e) => [e.name.replace(/^\.\//, ''), e]));
  const file = (name: string): Buffer => {
    const entry = byName.get(name);
    if (entry === undefined || entry.type !== '0') throw new Error(`${path}: no file ${name} in the archive`);
    return entry.data;
  };
  const blob = (descriptor: Descriptor): Buffer => {
    const match = /^sha256:([0-9a-f]{64})$/.exec(descriptor.digest);
    if (match === null) throw new Error(`${path}: digest ${descriptor.digest} is not sha256`);
    const data = file(`blobs/sha256/${match[1] as string}`);
    const actual = createHash('sha256').update(data).digest('hex');
    if (`sha256:${actual}` !== descriptor.digest) throw new Error(`${path}: blob ${descriptor.digest} has digest sha256:${actual}`);
    if (data.length !== descriptor.size) throw new Error(`${path}: blob ${descriptor.digest} is ${data.length} bytes, its descriptor says ${descriptor.size}`);
    return data;
  };
  const json = <T>(data: Buffer): T => JSON.parse(data.toString('utf8')) as T;
  const index = json<ImageArchive['index']>(file('index.json'));
  if (index.manifests.length !== 1) throw new Error(`${path}: index.json lists ${index.manifests.length} manifests, expected 1`);
  const manifestDescriptor = index.manifests[0] as Descriptor;
  const manifest = json<ImageArchive['manifest']>(blob(manifestDescriptor));
  const config = json<ImageConfig>(blob(manifest.config));
  return {
    entries,
    layout: json(file('oci-layout')),
    index,
    manifestDescriptor,
    manifest,
    config,
    layerEntries(i: number): TarEntry[] {
      const descriptor = manifest.layers[i];
      if (descriptor === undefined) throw new Error(`${path}: no layer ${i}`);
      const tar = gunzipSync(blob(descriptor));
      const diffId = `sha256:${createHash('sha256').update(tar).digest('hex')}`;
      if (diffId !== config.rootfs.diff_ids[i]) throw new Error(`${path}: layer ${i} unpacks to ${diffId}, the configuration's diff_id is ${config.rootfs.diff_ids[i]}`);
      return readTar(tar);
    },
  };
}
