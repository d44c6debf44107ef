// Part of `npm run build`: replaces the compiled dist/src/kube/client-node-parts.js, which
// re-exports the few parts of @kubernetes/client-node the agent uses, with one file holding those
// parts and what they need from the library and its dependencies, tree-shaken. Loading the whole
// library costs about 70 MiB of RSS (every API group's generated client, and their source kept in
// the heap); the bundle about 27 (docs/benchmarks.md, part 4), minified less. Tests run on the sources, which
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
  // Node keeps every loaded module's source in memory: without white space and with simpler
  // syntax the bundle is 2.2 MB instead of 5.1, which takes 3.7 MiB off the RSS on Node 20 and
  // 6.2 MiB on the image's Node 24 (measured loading it alone). Names are kept, so stack traces and
  // the library's error messages still name its classes and functions.
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  // Node warns about deprecated calls (url.parse, the punycode module) unless they come from
  // node_modules: node-fetch makes both, so it stays there, loaded as the library loads it.
  external: ['node-fetch'],
  // The library's CommonJS dependencies call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as createRequireForBundle } from 'node:module';\nconst require = createRequireForBundle(import.meta.url);" },
});
