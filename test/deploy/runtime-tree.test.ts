// The image's /app tree, built and run without a container engine, on the image's own Node (the
// exact release the Dockerfile names, fetched by scripts/install-node.sh). The Dockerfile's build
// stage is replayed from its own COPY and RUN lines (the context filtered by .dockerignore; the
// repository's installed dependencies stand in for its `npm ci`), scripts/runtime-tree.sh then
// builds the final stage's tree from that output, and the agent is run from it: its version, the
// DaemonSet's configuration, every module loading with production dependencies only, and the
// capability check under exactly the DaemonSet's capabilities. Slow: it compiles the project and
// runs `npm ci`.

import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative } from 'node:path';
import { findImageNode } from '../../bench/lib/image-node.js';
import { capabilityCheckUnavailable, runWithCapabilities, STACK_FRAME } from '../helpers/capability-check.js';
import { dockerignoreFilter, readDockerfile, runCommands, stageCopies, stageWorkdir, type Stage } from './dockerfile.js';
import { agentContainer, DOCKERFILE_PATH, DOCKERIGNORE_PATH, embeddedConfig, loadManifest, packageVersion, REPO_ROOT, RUNTIME_TREE_SCRIPT } from './manifest.js';

const SETUP_TIMEOUT_MS = 300_000;
const COMMAND_TIMEOUT_MS = 120_000;

const stages = readDockerfile(DOCKERFILE_PATH);
const buildStage = stages[0] as Stage;
const finalStage = stages.at(-1) as Stage;
const inContext = dockerignoreFilter(readFileSync(DOCKERIGNORE_PATH, 'utf8'));
const manifest = loadManifest();
const container = agentContainer(manifest);
const packageJson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };

// The image's Node when it is there (CI requires it); else the tree is built and run on this one.
const imageNode = findImageNode(REPO_ROOT);
const nodeBin = imageNode.ok ? imageNode.path : process.execPath;
const required = process.env.KEA_E2E_REQUIRED === '1';
if (!imageNode.ok) console.log(`runtime tree on ${process.version} instead of the image's Node: ${imageNode.reason}`);

// The agent runs with the NODE_OPTIONS the DaemonSet gives it, and none of jest's; `node` and npm
// run on the image's Node.
function agentEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${dirname(nodeBin)}:${process.env.PATH ?? ''}` };
  delete env.NODE_OPTIONS;
  const nodeOptions = (container.env as { name: string; value?: string }[]).find((e) => e.name === 'NODE_OPTIONS')?.value;
  if (nodeOptions !== undefined) env.NODE_OPTIONS = nodeOptions;
  return env;
}

function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { cwd: options.cwd, env: options.env ?? agentEnv(), encoding: 'utf8', timeout: COMMAND_TIMEOUT_MS });
  if (result.error !== undefined) throw result.error;
  return result;
}

function describeRun(result: SpawnSyncReturns<string>): string {
  return `exit ${result.status}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

// A COPY as the engine performs it: a directory's contents go into the destination; several
// sources, or a destination ending in `/`, make the destination a directory.
function replayCopy(sources: readonly string[], destination: string, target: string): void {
  const intoDirectory = sources.length > 1 || destination.endsWith('/');
  for (const source of sources) {
    const from = join(REPO_ROOT, source);
    const to = intoDirectory && !statSync(from).isDirectory() ? join(target, posix.basename(source)) : target;
    cpSync(from, to, { recursive: true, filter: (path) => inContext(relative(REPO_ROOT, path)) });
  }
}

interface Setup {
  readonly root: string;
  readonly app: string;
  readonly build: SpawnSyncReturns<string>;
  readonly script: SpawnSyncReturns<string>;
}

let setup: Setup | null = null;

function ready(): Setup {
  if (setup === null) throw new Error('setup did not run');
  return setup;
}

