// The import rules of the architecture (DESIGN.md): a pure core, adapters that depend on the
// core's ports and never the reverse, and one importer each for the Kubernetes client and koffi.
/** @type {import('dependency-cruiser').IDependencyCruiserConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'vocabulary-imports-nothing',
      comment: 'src/api and src/errors.ts are the vocabulary: they import nothing else from src/',
      severity: 'error',
      from: { path: '^src/(api/|errors\\.ts)' },
      to: { path: '^src/', pathNot: '^src/(api/|errors\\.ts)' },
    },
    {
      name: 'core-is-pure',
      comment: 'eviction/ and taint/ import only api, errors and their own files: no I/O, no adapters',
      severity: 'error',
      from: { path: '^src/(eviction|taint)/' },
      to: {
        pathNot: ['^src/(api/|errors\\.ts)', '^src/eviction/', '^src/taint/'],
      },
    },
    {
      name: 'core-uses-no-node-builtins',
      comment: 'the pure core touches no file, process, network or timer module',
      severity: 'error',
      from: { path: '^src/(eviction|taint|api)/|^src/errors\\.ts' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'only-kube-imports-the-client',
      severity: 'error',
      from: { pathNot: '^src/kube/' },
      to: { path: '@kubernetes/client-node' },
    },
    {
      name: 'only-native-imports-koffi',
      severity: 'error',
      from: { pathNot: '^native/' },
      to: { path: 'node_modules/koffi' },
    },
    {
      name: 'nothing-imports-main',
      severity: 'error',
      from: {},
      to: { path: '^src/main\\.ts$' },
    },
    {
      name: 'adapters-do-not-import-each-other',
      comment: 'observe, notifier and kube implement the core ports; only main and cli wire them together',
      severity: 'error',
      from: { path: '^src/(observe|notifier|kube|config)/' },
      to: { path: '^src/(observe|notifier|kube|cli)/', pathNot: '^src/$1/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
