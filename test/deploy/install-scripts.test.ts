// The install scripts npm may run: package.json's `allowScripts` names every installed package that
// has one (npm 11 skips an unnamed package's scripts and warns; a later npm may refuse outright), so
// a new dependency with an install script fails here until someone decides on it. koffi's script
// only checks that its prebuilt binary loads (and builds from source when it does not): the native
// library must load and call libc whatever npm decided.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../cli/run-cli.js';

const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'] as const;

interface InstalledPackage {
  readonly name: string;
  readonly version: string;
  readonly scripts: readonly string[];
}

// Every package under node_modules, nested ones included, with the install scripts it declares.
function installedPackages(modulesDir: string): InstalledPackage[] {
  if (!existsSync(modulesDir)) return [];
  const found: InstalledPackage[] = [];
  for (const entry of readdirSync(modulesDir)) {
    if (entry.startsWith('.')) continue;
    const dirs = entry.startsWith('@') ? readdirSync(join(modulesDir, entry)).map((name) => join(modulesDir, entry, name)) : [join(modulesDir, entry)];
    for (const dir of dirs) {
      const manifestPath = join(dir, 'package.json');
      if (!existsSync(manifestPath)) continue;
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { name: string; version: string; scripts?: Record<string, string> };
      found.push({ name: manifest.name, version: manifest.version, scripts: INSTALL_SCRIPTS.filter((script) => manifest.scripts?.[script] !== undefined) });
      found.push(...installedPackages(join(dir, 'node_modules')));
    }
  }
  return found;
}

const allowScripts = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> }).allowScripts ?? {};

test('package.json decides on every installed package with an install script, by name or name@version', () => {
  const withScripts = installedPackages(join(REPO_ROOT, 'node_modules')).filter((pkg) => pkg.scripts.length > 0);
  expect(withScripts.length).toBeGreaterThan(0);
  const undecided = withScripts.filter((pkg) => allowScripts[pkg.name] === undefined && allowScripts[`${pkg.name}@${pkg.version}`] === undefined);
  expect(undecided.map((pkg) => `${pkg.name}@${pkg.version} (${pkg.scripts.join(', ')})`)).toEqual([]);
});

test.each([
  ['koffi', true, 'checks that its prebuilt binary loads'],
  ['esbuild', true, 'checks its platform binary'],
  ['@parcel/watcher', false, 'jest\'s optional watcher: its prebuilt package is enough, and node-gyp would need headers from outside'],
])('allowScripts[%s] is %s: %s', (name, allowed) => {
  expect(allowScripts[name]).toBe(allowed);
});

test('koffi loads its native library in a fresh process and calls libc', () => {
  const program = "const koffi = (await import('koffi')).default; const getpid = koffi.load('libc.so.6').func('int getpid()'); console.log(JSON.stringify({ pid: process.pid, called: getpid() }));";
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', program], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  expect(result.stderr).toBe('');
  const { pid, called } = JSON.parse(result.stdout) as { pid: number; called: number };
  expect(called).toBe(pid);
});
