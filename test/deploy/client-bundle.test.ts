// The build's bundle of the Kubernetes client's parts (scripts/bundle-client-library.ts): the
// compiled dist/src/kube/client-node-parts.js holds those parts itself, importing no package but
// node-fetch (left in node_modules, where Node does not warn about its deprecated calls), exports
// what src/kube uses, and loads without a warning. The CLI tests run the built command, through
// this bundle, against an API stand-in.

import { spawnSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertBuilt, REPO_ROOT } from '../cli/run-cli.js';

const BUNDLE = join(REPO_ROOT, 'dist/src/kube/client-node-parts.js');
const SOURCE = join(REPO_ROOT, 'src/kube/client-node-parts.ts');

test('the built parts of the client library import no package but node-fetch', () => {
  assertBuilt();
  // The bundle is minified: its static imports stand at the start of a line or after a `;`, with or without spaces.
  const specifiers = [...readFileSync(BUNDLE, 'utf8').matchAll(/(?:^|;)import\s*[^;'"]*?from\s*["']([^"']+)["']/gm)].map((m) => m[1] as string);
  expect(specifiers).toContain('node:module');
  const packages = specifiers.filter((s) => !s.startsWith('node:') && !builtinModules.includes(s));
  expect([...new Set(packages)]).toEqual(['node-fetch']);
});

test('the built parts load without a warning and export what the sources re-export', () => {
  assertBuilt();
  const names = (/^export \{ ([\w, ]+) \} from '@kubernetes\/client-node';$/m.exec(readFileSync(SOURCE, 'utf8'))?.[1] ?? '').split(', ');
  expect(names.length).toBeGreaterThan(0);
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(BUNDLE)}); await new Promise((r) => setImmediate(r)); console.log(JSON.stringify(Object.keys(m).filter((k) => m[k] !== undefined).sort()));`], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  expect(result.stderr).toBe('');
  expect(JSON.parse(result.stdout) as string[]).toEqual([...names].sort());
});
