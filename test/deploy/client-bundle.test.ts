// The build's bundle of the Kubernetes client's parts (scripts/bundle-client-library.ts): the
// compiled dist/src/kube/client-node-parts.js holds those parts itself, so it loads from a
// directory with no node_modules at all and exports what src/kube uses. The CLI tests run the
// built command, through this bundle, against an API stand-in.

import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, REPO_ROOT } from '../cli/run-cli.js';

const BUNDLE = join(REPO_ROOT, 'dist/src/kube/client-node-parts.js');
const SOURCE = join(REPO_ROOT, 'src/kube/client-node-parts.ts');

test('the built parts of the client library load without the library installed, and export what the sources re-export', () => {
  assertBuilt();
  const names = (/^export \{ ([\w, ]+) \} from '@kubernetes\/client-node';$/m.exec(readFileSync(SOURCE, 'utf8'))?.[1] ?? '').split(', ');
  expect(names.length).toBeGreaterThan(0);
  const dir = mkdtempSync(join(tmpdir(), 'kea-bundle-'));
  try {
    copyFileSync(BUNDLE, join(dir, 'client-node-parts.mjs'));
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(join(dir, 'client-node-parts.mjs'))}); console.log(JSON.stringify(Object.keys(m).filter((k) => typeof m[k] !== 'undefined').sort()));`], { cwd: dir, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout) as string[]).toEqual([...names].sort());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
