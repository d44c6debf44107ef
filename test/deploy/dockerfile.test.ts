// The Dockerfile, checked without a container engine: a build stage that compiles from an
// allowlisted context, a final stage that holds only the compiled output and production
// dependencies, an entry point and default command that match the package and the DaemonSet, and
// a HEALTHCHECK command that really tells a healthy agent from an unhealthy or silent one.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, posix } from 'node:path';
import { parseConfigText } from '../../src/config/load.js';
import { dockerignoreFilter, healthcheckCommand, readDockerfile, runCommands, stageCopies, stageWorkdir, type Stage } from './dockerfile.js';
import { imageNodeOptions } from '../../bench/lib/image-node.js';
import { DOCKERFILE_PATH, DOCKERIGNORE_PATH, embeddedConfig, loadManifest, REPO_ROOT } from './manifest.js';

// The image's Node, pinned to an exact release; scripts/install-node.sh fetches the same one for CI.
const NODE_VERSION = '24.22.3';
const BASE_IMAGE = `node:${NODE_VERSION}-bookworm-slim`;
const stages = readDockerfile(DOCKERFILE_PATH);
const buildStage = stages[0] as Stage;
const finalStage = stages.at(-1) as Stage;
const inContext = dockerignoreFilter(readFileSync(DOCKERIGNORE_PATH, 'utf8'));
const manifest = loadManifest();
const config = embeddedConfig(manifest);
const packageJson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };

const instruction = (stage: Stage, keyword: string): string | undefined => stage.instructions.findLast((i) => i.keyword === keyword)?.args;

describe('stages', () => {
  test('a build stage and a runtime stage, both on the same exact Node 24 slim image', () => {
    expect(stages.map((s) => s.image)).toEqual([BASE_IMAGE, BASE_IMAGE]);
    expect(buildStage.name).toBe('build');
  });

  test('CI fetches the same Node release, with its integrity pinned', () => {
    const script = readFileSync(join(REPO_ROOT, 'scripts', 'install-node.sh'), 'utf8');
    expect(script).toMatch(new RegExp(`\\[${NODE_VERSION.replaceAll('.', '\\.')}\\]='sha512-[A-Za-z0-9+/]+={0,2}'`));
  });

  // CI runs every test on both: the image's Node and the machine's Node 20.
  test("package.json's engines admit exactly the majors the tests run on, the image's release included", () => {
    const engines = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    const ranges = engines.split('||').map((r) => /^\^(\d+)\.(\d+)\.(\d+)$/.exec(r.trim())?.slice(1).map(Number));
    expect(ranges.every((r) => r !== undefined)).toBe(true);
    const admits = (version: string): boolean => {
      const [major, minor, patch] = version.replace(/^v/, '').split('.').map(Number) as [number, number, number];
      return ranges.some((r) => r !== undefined && r[0] === major && (minor > (r[1] as number) || (minor === r[1] && patch >= (r[2] as number))));
    };
    expect(ranges.map((r) => r?.[0])).toEqual([20, 24]);
    expect(admits(NODE_VERSION)).toBe(true);
    expect(admits(process.version)).toBe(true);
  });

  test('the build stage installs every dependency, then builds as CI does', () => {
    const commands = runCommands(buildStage);
    expect(commands.findIndex((c) => c.startsWith('npm ci'))).toBeLessThan(commands.indexOf('npm run build'));
    expect(commands.find((c) => c.startsWith('npm ci'))).not.toContain('--omit=dev');
  });

  test('the runtime stage installs production dependencies only, running install scripts', () => {
    const install = runCommands(finalStage).find((c) => c.startsWith('npm ci'));
    expect(install?.split(' ')).toEqual(expect.arrayContaining(['--omit=dev', '--ignore-scripts=false']));
  });

  test('the runtime stage takes only the compiled src and native directories from the build stage', () => {
    const buildOutput = posix.join(stageWorkdir(buildStage), 'dist');
    const fromBuild = stageCopies(finalStage).filter((c) => c.from === buildStage.name);
    expect(fromBuild.flatMap((c) => c.sources).sort()).toEqual([`${buildOutput}/native`, `${buildOutput}/src`]);
    for (const copy of fromBuild) expect(copy.absoluteDestination).toBe(posix.join(stageWorkdir(finalStage), 'dist', posix.basename(copy.sources[0] as string)));
  });

  test('the runtime stage takes only the package files from the context', () => {
    const fromContext = stageCopies(finalStage).filter((c) => c.from === null);
    expect(fromContext.flatMap((c) => c.sources).sort()).toEqual(['package-lock.json', 'package.json']);
  });
});

describe('build context', () => {
  const contextSources = stages.flatMap((stage) => stageCopies(stage).filter((c) => c.from === null).flatMap((c) => c.sources));

  for (const source of [...new Set(contextSources)]) {
    test(`${source}, copied from the context, exists and is admitted by .dockerignore`, () => {
      expect(existsSync(join(REPO_ROOT, source))).toBe(true);
      expect(inContext(source)).toBe(true);
    });
  }

  const kept: { name: string; path: string; admitted: boolean }[] = [
    { name: 'sources', path: 'src/main.ts', admitted: true },
    { name: 'nested sources', path: 'src/config/load.ts', admitted: true },
    { name: 'native declarations', path: 'native/libc.ts', admitted: true },
    { name: 'local dependencies', path: 'node_modules/yaml/package.json', admitted: false },
    { name: 'local build output', path: 'dist/src/main.js', admitted: false },
    { name: 'tests', path: 'test/deploy/dockerfile.test.ts', admitted: false },
    { name: 'git metadata', path: '.git/HEAD', admitted: false },
    { name: 'the deployment manifest', path: 'deploy/daemonset.yaml', admitted: false },
  ];
  for (const tc of kept) {
    test(`the context ${tc.admitted ? 'admits' : 'leaves out'} ${tc.name} (${tc.path})`, () => expect(inContext(tc.path)).toBe(tc.admitted));
  }
});

