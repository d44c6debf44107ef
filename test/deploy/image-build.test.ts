// The image scripts/build-image.sh builds without a container engine, held to the Dockerfile it
// stands in for: the Node release and the Debian suite of the FROM line, the final stage's WORKDIR,
// USER, ENV, ENTRYPOINT, CMD and HEALTHCHECK in the image's configuration, and an /app that is
// exactly scripts/runtime-tree.sh's tree. Change the Dockerfile without the script (or the other way
// round) and this fails. It also builds the image twice from the same inputs, the second time into an
// empty cache, and expects the same bytes and so the same digest, then the cached archive found
// again. Slow: two builds (npm ci each) and a third tree.
// It needs apt with Debian bookworm's sources and the image's Node (scripts/install-node.sh):
// without them it skips with the reason printed, and fails instead with KEA_E2E_REQUIRED=1 (CI).

import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { agentImageRef, BUILD_IMAGE_SCRIPT } from '../e2e/harness/agent-image.js';
import { execForm, healthcheckCommand, readDockerfile, type Stage } from './dockerfile.js';
import { DOCKERFILE_PATH, REPO_ROOT, RUNTIME_TREE_SCRIPT } from './manifest.js';
import { readImageArchive, type ImageArchive, type TarEntry } from './oci-archive.js';

const execFileAsync = promisify(execFile);
const SETUP_TIMEOUT_MS = 900_000;
const BUILD_TIMEOUT_MS = 420_000;
// The node image's own PATH, which the Dockerfile inherits.
const NODE_IMAGE_PATH = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const LAYER = { base: 0, node: 1, app: 2 } as const;

const stages = readDockerfile(DOCKERFILE_PATH);
const finalStage = stages.at(-1) as Stage;
const required = process.env.KEA_E2E_REQUIRED === '1';
const instruction = (keyword: string): string | undefined => finalStage.instructions.findLast((i) => i.keyword === keyword)?.args;

/** node:<x.y.z>-<suite>-slim, as both FROM lines name it. */
function baseImage(): { nodeVersion: string; suite: string } {
  const match = /^node:(\d+\.\d+\.\d+)-([a-z]+)-slim(?:@sha256:[0-9a-f]{64})?$/.exec(finalStage.image);
  if (match === null) throw new Error(`the final stage's FROM is not node:<x.y.z>-<suite>-slim: ${finalStage.image}`);
  return { nodeVersion: match[1] as string, suite: match[2] as string };
}

