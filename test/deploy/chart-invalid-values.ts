// Values that make an invalid agent configuration, what `helm template` says of each (its JSON
// schema's wording, values.schema.json) and what `check-config` says of the same configuration.
// docs/deployment.md lists every row word for word; the chart test holds both to these texts.

export interface InvalidValue {
  /** The `--set` argument. */
  readonly set: string;
  /** helm's line for it, `at '<pointer>': <message>`; null where the schema cannot say it and helm renders. */
  readonly helm: string | null;
  /** check-config's problem for it, `<field>: <message>` (the line number left out). */
  readonly checkConfig: string;
}

export const INVALID_VALUES: readonly InvalidValue[] = [
  {
    set: 'config.notifier.mode=psy',
    helm: "at '/config/notifier/mode': value must be one of 'auto', 'memcg-v1', 'psi', 'disabled'",
    checkConfig: 'notifier.mode: must be one of "auto", "memcg-v1", "psi", "disabled", not "psy" (did you mean "psi"?)',
  },
  { set: 'config.logLevel=verbose', helm: "at '/config/logLevel': value must be one of 'debug', 'info', 'warn', 'error'", checkConfig: 'logLevel: must be one of "debug", "info", "warn", "error", not "verbose"' },
  {
    set: 'config.reporting.taint.effect=NoExecute',
    helm: "at '/config/reporting/taint/effect': value must be 'NoSchedule'",
    checkConfig:
      'reporting.taint.effect: only "NoSchedule" is supported, not "NoExecute": a NoExecute pressure taint would evict every pod that does not tolerate it, not the one the engine chose',
  },
  { set: 'config.actions.dryRun=yes', helm: "at '/config/actions/dryRun': got string, want boolean", checkConfig: 'actions.dryRun: must be true or false, not the string "yes"' },
  { set: 'config.evictionMaxPodGracePeriod=1.5', helm: "at '/config/evictionMaxPodGracePeriod': got string, want integer", checkConfig: 'evictionMaxPodGracePeriod: must be an integer, not the string "1.5"' },
  { set: 'config.server.port=70000', helm: "at '/config/server/port': maximum: got 70,000, want 65,535", checkConfig: 'server.port: must be between 0 and 65535: 70000' },
  { set: 'config.taintEviction.deleteRetries=-1', helm: "at '/config/taintEviction/deleteRetries': minimum: got -1, want 0", checkConfig: 'taintEviction.deleteRetries: must be between 0 and 100: -1' },
  { set: 'config.observe.hostRoot=host', helm: "at '/config/observe/hostRoot': 'host' does not match pattern '^/'", checkConfig: 'observe.hostRoot: must be an absolute path: "host"' },
  { set: 'config.server.address=', helm: "at '/config/server/address': '' does not match pattern '\\\\S'", checkConfig: 'server.address: must not be empty' },
  { set: 'config.observe.bogus=1', helm: "at '/config/observe': additional properties 'bogus' not allowed", checkConfig: 'observe.bogus: unknown field "bogus"' },
  {
    set: 'config.evictionHard.memory\\.availabl=1Gi',
    helm: "at '/config/evictionHard': additional properties 'memory.availabl' not allowed",
    checkConfig: 'evictionHard["memory.availabl"]: unsupported eviction signal memory.availabl (value: "1Gi")',
  },
  {
    set: 'config.notifier.psiWindow=1x',
    helm: "at '/config/notifier/psiWindow': '1x' does not match pattern '^(0|(([0-9]+(\\\\.[0-9]*)?|\\\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$'",
    checkConfig: 'notifier.psiWindow: time: unknown unit "x" in duration "1x"',
  },
  { set: 'config.notifier.psiWindow=0s', helm: "at '/config/notifier/psiWindow': 'not' failed", checkConfig: "notifier.psiWindow: must be between 500ms and 10s (the kernel's limits for a PSI trigger): 0s" },
  // What a JSON schema of the values cannot say: ranges of durations, cross-field rules, the
  // syntax of quantities, names and URLs. helm renders these; the agent refuses them at start
  // (and keeps its running configuration on a reload, counting it as rejected).
  { set: 'config.notifier.psiWindow=20s', helm: null, checkConfig: "notifier.psiWindow: must be between 500ms and 10s (the kernel's limits for a PSI trigger): 20s" },
  { set: 'config.housekeepingInterval=1ns', helm: null, checkConfig: 'housekeepingInterval: must be between 1s and 10m: 1ns' },
  {
    set: 'config.evictionHard.memory\\.available=100Mx',
    helm: "at '/config/evictionHard/memory.available': '100Mx' does not match pattern '^([+-]?[0-9.]+[eEinumkKMGTP]*[-+]?[0-9]*|.*%)$'",
    checkConfig: 'evictionHard["memory.available"]: quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\' (value: "100Mx")',
  },
  { set: 'config.reporting.taint.key=bad/key/x', helm: null, checkConfig: 'reporting.taint.key: must be a qualified name such as "example.com/pressure": "bad/key/x"' },
  { set: 'config.observe.kubeletUrl=ftp://x', helm: null, checkConfig: 'observe.kubeletUrl: must be an http or https URL: "ftp://x"' },
  {
    set: 'config.enforceNodeAllocatable={pods,none}',
    helm: null,
    checkConfig: 'enforceNodeAllocatable: invalid configuration: enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional enforcements when "none" is specified',
  },
];