describe('.dockerignore matching', () => {
  // The matcher must follow the engine's rules, or the context checks above prove nothing.
  const cases: { name: string; patterns: string; path: string; admitted: boolean }[] = [
    { name: 'no patterns admit everything', patterns: '', path: 'a/b', admitted: true },
    { name: 'a directory pattern covers its contents', patterns: 'dist', path: 'dist/src/x.js', admitted: false },
    { name: 'a trailing slash is ignored', patterns: 'dist/', path: 'dist/x', admitted: false },
    { name: 'a leading slash is ignored', patterns: '/dist', path: 'dist/x', admitted: false },
    { name: 'star stays within one segment', patterns: '*.md', path: 'docs/a.md', admitted: true },
    { name: 'double star spans segments', patterns: '**/*.md', path: 'docs/a.md', admitted: false },
    { name: 'the last matching pattern wins', patterns: '*\n!src', path: 'src/a.ts', admitted: true },
    { name: 'an exception is undone by a later pattern', patterns: '*\n!src\nsrc/secret', path: 'src/secret/k', admitted: false },
    { name: 'comments are not patterns', patterns: '# src', path: 'src/a.ts', admitted: true },
  ];
  for (const tc of cases) test(tc.name, () => expect(dockerignoreFilter(tc.patterns)(tc.path)).toBe(tc.admitted));
});

describe('entry point and default command', () => {
  test('the entry point is the package binary under /app, on a young generation of 2 MiB semi-spaces (the footprint benchmark starts `run` the same way)', () => {
    const script = posix.join(stageWorkdir(finalStage), packageJson.bin['kube-eviction-agent'] as string);
    expect(JSON.parse(instruction(finalStage, 'ENTRYPOINT') ?? 'null')).toEqual(['node', ...imageNodeOptions(REPO_ROOT), script]);
    expect(imageNodeOptions(REPO_ROOT)).toEqual(['--max-semi-space-size=2']);
  });

  test('the default command runs the agent on the configuration file the DaemonSet mounts', () => {
    expect(JSON.parse(instruction(finalStage, 'CMD') ?? 'null')).toEqual(['run', '--config', config.path]);
  });

  test('it runs as root (cgroup writes and signals to other containers need it)', () => {
    expect(instruction(finalStage, 'USER') ?? 'root').toBe('root');
  });
});

describe('HEALTHCHECK', () => {
  const command = healthcheckCommand(finalStage);
  let server: Server | null = null;

  afterEach(async () => {
    if (server !== null) {
      server.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
      server = null;
    }
  });

  // Runs the HEALTHCHECK's command as the engine would, against `url`; resolves with its exit code.
  function runHealthcheck(url: string): Promise<{ code: number | null; elapsedMs: number }> {
    if (command === null) throw new Error('the Dockerfile has no HEALTHCHECK');
    const startedMs = Date.now();
    const env: NodeJS.ProcessEnv = { ...process.env, KEA_HEALTHCHECK_URL: url };
    delete env.NODE_OPTIONS;
    const child = spawn(process.execPath, command.slice(1), { env, stdio: 'ignore' });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => resolve({ code, elapsedMs: Date.now() - startedMs }));
    });
  }

  async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
    server = createServer(handler);
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`;
  }

  test('runs node, which the slim image has (it has no curl)', () => {
    expect(command?.[0]).toBe('node');
  });

  // The probe listener, as the DaemonSet's probes: the metrics port's clients share another limit.
  test("asks /healthz on the DaemonSet configuration's probe port by default", () => {
    const port = parseConfigText(config.text, 'config').agent.server.probePort;
    expect(port).not.toBe(0);
    expect(command?.join(' ')).toContain(`http://127.0.0.1:${port}/healthz`);
  });

  const answers: { name: string; status: number; exitCode: number }[] = [
    { name: 'healthy (200) passes', status: 200, exitCode: 0 },
    { name: 'unhealthy (503) fails', status: 503, exitCode: 1 },
    { name: 'not found (404) fails', status: 404, exitCode: 1 },
  ];
  for (const tc of answers) {
    test(tc.name, async () => {
      const requested: string[] = [];
      const url = await serve((req, res) => {
        requested.push(req.url ?? '');
        res.writeHead(tc.status).end('body\n');
      });
      expect((await runHealthcheck(url)).code).toBe(tc.exitCode);
      expect(requested).toEqual(['/healthz']);
    });
  }

  test('nothing listening fails', async () => {
    const url = await serve(() => undefined);
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = null;
    expect((await runHealthcheck(url)).code).toBe(1);
  });

  test('a hung agent fails within the HEALTHCHECK timeout', async () => {
    const url = await serve(() => undefined);
    const { code, elapsedMs } = await runHealthcheck(url);
    expect(code).toBe(1);
    const timeoutS = Number(/--timeout=(\d+)s/.exec(instruction(finalStage, 'HEALTHCHECK') ?? '')?.[1]);
    expect(elapsedMs).toBeLessThan(timeoutS * 1000);
  });
});