/** The final stage's ENV instructions, in either form (`K=V K2=V2` or `K V`), as KEY=VALUE lines. */
function dockerfileEnv(): string[] {
  const env: string[] = [];
  for (const i of finalStage.instructions.filter((x) => x.keyword === 'ENV')) {
    const pairs = i.args.match(/[A-Za-z_][A-Za-z0-9_]*=("[^"]*"|\S*)/g);
    if (pairs !== null && pairs.join(' ') === i.args.trim()) env.push(...pairs.map((p) => p.replace(/="(.*)"$/, '=$1')));
    else {
      const [key, ...value] = i.args.trim().split(/\s+/);
      env.push(`${key as string}=${value.join(' ')}`);
    }
  }
  return env;
}

/** A Docker duration (`30s`, `1m30s`, `500ms`) in nanoseconds. */
function durationNs(text: string): number {
  const units: Record<string, number> = { ns: 1, us: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
  const parts = [...text.matchAll(/(\d+)(ns|us|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) throw new Error(`not a duration: ${text}`);
  return parts.reduce((total, p) => total + Number(p[1]) * (units[p[2] as string] as number), 0);
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

// Every path under dir, relative to it, directories included.
function treePaths(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? [relative(base, path), ...treePaths(path, base)] : [relative(base, path)];
  });
}

interface Setup {
  readonly root: string;
  readonly first: ImageArchive;
  readonly firstBytes: Buffer;
  readonly secondBytes: Buffer;
  /** The archive paths the second (cold) and third (cached) builds printed, in cacheDir. */
  readonly cached: { readonly second: string; readonly third: string; readonly thirdStderr: string; readonly cacheDir: string };
  readonly tree: string;
  readonly stderr: string;
}

let setup: Setup | null = null;
let skipReason: string | null = null;

async function build(env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }> {
  return execFileAsync('bash', [BUILD_IMAGE_SCRIPT], { env: { ...process.env, ...env }, timeout: BUILD_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 });
}

const lastLine = (text: string): string => text.trimEnd().split('\n').at(-1) ?? '';

beforeAll(async () => {
  const root = mkdtempSync(join(tmpdir(), 'kea-image-build-'));
  // A snapshot of the compiled output, so that a rebuild of dist/ meanwhile cannot make the two
  // images differ.
  const buildOutput = join(root, 'dist');
  try {
    for (const dir of ['src', 'native']) cpSync(join(REPO_ROOT, 'dist', dir), join(buildOutput, dir), { recursive: true });
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`the project is not built (npm run build): ${String(err)}`);
  }
  let first: { stdout: string; stderr: string };
  try {
    first = await build({ KEA_IMAGE_OUTPUT: join(root, 'first.tar'), KEA_BUILD_OUTPUT: buildOutput });
  } catch (err) {
    const stderr = ((err as { stderr?: string }).stderr ?? String(err)).trim();
    rmSync(root, { recursive: true, force: true });
    skipReason = `scripts/build-image.sh cannot build here: ${stderr.split('\n').at(-1) ?? ''}`;
    if (required) throw new Error(`KEA_E2E_REQUIRED=1 but ${skipReason}\n${stderr}`);
    console.log(`skipped: the image build: ${skipReason}`);
    return;
  }
  // The second build goes through an empty cache of its own (the image's Node linked in from the
  // real one, so nothing is fetched), and a third call must find it there.
  const cacheDir = join(root, 'cache');
  mkdirSync(cacheDir);
  const installedNode = lastLine(spawnSync('bash', [join(REPO_ROOT, 'scripts', 'install-node.sh')], { encoding: 'utf8' }).stdout);
  symlinkSync(dirname(dirname(installedNode)), join(cacheDir, `node-v${baseImage().nodeVersion}`));
  const second = await build({ KEA_CACHE_DIR: cacheDir, KEA_BUILD_OUTPUT: buildOutput });
  const third = await build({ KEA_CACHE_DIR: cacheDir, KEA_BUILD_OUTPUT: buildOutput });
  const tree = join(root, 'tree');
  const script = spawnSync('bash', [RUNTIME_TREE_SCRIPT, tree], { env: { ...process.env, KEA_BUILD_OUTPUT: buildOutput }, encoding: 'utf8', timeout: BUILD_TIMEOUT_MS });
  if (script.status !== 0) throw new Error(`scripts/runtime-tree.sh failed: ${script.stderr}`);
  setup = {
    root,
    first: readImageArchive(join(root, 'first.tar')),
    firstBytes: readFileSync(join(root, 'first.tar')),
    secondBytes: readFileSync(lastLine(second.stdout)),
    cached: { second: lastLine(second.stdout), third: lastLine(third.stdout), thirdStderr: third.stderr, cacheDir },
    tree,
    stderr: first.stderr,
  };
}, SETUP_TIMEOUT_MS);

afterAll(() => {
  if (setup !== null) rmSync(setup.root, { recursive: true, force: true });
});

function imageTest(name: string, fn: (s: Setup) => void): void {
  test(name, () => {
    if (skipReason !== null) {
      console.log(`skipped: ${name}: ${skipReason}`);
      return;
    }
    if (setup === null) throw new Error('setup did not run');
    fn(setup);
  });
}

describe('the archive', () => {
  imageTest('is an OCI layout with one image, named by the chart appVersion for containerd and OCI tools alike', (s) => {
    expect(s.first.layout).toEqual({ imageLayoutVersion: '1.0.0' });
    expect(s.first.entries.map((e) => e.name)).toEqual(expect.arrayContaining(['oci-layout', 'index.json']));
    expect(s.first.manifestDescriptor.annotations).toEqual({ 'io.containerd.image.name': agentImageRef(), 'org.opencontainers.image.ref.name': agentImageRef() });
    expect(s.first.manifestDescriptor.platform).toEqual({ architecture: 'amd64', os: 'linux' });
    expect(s.first.manifest.layers.map((l) => l.mediaType)).toEqual(Array(3).fill('application/vnd.oci.image.layer.v1.tar+gzip'));
  });

  imageTest('the same inputs build the same bytes, so the same digest, twice', (s) => {
    expect(sha256(s.secondBytes)).toBe(sha256(s.firstBytes));
    expect(s.stderr).toContain(s.first.manifestDescriptor.digest);
  });

  imageTest('a build is cached under a hash of its inputs, and found there the next time', (s) => {
    const name = /^agent-image-(.+)-([0-9a-f]{16})\.tar$/.exec(basename(s.cached.second));
    expect([dirname(s.cached.second), name?.[1]]).toEqual([s.cached.cacheDir, agentImageRef().split(':')[1]]);
    expect(s.cached.third).toBe(s.cached.second);
    expect(s.cached.thirdStderr).not.toContain('build-image: built');
  });

  imageTest('every layer entry is owned by 0:0 at the one fixed time, in sorted order', (s) => {
    for (const layer of Object.values(LAYER)) {
      const entries = s.first.layerEntries(layer);
      const odd = entries.filter((e) => e.uid !== 0 || e.gid !== 0 || e.mtimeS !== 0).map((e) => e.name);
      expect(odd).toEqual([]);
      // GNU tar's --sort=name orders each directory's names bytewise, depth-first.
      const names = entries.map((e) => e.name.replace(/\/$/, ''));
      const sorted = [...names].sort((a, b) => {
        const [pa, pb] = [a.split('/'), b.split('/')];
        for (let i = 0; i < Math.min(pa.length, pb.length); i++) if (pa[i] !== pb[i]) return (pa[i] as string) < (pb[i] as string) ? -1 : 1;
        return pa.length - pb.length;
      });
      expect(names).toEqual(sorted);
    }
  });
});

describe('the configuration follows the Dockerfile', () => {
  imageTest("ENTRYPOINT, CMD, WORKDIR and USER are the final stage's", (s) => {
    const c = s.first.config.config;
    expect({ Entrypoint: c.Entrypoint, Cmd: c.Cmd, WorkingDir: c.WorkingDir, User: c.User }).toEqual({
      Entrypoint: execForm(instruction('ENTRYPOINT') ?? 'null'),
      Cmd: execForm(instruction('CMD') ?? 'null'),
      WorkingDir: instruction('WORKDIR'),
      User: instruction('USER') ?? 'root',
    });
  });

  imageTest("ENV is the final stage's over the node image's PATH and NODE_VERSION", (s) => {
    expect(s.first.config.config.Env).toEqual([NODE_IMAGE_PATH, `NODE_VERSION=${baseImage().nodeVersion}`, ...dockerfileEnv()]);
  });

  imageTest("HEALTHCHECK is the final stage's, command and timings", (s) => {
    const options = instruction('HEALTHCHECK') ?? '';
    const option = (name: string): string => new RegExp(`--${name}=(\\S+)`).exec(options)?.[1] ?? '';
    expect(s.first.config.config.Healthcheck).toEqual({
      Test: ['CMD', ...(healthcheckCommand(finalStage) ?? [])],
      Interval: durationNs(option('interval')),
      Timeout: durationNs(option('timeout')),
      StartPeriod: durationNs(option('start-period')),
      Retries: Number(option('retries')),
    });
  });

  imageTest('an amd64 Linux image created at the fixed time, labelled with the version', (s) => {
    const { created, architecture, os } = s.first.config;
    expect({ created, architecture, os }).toEqual({ created: '1970-01-01T00:00:00Z', architecture: 'amd64', os: 'linux' });
    expect(s.first.config.config.Labels?.['org.opencontainers.image.version']).toBe(agentImageRef().split(':')[1]);
  });
});

describe('the layers', () => {
  const file = (entries: readonly TarEntry[], name: string): TarEntry | undefined => entries.find((e) => e.name === name);

  imageTest("the base is Debian of the FROM line's suite, with the libraries node links against", (s) => {
    const base = s.first.layerEntries(LAYER.base);
    const osRelease = file(base, 'usr/lib/os-release')?.data.toString('utf8') ?? '';
    expect(/^VERSION_CODENAME=(\S+)$/m.exec(osRelease)?.[1]).toBe(baseImage().suite);
    for (const lib of ['usr/lib/x86_64-linux-gnu/libc.so.6', 'usr/lib/x86_64-linux-gnu/libstdc++.so.6', 'usr/lib/x86_64-linux-gnu/libgcc_s.so.1', 'usr/lib64/ld-linux-x86-64.so.2']) {
      expect([lib, file(base, lib) !== undefined]).toEqual([lib, true]);
    }
    // Merged /usr, as bookworm's images have it.
    expect(['bin', 'lib', 'lib64', 'sbin'].map((d) => [d, file(base, d)?.type, file(base, d)?.linkName])).toEqual(['bin', 'lib', 'lib64', 'sbin'].map((d) => [d, '2', `usr/${d}`]));
    expect(file(base, 'tmp/')?.mode).toBe(0o1777);
    expect(file(base, 'etc/passwd')?.data.toString('utf8')).toMatch(/^root:x:0:0:/);
    const status = file(base, 'var/lib/dpkg/status')?.data.toString('utf8') ?? '';
    expect([...status.matchAll(/^Package: (\S+)$/gm)].map((m) => m[1])).toEqual(['base-files', 'gcc-12-base', 'libgcc-s1', 'libc6', 'libstdc++6']);
  });

  imageTest("node is the FROM line's release at /usr/local/bin/node, as in the node image", (s) => {
    const node = s.first.layerEntries(LAYER.node);
    const binary = file(node, 'usr/local/bin/node');
    expect(binary?.mode).toBe(0o755);
    const installed = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'install-node.sh')], { encoding: 'utf8' }).stdout.trimEnd().split('\n').at(-1) ?? '';
    expect(statSync(installed).size).toBe(binary?.data.length);
    expect(sha256(binary?.data ?? Buffer.alloc(0))).toBe(sha256(readFileSync(installed)));
    expect(spawnSync(installed, ['--version'], { encoding: 'utf8' }).stdout.trim()).toBe(`v${baseImage().nodeVersion}`);
  });

  imageTest("/app holds exactly scripts/runtime-tree.sh's tree, file for file", (s) => {
    const app = s.first.layerEntries(LAYER.app);
    const workdir = (instruction('WORKDIR') ?? '').replace(/^\//, '');
    const inImage = app.map((e) => e.name.replace(/\/$/, '')).filter((n) => n.startsWith(`${workdir}/`)).map((n) => n.slice(workdir.length + 1)).sort();
    expect(inImage).toEqual(treePaths(s.tree).sort());
    const mainJs = file(app, `${workdir}/dist/src/main.js`);
    expect(mainJs?.data.equals(readFileSync(join(s.tree, 'dist', 'src', 'main.js')))).toBe(true);
    // Nothing outside it: the layer starts at the directory itself.
    expect(app[0]?.name).toBe(`${workdir}/`);
    expect(app.filter((e) => !e.name.startsWith(`${workdir}/`)).map((e) => e.name)).toEqual([]);
  });
});

describe('bad input', () => {
  test('a SOURCE_DATE_EPOCH that is not a whole number of seconds is refused, naming it', () => {
    const result = spawnSync('bash', [BUILD_IMAGE_SCRIPT], { env: { ...process.env, SOURCE_DATE_EPOCH: 'yesterday' }, encoding: 'utf8' });
    expect({ status: result.status, stderr: result.stderr.trim() }).toEqual({ status: 2, stderr: "build-image: SOURCE_DATE_EPOCH must be a whole number of seconds (got 'yesterday')" });
  });

  test('arguments are refused with the usage', () => {
    const result = spawnSync('bash', [BUILD_IMAGE_SCRIPT, 'out.tar'], { encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^usage: /);
  });
});