beforeAll(() => {
  const root = mkdtempSync(join(tmpdir(), 'kea-runtime-tree-'));
  // The build stage's filesystem is replayed under root/build, so /src is root/build/src.
  const buildRoot = join(root, 'build');
  const workdir = join(buildRoot, stageWorkdir(buildStage));
  mkdirSync(workdir, { recursive: true });
  for (const copy of stageCopies(buildStage)) {
    if (copy.from !== null) throw new Error(`the build stage copies from ${copy.from}; only the context is replayed`);
    replayCopy(copy.sources, copy.destination, join(buildRoot, copy.absoluteDestination));
  }
  let build: SpawnSyncReturns<string> | null = null;
  for (const command of runCommands(buildStage)) {
    if (command.startsWith('npm ci')) {
      // Same lockfile, already installed with dev dependencies: no network, same packages.
      symlinkSync(join(REPO_ROOT, 'node_modules'), join(workdir, 'node_modules'), 'dir');
      continue;
    }
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${dirname(nodeBin)}:${process.env.PATH ?? ''}` };
    delete env.NODE_OPTIONS;
    const result = run('sh', ['-c', command], { cwd: workdir, env });
    if (command === 'npm run build') build = result;
    else if (result.status !== 0) throw new Error(`build stage: ${command}: ${describeRun(result)}`);
  }
  if (build === null) throw new Error('the build stage has no `npm run build`');

  // Where the final stage copies the compiled output from: the build stage's /src/dist.
  const fromBuild = stageCopies(finalStage).filter((c) => c.from === buildStage.name);
  const buildOutput = join(buildRoot, posix.dirname(fromBuild[0]?.sources[0] ?? '/missing'));
  const app = join(root, 'app');
  const script = run('bash', [RUNTIME_TREE_SCRIPT, app], { cwd: REPO_ROOT, env: { ...agentEnv(), KEA_BUILD_OUTPUT: buildOutput } });
  setup = { root, app, build, script };
}, SETUP_TIMEOUT_MS);

afterAll(() => {
  if (setup !== null) rmSync(setup.root, { recursive: true, force: true });
});

describe('building', () => {
  test("the build stage's `npm run build` succeeds on the context .dockerignore admits", () => {
    expect(ready().build.status === 0 ? '' : describeRun(ready().build)).toBe('');
  });

  test('scripts/runtime-tree.sh builds the tree', () => {
    expect(ready().script.status === 0 ? '' : describeRun(ready().script)).toBe('');
  });
});

describe('the tree matches the Dockerfile', () => {
  test("it holds exactly what the final stage's COPY lines and npm install put under the work directory", () => {
    const workdir = stageWorkdir(finalStage);
    const expected = stageCopies(finalStage)
      .flatMap((c) => (c.destination.endsWith('/') ? c.sources.map((s) => posix.join(c.absoluteDestination, posix.basename(s))) : [c.absoluteDestination]))
      .map((path) => posix.relative(workdir, path))
      .concat('node_modules')
      .sort();
    const actual = readdirSync(ready().app)
      .flatMap((entry) => (entry === 'dist' ? readdirSync(join(ready().app, 'dist')).map((d) => `dist/${d}`) : [entry]))
      .sort();
    expect(actual).toEqual(expected);
  });

  test('the script runs the same dependency install and pruning commands as the final stage', () => {
    // Flags that only silence notices or prefer the local cache do not change the installed tree.
    const treeNeutral = new Set(['--no-audit', '--no-fund', '--prefer-offline']);
    const normalize = (command: string): string =>
      command
        .replace(/"\$npm_cmd"/g, 'npm')
        .split(/\s+/)
        .filter((word) => !treeNeutral.has(word))
        .join(' ');
    const scriptCommands = readFileSync(RUNTIME_TREE_SCRIPT, 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => !line.startsWith('#'))
      .map((line) => normalize(line.replace(/\s*>&2$/, '')));
    const shaping = runCommands(finalStage).filter((c) => c.startsWith('npm ci') || c.startsWith('find node_modules'));
    expect(shaping).toHaveLength(2);
    for (const command of shaping) expect(scriptCommands).toContain(normalize(command));
  });
});

describe('the agent runs from the tree', () => {
  test("the tree is built and run on the image's exact Node release", () => {
    if (!imageNode.ok) {
      if (required) throw new Error(`KEA_E2E_REQUIRED=1 but ${imageNode.reason}`);
      console.log(`skipped: ${imageNode.reason}`);
      return;
    }
    const result = run(nodeBin, ['--version'], { cwd: ready().app });
    expect(result.stdout.trim()).toBe(`v${imageNode.version}`);
  });

  test('--version prints the package version', () => {
    const result = run(nodeBin, [join(ready().app, 'dist/src/main.js'), '--version'], { cwd: ready().app });
    expect(result.status === 0 ? result.stdout.trim() : describeRun(result)).toBe(packageVersion());
  });

  test("check-config accepts the DaemonSet's configuration", () => {
    const file = join(ready().root, 'config.yaml');
    writeFileSync(file, embeddedConfig(manifest).text);
    const result = run(nodeBin, [join(ready().app, 'dist/src/main.js'), 'check-config', file], { cwd: ready().app });
    expect(result.status === 0 ? '' : describeRun(result)).toBe('');
    expect(result.stdout).toContain('valid AgentConfiguration');
  });

  test('check-config rejects a broken configuration (the command really validates)', () => {
    const file = join(ready().root, 'broken.yaml');
    writeFileSync(file, 'apiVersion: kube-eviction-agent.io/v1alpha1\nkind: AgentConfiguration\nevictionHard:\n  mem.available: 100Mi\n');
    const result = run(nodeBin, [join(ready().app, 'dist/src/main.js'), 'check-config', file], { cwd: ready().app });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('mem.available');
  });

  test('the run command accepts every flag the DaemonSet passes', () => {
    const result = run(nodeBin, [join(ready().app, 'dist/src/main.js'), 'run', '--help'], { cwd: ready().app });
    const flags = (container.args as string[]).filter((a) => a.startsWith('--')).map((a) => a.split('=')[0] as string);
    expect({ status: result.status, missing: flags.filter((f) => !result.stdout.includes(f)) }).toEqual({ status: 0, missing: [] });
  });

  test('every production dependency loads', () => {
    const names = Object.keys(packageJson.dependencies);
    const script = `for (const name of ${JSON.stringify(names)}) await import(name);`;
    const result = run(nodeBin, ['--input-type=module', '-e', script], { cwd: ready().app });
    expect(result.status === 0 ? '' : describeRun(result)).toBe('');
  });

  test('every compiled module loads with production dependencies only', () => {
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.js')) files.push(path);
      }
    };
    walk(join(ready().app, 'dist'));
    // main.js parses the command line when loaded; it is run above instead. A worker thread's
    // script is loaded as replay loads it, on a thread of its own (without this script's
    // --input-type), until it says it is ready. The kill path's thread needs the kill path's
    // channel and eventfd: loaded here, it refuses once its imports have loaded, and that refusal
    // is what shows they resolve.
    const workers = files.filter((f) => f.endsWith(join('dist', 'src', 'replay', 'parse-worker.js')));
    const killThread = files.filter((f) => f.endsWith(join('dist', 'src', 'act', 'kill-thread.js')));
    const modules = files.filter((f) => !f.endsWith(join('dist', 'src', 'main.js')) && !workers.includes(f) && !killThread.includes(f));
    expect(modules.length).toBeGreaterThan(10);
    expect(workers).toHaveLength(1);
    expect(killThread).toHaveLength(1);
    const startWorker = `(f) => new Promise((resolve, reject) => { const w = new Worker(f, { execArgv: [] }); w.once('message', () => { resolve(); void w.terminate(); }); w.once('error', reject); w.once('exit', (code) => reject(new Error('exited with ' + code + ' before it was ready'))); })`;
    const script = `import { Worker } from 'node:worker_threads'; const failed = []; for (const f of ${JSON.stringify(modules)}) { try { await import(f); } catch (e) { failed.push(f + ': ' + e.message); } } for (const f of ${JSON.stringify(workers)}) { try { await (${startWorker})(f); } catch (e) { failed.push(f + ': ' + e.message); } } for (const f of ${JSON.stringify(killThread)}) { try { await import(f); failed.push(f + ': loaded on the main thread without refusing'); } catch (e) { if (!/runs as the kill path's worker thread/.test(e.message)) failed.push(f + ': ' + e.message); } } if (failed.length) { console.error(failed.join('\\n')); process.exit(1); }`;
    const result = run(nodeBin, ['--input-type=module', '-e', script], { cwd: ready().app });
    expect(result.status === 0 ? '' : describeRun(result)).toBe('');
  });
});

describe('the capability check from the tree', () => {
  const capabilities = (container.securityContext as { capabilities: { add: string[] } }).capabilities.add;
  test("every feature works under exactly the DaemonSet's capabilities, on the image's Node (root, capsh, cgroup v1)", async () => {
    const unavailable = capabilityCheckUnavailable();
    if (unavailable !== null) {
      if (required && process.env.KEA_CAPABILITY_SET === undefined) throw new Error(`KEA_E2E_REQUIRED=1 but the capability check cannot run: ${unavailable}`);
      console.log(`skipped: the capability check: ${unavailable}`);
      return;
    }
    const result = await runWithCapabilities({ distRoot: join(ready().app, 'dist'), nodeBin, capabilities });
    const failed = Object.entries(result.results).filter(([name, r]) => !r.ok && name !== 'oom-score-adj');
    expect({ status: result.status, failed }).toEqual({ status: 0, failed: [] });
    expect(Object.keys(result.results).sort()).toEqual(['freeze', 'memcg-threshold', 'observe', 'oom-score-adj', 'psi-trigger', 'read-proc-cgroup', 'start', 'terminate']);
    expect(result.otherUserProcessSurvived).toBe(false);
    expect(`${result.stdout}${result.stderr}`).not.toMatch(STACK_FRAME);
  }, 120_000);
});

describe('the tree carries nothing it does not need', () => {
  test('no dev dependency is installed', () => {
    const modules = join(ready().app, 'node_modules');
    // A dev dependency that a production dependency also needs (@types/node) is rightly there;
    // the lockfile marks the ones only development needs.
    type Lock = { packages: Record<string, { dev?: boolean }> };
    const repoLock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as Lock;
    const devOnly = Object.keys(packageJson.devDependencies).filter((name) => repoLock.packages[`node_modules/${name}`]?.dev === true);
    expect(devOnly).toEqual(expect.arrayContaining(['jest', 'typescript', 'eslint']));
    expect(devOnly.filter((name) => existsSync(join(modules, name)))).toEqual([]);
    const installedLock = JSON.parse(readFileSync(join(modules, '.package-lock.json'), 'utf8')) as Lock;
    expect(Object.entries(installedLock.packages).filter(([, p]) => p.dev === true).map(([name]) => name)).toEqual([]);
  });

  test('no type declarations or source maps in node_modules', () => {
    const found: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/\.d\.[mc]?ts$|\.map$/.test(entry.name)) found.push(relative(ready().app, path));
      }
    };
    walk(join(ready().app, 'node_modules'));
    expect(found.slice(0, 5)).toEqual([]);
  });

  test('no TypeScript sources or tests in the compiled output', () => {
    const found: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/\.ts$|\.test\.js$/.test(entry.name)) found.push(relative(ready().app, path));
      }
    };
    walk(join(ready().app, 'dist'));
    expect(found).toEqual([]);
  });
});

