// The import rules of the architecture (DESIGN.md, README "Layout"): a pure core, adapters that
// depend on the ports of the code that uses them and never on each other, one composition root
// that wires, and one importer each for the Kubernetes client and koffi. Every folder of src/ has
// its rule; `npm run lint` (and so CI) enforces them.

// What each folder may import besides itself, as path patterns.
const VOCABULARY = '^src/(api/|errors\\.ts$)';
const CORE = ['^src/eviction/', '^src/taint/', '^src/pressure/'];
const ADAPTER_BASE = [VOCABULARY, '^src/host/', '^src/daemon/ports\\.ts$'];

/** A rule: files under `folder` import nothing of src/ or native/ outside `allowed` and themselves. */
function onlyImports(name, folder, allowed, comment) {
  return {
    name,
    comment,
    severity: 'error',
    from: { path: `^src/${folder}` },
    to: { path: '^(src|native)/', pathNot: [`^src/${folder}`, ...allowed] },
  };
}

/** @type {import('dependency-cruiser').IDependencyCruiserConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'vocabulary-imports-nothing',
      comment: 'src/api and src/errors.ts are the vocabulary: they import nothing else from src/',
      severity: 'error',
      from: { path: VOCABULARY },
      to: { path: '^(src|native)/', pathNot: VOCABULARY },
    },
    onlyImports('eviction-is-pure', 'eviction/', [VOCABULARY], 'the decision engine imports only the vocabulary: no I/O, no adapters, and not the taint logic'),
    onlyImports('taint-is-pure', 'taint/', [VOCABULARY], 'the NoExecute taint logic imports only the vocabulary: no I/O, no adapters, and not the engine'),
    onlyImports('pressure-is-pure', 'pressure/', [VOCABULARY], 'the PSI node conditions\' hysteresis imports only the vocabulary: no I/O, no adapters'),
    {
      name: 'core-uses-no-node-builtins',
      comment: 'the pure core touches no file, process, network or timer module',
      severity: 'error',
      from: { path: '^src/(eviction|taint|pressure|api)/|^src/errors\\.ts$' },
      to: { dependencyTypes: ['core'] },
    },
    onlyImports('host-is-a-leaf', 'host/', [VOCABULARY], 'the host door, cgroup location and kernel-file parsers: a leaf every host adapter may build on'),
    onlyImports('config-compiles-alone', 'config/', [VOCABULARY, '^src/host/pod-cgroup-names\\.ts$'], 'configuration is compiled from the file alone: it knows no adapter and no part of the running agent'),
    onlyImports('observe-is-an-adapter', 'observe/', ADAPTER_BASE, 'the observers implement the daemon\'s ports on the host leaf; they import no other adapter'),
    onlyImports('notifier-is-an-adapter', 'notifier/', [...ADAPTER_BASE, '^native/'], 'the notifiers implement the daemon\'s port on the host leaf and the native layer; no other adapter'),
    onlyImports('act-is-an-adapter', 'act/', [...ADAPTER_BASE, '^native/'], 'what acts on the host (signals through pidfds, cgroup.kill) implements the daemon\'s port on the host leaf and the native layer; no other adapter'),
    onlyImports('kube-is-an-adapter', 'kube/', [VOCABULARY, '^src/daemon/ports\\.ts$'], 'the Kubernetes adapters implement the daemon\'s cluster ports; no other adapter'),
    onlyImports('daemon-knows-ports-not-adapters', 'daemon/', [VOCABULARY, ...CORE, '^src/config/types\\.ts$'], 'the running agent drives the core through its own ports; it never imports an adapter or the composition root'),
    onlyImports('replay-is-the-core-offline', 'replay/', [VOCABULARY, ...CORE], 'replay drives the core on a virtual clock: no adapters, no daemon'),
    onlyImports('compose-wires', 'compose/', [VOCABULARY, ...CORE, '^src/(config|host|observe|notifier|act|kube|daemon)/'], 'the composition root wires adapters to the daemon; the commands and the demo sit above it'),
    onlyImports('demo-goes-through-compose', 'demo/', [VOCABULARY, ...CORE, '^src/(config|compose)/', '^src/daemon/(agent|ports)\\.ts$'], 'the demo runs the real agent through the composition root; it wires no adapter itself'),
    onlyImports('cli-goes-through-compose', 'cli/', [VOCABULARY, ...CORE, '^src/(config|compose|replay|demo)/', '^src/daemon/(agent|ports)\\.ts$', '^src/log\\.ts$'], 'the commands reach adapters only through the composition root'),
    {
      name: 'log-is-an-adapter-of-the-logger-port',
      severity: 'error',
      from: { path: '^src/log\\.ts$' },
      to: { path: '^(src|native)/', pathNot: VOCABULARY },
    },
    {
      name: 'native-imports-only-errors',
      comment: 'the FFI layer is the bottom of the stack',
      severity: 'error',
      from: { path: '^native/' },
      to: { path: '^(src|native)/', pathNot: ['^native/', '^src/errors\\.ts$'] },
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
      name: 'every-file-is-in-a-ruled-place',
      comment: 'a new folder of src/ needs its own rule above',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(api|eviction|taint|pressure|host|config|observe|notifier|act|kube|daemon|replay|compose|demo|cli)/|^src/(errors|log|main)\\.ts$' },
      to: {},
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
