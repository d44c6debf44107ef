// Part of `npm run build`: replaces the compiled dist/src/kube/client-node-parts.js, which
// re-exports the few parts of @kubernetes/client-node the agent uses, with one file holding those
// parts and what they need from the library and its dependencies, tree-shaken. Loading the whole
// library costs about 70 MiB of RSS (every API group's generated client, and their source kept in
// the heap); the bundle about 27 (docs/benchmarks.md, part 4). Tests run on the sources, which
// import the library itself.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

// dist/scripts/bundle-client-library.js: the compiled module is dist/src/kube/client-node-parts.js.
const partsJs = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'kube', 'client-node-parts.js');

await build({
  entryPoints: [partsJs],
  outfile: partsJs,
  allowOverwrite: true,
  bundle: true,
  treeShaking: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  // Node warns about deprecated calls (url.parse, the punycode module) unless they come from
  // node_modules: node-fetch makes both, so it stays there, loaded as the library loads it.
  external: ['node-fetch'],
  // The library's CommonJS dependencies call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as createRequireForBundle } from 'node:module';\nconst require = createRequireForBundle(import.meta.url);" },
});