describe('scripts/runtime-tree.sh refuses', () => {
  // Each refusal happens before anything is installed, so these are quick.
  const cases: { name: string; prepare: (dir: string) => { dest: string; buildOutput: string }; message: string }[] = [
    { name: 'a missing build output', prepare: (dir) => ({ dest: join(dir, 'app'), buildOutput: join(dir, 'nothing-built') }), message: 'is missing: build first' },
    {
      name: 'a build output without main.js',
      prepare: (dir) => {
        mkdirSync(join(dir, 'out', 'src'), { recursive: true });
        mkdirSync(join(dir, 'out', 'native'), { recursive: true });
        return { dest: join(dir, 'app'), buildOutput: join(dir, 'out') };
      },
      message: 'main.js is missing',
    },
    {
      name: 'a destination that is not empty',
      prepare: (dir) => {
        mkdirSync(join(dir, 'out', 'src'), { recursive: true });
        mkdirSync(join(dir, 'out', 'native'), { recursive: true });
        writeFileSync(join(dir, 'out', 'src', 'main.js'), '');
        mkdirSync(join(dir, 'app'));
        writeFileSync(join(dir, 'app', 'stale'), '');
        return { dest: join(dir, 'app'), buildOutput: join(dir, 'out') };
      },
      message: 'is not empty',
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const dir = mkdtempSync(join(tmpdir(), 'kea-runtime-tree-refuse-'));
      try {
        const { dest, buildOutput } = tc.prepare(dir);
        const result = run('bash', [RUNTIME_TREE_SCRIPT, dest], { cwd: REPO_ROOT, env: { ...agentEnv(), KEA_BUILD_OUTPUT: buildOutput } });
        expect(result.status).toBe(1);
        expect(result.stderr).toContain(tc.message);
        expect(existsSync(join(dest, 'node_modules'))).toBe(false);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
