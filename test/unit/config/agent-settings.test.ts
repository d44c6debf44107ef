// The agent's own sections of an AgentConfiguration: every field read and defaulted, host paths
// resolved under hostRoot, the systemd pod cgroup name derived, and every bad value refused with
// its field path.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentSettings } from '../../../src/api/agent-settings.js';
import { defaultAgentSettings, DURATION_BOUNDS_MS } from '../../../src/config/defaults.js';
import { formatShortDuration } from '../../../src/config/go-duration.js';
import { describeDurationBounds } from '../../../src/config/setting-readers.js';
import { loadConfigFile, parseConfigText } from '../../../src/config/load.js';
import { ConfigError, type ConfigProblem } from '../../../src/errors.js';

const FIXTURES = new URL('../../fixtures/config/', import.meta.url).pathname;

function agent(text: string): AgentSettings {
  return parseConfigText(text, 'test.yaml').agent;
}

function problems(text: string): ConfigProblem[] {
  try {
    parseConfigText(text, 'test.yaml');
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('agent settings', () => {
  test('agent-full-fixture: every field read', async () => {
    const cfg = await loadConfigFile(join(FIXTURES, 'agent-full.yaml'));
    expect(cfg.warnings).toEqual([]);
    expect(cfg.agent).toEqual({
      nodeName: 'worker-7',
      housekeepingIntervalMs: 5000,
      observe: {
        source: 'kubelet',
        hostRoot: '/host',
        cgroupRoot: '/sys/fs/cgroup',
        procRoot: '/proc',
        kubeletRootDir: '/var/lib/kubelet',
        imageFsPath: '/var/lib/containers',
        containerFsPath: '/var/lib/containers/storage/overlay',
        podLogsDir: '/var/log/pods',
        cgroupDriver: 'systemd',
        podCgroupRoot: 'kubepods.slice',
        kubeletUrl: 'https://10.0.0.7:10250',
        kubeletTokenFile: '/etc/kea/token',
        allowTokenOverHttpLoopback: true,
        kubeletInsecureSkipVerify: true,
        kubeletCaFile: '/etc/kubernetes/pki/kubelet-ca.crt',
        diskUsageIntervalMs: 120_000,
      },
      notifier: { mode: 'psi', psiStallThresholdMs: 150, psiWindowMs: 2000, fastCheckMinIntervalMs: 5, fastCheckMaxIntervalMs: 2000, fastCheckAllocationBytesPerSecond: 8 * 1024 ** 3, memoryHighWakeup: true, killPath: false },
      actions: {
        dryRun: true,
        hardEviction: 'eviction-api',
        softEviction: 'delete',
        localTermination: false,
        localTerminationGracePeriodMs: 2000,
        podCleanupTimeoutMs: 45_000,
        escalationTimeoutMs: 7000,
        setDisruptionTargetCondition: false,
      },
      reporting: {
        nodeConditions: false,
        conditionTypePrefix: 'eviction.example.com/',
        taint: { enabled: true, key: 'eviction.example.com/pressure', effect: 'NoSchedule' },
        events: false,
        retriggerWindowMs: 120_000,
      },
      taintEviction: {
        enabled: true,
        useEvictionApi: true,
        evictionApiDeadlineMs: 600_000,
        skipTerminatingPods: true,
        comparisonOperators: true,
        countFromTimeAdded: true,
        deleteRetries: 3,
      },
      oomKills: { enabled: false, kernelLog: false, scanIntervalMs: 30_000, kernelLogWaitMs: 1000 },
      stormGuard: { softEvictionBudget: { maxEvictions: 4, windowMs: 900_000 }, owners: { eventThreshold: 5, windowMs: 1_800_000, taintCoolDownMs: 1_200_000 } },
      psiConditions: {
        enabled: true,
        line: 'some',
        memory: { enabled: true, avg10ThresholdPercent: 25, avg60ThresholdPercent: 12.5 },
        io: { enabled: false, avg10ThresholdPercent: 20, avg60ThresholdPercent: 20 },
        setHoldDurationMs: 5000,
        clearHoldDurationMs: 120_000,
        intervalMs: 4000,
        taint: { enabled: true },
      },
      configReload: { applyThresholdsThatEvictNow: true },
      nodeLock: { directory: '/var/run/kea-lock', hungHolderTimeoutMs: 20_000 },
      server: { address: '127.0.0.1', port: 9090, maxConnections: 32, probePort: 9091, probeMaxConnections: 4 },
      logLevel: 'debug',
    } satisfies AgentSettings);
    expect(cfg.eviction.housekeepingIntervalMs).toBe(5000);
    expect(cfg.eviction.kernelMemcgNotification).toBe(true);
  });

  test('defaults: the documented values', () => {
    const settings = agent('');
    expect(settings.nodeName).toBeNull();
    expect(settings.housekeepingIntervalMs).toBe(10_000);
    expect(settings.observe).toMatchObject({
      source: 'cgroupfs',
      hostRoot: '/',
      cgroupRoot: '/sys/fs/cgroup',
      procRoot: '/proc',
      kubeletRootDir: '/var/lib/kubelet',
      imageFsPath: '/var/lib/containerd',
      containerFsPath: '/var/lib/containerd',
      podLogsDir: '/var/log/pods',
      cgroupDriver: 'auto',
      podCgroupRoot: 'kubepods',
      kubeletUrl: 'https://127.0.0.1:10250',
      allowTokenOverHttpLoopback: false,
      kubeletInsecureSkipVerify: false,
      kubeletCaFile: null,
      diskUsageIntervalMs: 60_000,
    });
    expect(settings.notifier).toEqual({
      mode: 'auto',
      psiStallThresholdMs: 100,
      psiWindowMs: 1000,
      fastCheckMinIntervalMs: 10,
      fastCheckMaxIntervalMs: 10000,
      fastCheckAllocationBytesPerSecond: 4 * 1024 ** 3,
      memoryHighWakeup: false,
      killPath: true,
    });
    expect(settings.actions).toEqual({
      dryRun: false,
      hardEviction: 'delete',
      softEviction: 'eviction-api',
      localTermination: true,
      localTerminationGracePeriodMs: null,
      podCleanupTimeoutMs: 30_000,
      escalationTimeoutMs: 5000,
      setDisruptionTargetCondition: true,
    });
    expect(settings.reporting).toEqual({
      nodeConditions: true,
      conditionTypePrefix: 'kube-eviction-agent.io/',
      taint: { enabled: false, key: 'kube-eviction-agent.io/pressure', effect: 'NoSchedule' },
      events: true,
      retriggerWindowMs: 60_000,
    });
    expect(settings.taintEviction).toEqual({
      enabled: false,
      useEvictionApi: false,
      evictionApiDeadlineMs: 300_000,
      skipTerminatingPods: false,
      comparisonOperators: false,
      countFromTimeAdded: false,
      deleteRetries: 5,
    });
    // Reporting only, so on.
    expect(settings.oomKills).toEqual({ enabled: true, kernelLog: true, scanIntervalMs: 10_000, kernelLogWaitMs: 500 });
    // The budget changes decisions, so it is off; owner Events only report, so they are on.
    expect(settings.stormGuard).toEqual({ softEvictionBudget: { maxEvictions: 0, windowMs: 600_000 }, owners: { eventThreshold: 3, windowMs: 600_000, taintCoolDownMs: 0 } });
    expect(settings.server).toEqual({ address: '0.0.0.0', port: 8080, maxConnections: 32, probePort: 8081, probeMaxConnections: 8 });
    expect(settings.logLevel).toBe('info');
  });

  test('containerFsPath follows imageFsPath unless set', () => {
    expect(agent('observe:\n  imageFsPath: /var/lib/containers\n').observe.containerFsPath).toBe('/var/lib/containers');
  });

  test('host paths stay as the host spells them (the readers add hostRoot), the token file too', () => {
    const observe = agent('observe:\n  hostRoot: /rootfs\n  kubeletTokenFile: /var/run/secrets/token\n').observe;
    expect(observe.hostRoot).toBe('/rootfs');
    expect([observe.cgroupRoot, observe.procRoot, observe.kubeletRootDir, observe.imageFsPath, observe.containerFsPath, observe.podLogsDir]).toEqual([
      '/sys/fs/cgroup',
      '/proc',
      '/var/lib/kubelet',
      '/var/lib/containerd',
      '/var/lib/containerd',
      '/var/log/pods',
    ]);
    expect(observe.kubeletTokenFile).toBe('/var/run/secrets/token');
  });

  test('the systemd pod cgroup is derived only for an explicit systemd driver', () => {
    expect(agent('observe:\n  cgroupDriver: systemd\n').observe.podCgroupRoot).toBe('kubepods.slice');
    expect(agent('observe:\n  cgroupDriver: cgroupfs\n').observe.podCgroupRoot).toBe('kubepods');
    expect(agent('observe:\n  cgroupDriver: auto\n').observe.podCgroupRoot).toBe('kubepods');
  });

  test('port 0 disables the server', () => {
    expect(agent('server:\n  port: 0\n').server.port).toBe(0);
  });

  test('probePort 0 disables the probe listener; with the server off, the probe listener may take its port', () => {
    expect(agent('server:\n  probePort: 0\n').server.probePort).toBe(0);
    expect(agent('server:\n  port: 0\n  probePort: 0\n').server).toMatchObject({ port: 0, probePort: 0 });
    expect(agent('server:\n  port: 0\n  probePort: 8080\n').server).toMatchObject({ port: 0, probePort: 8080 });
  });

  test('a zero local termination grace period is allowed', () => {
    expect(agent('actions:\n  localTerminationGracePeriod: 0s\n').actions.localTerminationGracePeriodMs).toBe(0);
  });

  test('an empty section is the defaults', () => {
    expect(agent('observe: {}\nnotifier:\nactions: {}\n')).toEqual(defaultAgentSettings());
  });
});

describe('agent settings: bad values', () => {
  const cases: { name: string; text: string; problems: Partial<ConfigProblem>[] }[] = [
    { name: 'unknown-section-key', text: 'observe:\n  cgroupRot: /x\n', problems: [{ field: 'observe.cgroupRot', line: 2, message: 'unknown field "cgroupRot"; did you mean cgroupRoot?' }] },
    { name: 'unknown-nested-key', text: 'reporting:\n  taint:\n    efect: NoSchedule\n', problems: [{ field: 'reporting.taint.efect', line: 3, message: 'unknown field "efect"; did you mean effect?' }] },
    { name: 'section-not-a-map', text: 'observe: cgroupfs\n', problems: [{ field: 'observe', value: 'cgroupfs', message: 'must be a map, not the string "cgroupfs"' }] },
    {
      name: 'enum-typo',
      text: 'logLevel: warning\n',
      problems: [{ field: 'logLevel', value: 'warning', message: 'must be one of "debug", "info", "warn", "error", not "warning" (did you mean "warn"?)' }],
    },
    { name: 'enum-wrong-type', text: 'notifier:\n  mode: 1\n', problems: [{ field: 'notifier.mode', value: 1 }] },
    { name: 'observe-source', text: 'observe:\n  source: summary\n', problems: [{ field: 'observe.source', value: 'summary' }] },
    { name: 'cgroup-driver', text: 'observe:\n  cgroupDriver: systemD\n', problems: [{ field: 'observe.cgroupDriver', message: 'must be one of "auto", "cgroupfs", "systemd", not "systemD" (did you mean "systemd"?)' }] },
    { name: 'hard-eviction-method', text: 'actions:\n  hardEviction: evict\n', problems: [{ field: 'actions.hardEviction', value: 'evict' }] },
    { name: 'relative-path', text: 'observe:\n  cgroupRoot: sys/fs/cgroup\n', problems: [{ field: 'observe.cgroupRoot', message: 'must be an absolute path: "sys/fs/cgroup"' }] },
    { name: 'relative-host-root', text: 'observe:\n  hostRoot: host\n', problems: [{ field: 'observe.hostRoot' }] },
    { name: 'kubelet-url-not-a-url', text: 'observe:\n  kubeletUrl: localhost:10250\n', problems: [{ field: 'observe.kubeletUrl', message: 'must be an http or https URL: "localhost:10250"' }] },
    { name: 'boolean-as-string', text: 'actions:\n  dryRun: "true"\n', problems: [{ field: 'actions.dryRun', value: 'true', message: 'must be true or false, not the string "true"' }] },
    { name: 'duration-as-number', text: 'housekeepingInterval: 10\n', problems: [{ field: 'housekeepingInterval', value: 10 }] },
    { name: 'zero-housekeeping-interval', text: 'housekeepingInterval: 0s\n', problems: [{ field: 'housekeepingInterval', value: '0s', message: 'must be between 1s and 10m: 0s' }] },
    { name: 'housekeeping-interval-of-a-nanosecond', text: 'housekeepingInterval: 1ns\n', problems: [{ field: 'housekeepingInterval', line: 1, message: 'must be between 1s and 10m: 1ns' }] },
    { name: 'housekeeping-interval-of-a-day', text: 'housekeepingInterval: 24h\n', problems: [{ field: 'housekeepingInterval', message: 'must be between 1s and 10m: 24h' }] },
    { name: 'negative-cleanup-timeout', text: 'actions:\n  podCleanupTimeout: -1s\n', problems: [{ field: 'actions.podCleanupTimeout', message: 'must be between 1s and 10m: -1s' }] },
    { name: 'retrigger-window-of-zero', text: 'reporting:\n  retriggerWindow: 0s\n', problems: [{ field: 'reporting.retriggerWindow', line: 2, message: 'must be between 1s and 1h: 0s' }] },
    { name: 'negative-local-grace', text: 'actions:\n  localTerminationGracePeriod: -1s\n', problems: [{ field: 'actions.localTerminationGracePeriod', message: 'must be between 0s and 10m: -1s' }] },
    {
      name: 'psi-window-too-long',
      text: 'notifier:\n  psiWindow: 20s\n',
      problems: [{ field: 'notifier.psiWindow', line: 2, message: "must be between 500ms and 10s (the kernel's limits for a PSI trigger): 20s" }],
    },
    {
      name: 'psi-stall-longer-than-window',
      text: 'notifier:\n  psiStallThreshold: 2s\n',
      problems: [{ field: 'notifier.psiStallThreshold', line: 2, message: 'must not exceed notifier.psiWindow (1000ms): 2000ms' }],
    },
    // What the kernel and the timers accept, said at load time rather than found at arming.
    { name: 'psi-window-below-the-kernel-minimum', text: 'notifier:\n  psiWindow: 499ms\n', problems: [{ field: 'notifier.psiWindow', line: 2 }] },
    { name: 'psi-window-not-whole-milliseconds', text: 'notifier:\n  psiWindow: 500500us\n', problems: [{ field: 'notifier.psiWindow', line: 2, message: 'must be a whole number of milliseconds: 500.5ms' }] },
    { name: 'psi-stall-zero', text: 'notifier:\n  psiStallThreshold: 0s\n', problems: [{ field: 'notifier.psiStallThreshold', message: 'must be between 1us and 10s: 0s' }] },
    {
      name: 'psi-stall-not-whole-microseconds',
      text: 'notifier:\n  psiStallThreshold: 1500ns\n',
      problems: [{ field: 'notifier.psiStallThreshold', line: 2, message: "must be a whole number of microseconds (the kernel's unit): 0.0015ms" }],
    },
    { name: 'psi-stall-below-a-microsecond', text: 'notifier:\n  psiStallThreshold: 100ns\n', problems: [{ field: 'notifier.psiStallThreshold', line: 2, message: 'must be between 1us and 10s: 100ns' }] },
    { name: 'fast-check-zero', text: 'notifier:\n  fastCheckMinInterval: 0s\n', problems: [{ field: 'notifier.fastCheckMinInterval', message: 'must be between 1ms and 10s: 0s' }] },
    { name: 'fast-check-not-whole-milliseconds', text: 'notifier:\n  fastCheckMinInterval: 1500us\n', problems: [{ field: 'notifier.fastCheckMinInterval', line: 2, message: 'must be a whole number of milliseconds: 1.5ms' }] },
    { name: 'fast-check-max-not-whole-milliseconds', text: 'notifier:\n  fastCheckMaxInterval: 1000500us\n', problems: [{ field: 'notifier.fastCheckMaxInterval', line: 2, message: 'must be a whole number of milliseconds: 1000.5ms' }] },
    {
      name: 'fast-check-min-above-max',
      text: 'notifier:\n  fastCheckMinInterval: 2s\n  fastCheckMaxInterval: 1s\n',
      problems: [{ field: 'notifier.fastCheckMinInterval', line: 2, message: 'must not exceed notifier.fastCheckMaxInterval (1000ms): 2000ms' }],
    },
    { name: 'fast-check-rate-not-a-quantity', text: 'notifier:\n  fastCheckAllocationRate: fast\n', problems: [{ field: 'notifier.fastCheckAllocationRate', line: 2, message: 'must be a quantity such as "4Gi": "fast"' }] },
    { name: 'fast-check-rate-zero', text: 'notifier:\n  fastCheckAllocationRate: "0"\n', problems: [{ field: 'notifier.fastCheckAllocationRate', line: 2, message: 'must be above zero and below 8Pi: "0"' }] },
    {
      name: 'the-fixed-fast-check-interval-is-gone',
      text: 'notifier:\n  fastCheckInterval: 250ms\n',
      problems: [{ field: 'notifier.fastCheckInterval', line: 2, message: 'was replaced by fastCheckMinInterval and fastCheckMaxInterval: the fast check now adapts its interval to the distance to the threshold' }],
    },
    { name: 'memory-high-wakeup-not-a-bool', text: 'notifier:\n  memoryHighWakeup: "yes"\n', problems: [{ field: 'notifier.memoryHighWakeup', line: 2 }] },
    { name: 'kill-path-not-a-bool', text: 'notifier:\n  killPath: 1\n', problems: [{ field: 'notifier.killPath', line: 2 }] },
    {
      name: 'pod-cgroup-root-outside-the-hierarchy',
      text: 'observe:\n  podCgroupRoot: kubepods/../../x\n',
      problems: [{ field: 'observe.podCgroupRoot', line: 2, message: 'must be a cgroup path inside the hierarchy (no ".."): "kubepods/../../x"' }],
    },
    {
      name: 'taint-effect-no-execute',
      text: 'reporting:\n  taint:\n    effect: NoExecute\n',
      problems: [{ field: 'reporting.taint.effect', value: 'NoExecute', line: 3 }],
    },
    { name: 'taint-key-invalid', text: 'reporting:\n  taint:\n    key: "bad key"\n', problems: [{ field: 'reporting.taint.key', value: 'bad key' }] },
    { name: 'condition-prefix-empty', text: 'reporting:\n  conditionTypePrefix: ""\n', problems: [{ field: 'reporting.conditionTypePrefix', value: '' }] },
    { name: 'condition-prefix-without-slash', text: 'reporting:\n  conditionTypePrefix: example.com\n', problems: [{ field: 'reporting.conditionTypePrefix', value: 'example.com' }] },
    { name: 'port-out-of-range', text: 'server:\n  port: 70000\n', problems: [{ field: 'server.port', value: 70000, message: 'must be between 0 and 65535: 70000' }] },
    { name: 'port-as-string', text: 'server:\n  port: "8080"\n', problems: [{ field: 'server.port', value: '8080', message: 'must be an integer, not the string "8080"' }] },
    { name: 'probe-port-is-the-port', text: 'server:\n  port: 9090\n  probePort: 9090\n', problems: [{ field: 'server.probePort', value: 9090, line: 3, message: 'must differ from server.port (9090), or be 0 for no probe listener: 9090' }] },
    { name: 'probe-port-is-the-default-port', text: 'server:\n  probePort: 8080\n', problems: [{ field: 'server.probePort', value: 8080, line: 2, message: 'must differ from server.port (8080), or be 0 for no probe listener: 8080' }] },
    { name: 'probe-port-out-of-range', text: 'server:\n  probePort: 70000\n', problems: [{ field: 'server.probePort', value: 70000, message: 'must be between 0 and 65535: 70000' }] },
    { name: 'probe-max-connections-zero', text: 'server:\n  probeMaxConnections: 0\n', problems: [{ field: 'server.probeMaxConnections', value: 0, message: 'must be between 1 and 1024: 0' }] },
    { name: 'delete-retries-negative', text: 'taintEviction:\n  deleteRetries: -1\n', problems: [{ field: 'taintEviction.deleteRetries', value: -1 }] },
    { name: 'oom-scan-interval-too-short', text: 'oomKills:\n  scanInterval: 100ms\n', problems: [{ field: 'oomKills.scanInterval', line: 2, message: "must be between 1s and 10m (the scan walks every pod's cgroups): 100ms" }] },
    { name: 'oom-kernel-log-wait-too-long', text: 'oomKills:\n  kernelLogWait: 1m\n', problems: [{ field: 'oomKills.kernelLogWait', message: 'must be between 0s and 5s (past it, a report would lag the kill noticeably): 1m' }] },
    { name: 'oom-kernel-log-not-a-boolean', text: 'oomKills:\n  kernelLog: yes\n', problems: [{ field: 'oomKills.kernelLog', value: 'yes' }] },
    { name: 'storm-budget-window-too-short', text: 'stormGuard:\n  softEvictionBudget:\n    window: 500ms\n', problems: [{ field: 'stormGuard.softEvictionBudget.window', line: 3, message: 'must be between 1s and 24h: 500ms' }] },
    { name: 'storm-budget-negative', text: 'stormGuard:\n  softEvictionBudget:\n    maxEvictions: -1\n', problems: [{ field: 'stormGuard.softEvictionBudget.maxEvictions', value: -1 }] },
    { name: 'storm-owner-window-too-long', text: 'stormGuard:\n  owners:\n    window: 48h\n', problems: [{ field: 'stormGuard.owners.window', message: 'must be between 1s and 24h: 48h' }] },
    { name: 'storm-cool-down-too-long', text: 'stormGuard:\n  owners:\n    taintCoolDown: 25h\n', problems: [{ field: 'stormGuard.owners.taintCoolDown', message: 'must be between 0s and 24h: 25h' }] },
    { name: 'storm-unknown-key', text: 'stormGuard:\n  owner:\n    eventThreshold: 2\n', problems: [{ field: 'stormGuard.owner' }] },
    { name: 'node-name-upper-case', text: 'nodeName: Worker-1\n', problems: [{ field: 'nodeName', value: 'Worker-1' }] },
    { name: 'node-name-empty', text: 'nodeName: ""\n', problems: [{ field: 'nodeName', message: 'must not be empty' }] },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const found = problems(tc.text);
      expect(found).toHaveLength(tc.problems.length);
      tc.problems.forEach((expected, i) => expect(found[i]).toMatchObject(expected));
    });
  }
});

// The kubelet source's bearer token never travels in cleartext, except to loopback on request.
describe('observe: the kubelet token over http', () => {
  const kubelet = (url: string, extra = ''): string => `observe:\n  source: kubelet\n  kubeletUrl: ${url}\n${extra}`;
  const refusedOnLoopback = /^would send the token of observe\.kubeletTokenFile unencrypted over http \(loopback [^)]+\): use an https URL, or set observe\.kubeletTokenFile: "" to send no token, or set observe\.allowTokenOverHttpLoopback: true to allow it on loopback$/;
  const cases: { name: string; text: string; refused?: RegExp; tokenFile?: string | null }[] = [
    { name: 'https-with-token', text: kubelet('https://10.0.0.7:10250') },
    { name: 'http-with-the-default-token', text: kubelet('http://10.0.0.7:10255'), refused: /^would send the token of observe\.kubeletTokenFile in cleartext over http to 10\.0\.0\.7:10255: use an https URL, or set observe\.kubeletTokenFile: "" to send no token$/ },
    { name: 'http-with-a-token-file', text: kubelet('http://kubelet.example.com:10255', '  kubeletTokenFile: /etc/kea/token\n'), refused: /in cleartext over http to kubelet\.example\.com:10255/ },
    // The setting allows loopback only: another host stays refused with it.
    { name: 'http-elsewhere-with-the-setting', text: kubelet('http://10.0.0.7:10255', '  allowTokenOverHttpLoopback: true\n'), refused: /in cleartext over http to 10\.0\.0\.7:10255/ },
    { name: 'http-loopback-without-the-setting', text: kubelet('http://127.0.0.1:10255'), refused: refusedOnLoopback },
    { name: 'http-localhost-without-the-setting', text: kubelet('http://localhost:10255'), refused: refusedOnLoopback },
    { name: 'http-ipv6-loopback-without-the-setting', text: kubelet('"http://[::1]:10255"'), refused: refusedOnLoopback },
    { name: 'http-loopback-with-the-setting', text: kubelet('http://127.0.0.1:10255', '  allowTokenOverHttpLoopback: true\n') },
    { name: 'http-127/8-with-the-setting', text: kubelet('http://127.10.20.30:10255', '  allowTokenOverHttpLoopback: true\n') },
    { name: 'http-localhost-with-the-setting', text: kubelet('http://localhost:10255', '  allowTokenOverHttpLoopback: true\n') },
    // A name that may resolve to loopback is not loopback, nor an IPv4-mapped address.
    { name: 'http-loopback-lookalike-with-the-setting', text: kubelet('http://127.0.0.1.example.com:10255', '  allowTokenOverHttpLoopback: true\n'), refused: /in cleartext over http to 127\.0\.0\.1\.example\.com:10255/ },
    { name: 'http-ipv4-mapped-with-the-setting', text: kubelet('"http://[::ffff:127.0.0.1]:10255"', '  allowTokenOverHttpLoopback: true\n'), refused: /in cleartext over http/ },
    { name: 'http-without-token', text: kubelet('http://10.0.0.7:10255', '  kubeletTokenFile: ""\n'), tokenFile: null },
    // The URL is not used without the kubelet source.
    { name: 'http-with-cgroupfs-source', text: 'observe:\n  kubeletUrl: http://10.0.0.7:10255\n' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      if (tc.refused === undefined) {
        const observe = agent(tc.text).observe;
        if (tc.tokenFile !== undefined) expect(observe.kubeletTokenFile).toBe(tc.tokenFile);
        return;
      }
      const found = problems(tc.text);
      expect(found).toEqual([{ field: 'observe.kubeletUrl', value: expect.stringMatching(/^http:/) as unknown, line: 3, message: expect.stringMatching(tc.refused) as unknown }]);
    });
  }

  test('a relative token file is refused, as any relative path is', () => {
    expect(problems('observe:\n  kubeletTokenFile: token\n')).toMatchObject([{ field: 'observe.kubeletTokenFile', message: 'must be an absolute path: "token"' }]);
  });
});

describe('configReload', () => {
  test('applyThresholdsThatEvictNow is off unless the file says so', () => {
    expect(agent('').configReload).toEqual({ applyThresholdsThatEvictNow: false });
    expect(agent('configReload:\n  applyThresholdsThatEvictNow: true\n').configReload).toEqual({ applyThresholdsThatEvictNow: true });
    expect(problems('configReload:\n  applyThresholdsThatEvictNow: "yes"\n')).toMatchObject([{ field: 'configReload.applyThresholdsThatEvictNow', line: 2 }]);
    expect(problems('configReload:\n  applyThresholds: true\n')).toMatchObject([{ field: 'configReload.applyThresholds', message: 'unknown field "applyThresholds"; did you mean applyThresholdsThatEvictNow?' }]);
  });
});

test('a stall of whole microseconds despite binary fractions is accepted', () => {
  expect(agent('notifier:\n  psiStallThreshold: 1001us\n').notifier.psiStallThresholdMs).toBeCloseTo(1.001, 9);
});

// Every duration of the agent's sections, by its path in the file, as the defaults table spells it.
function durationPaths(value: unknown, path: readonly string[] = []): string[] {
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) => {
    if (key.endsWith('Ms') && (typeof child === 'number' || child === null)) return [[...path, key.slice(0, -2)].join('.')];
    return durationPaths(child, [...path, key]);
  });
}

// The file text setting `path` to `value` (sections nested as the path says), with the
// cross-field partners that let either end stand.
function durationFile(path: string, value: string): string {
  const partners: Record<string, string> = {
    'notifier.psiStallThreshold': 'psiWindow: 10s',
    'notifier.fastCheckMinInterval': `fastCheckMaxInterval: ${value}`,
    'notifier.fastCheckMaxInterval': `fastCheckMinInterval: ${value}`,
  };
  const keys = path.split('.');
  const lines = keys.map((key, depth) => `${'  '.repeat(depth)}${key}:${depth === keys.length - 1 ? ` ${value}` : ''}`);
  const partner = partners[path];
  if (partner !== undefined) lines.push(`${'  '.repeat(keys.length - 1)}${partner}`);
  return `${lines.join('\n')}\n`;
}

describe('every duration has a range', () => {
  test('the defaults table bounds each duration setting, and only those', () => {
    expect(Object.keys(DURATION_BOUNDS_MS).sort()).toEqual(durationPaths(defaultAgentSettings()).sort());
  });

  for (const [path, bounds] of Object.entries(DURATION_BOUNDS_MS)) {
    test(`${path}: both ends accepted, a nanosecond past either refused naming the field and the range`, () => {
      const toNs = (ms: number): number => Math.round(ms * 1e6);
      const range = describeDurationBounds(bounds);
      for (const ms of [bounds.minMs, bounds.maxMs]) expect(() => parseConfigText(durationFile(path, formatShortDuration(ms)), 'test.yaml')).not.toThrow();
      for (const ns of [toNs(bounds.minMs) - 1, toNs(bounds.maxMs) + 1]) {
        const found = problems(durationFile(path, `${ns}ns`)).filter((p) => p.field === path);
        expect(found.map((p) => p.message)).toEqual([`must be ${range}: ${ns}ns`]);
      }
    });
  }

  test("docs/configuration.md's settings tables show each range", () => {
    const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
    for (const [path, bounds] of Object.entries(DURATION_BOUNDS_MS)) {
      // A nested setting's row names its path within the section (`owners.window`).
      const [section, key] = path.includes('.') ? [path.split('.')[0] ?? '', path.split('.').slice(1).join('.')] : ['', path];
      const heading = section === '' ? '### Top level' : `### \`${section}\``;
      const table = doc.split(heading)[1]?.split('\n### ')[0] ?? '';
      const row = table.split('\n').find((line) => line.startsWith(`| \`${key}\` |`));
      expect(row?.split(' | ')[1]).toBe(`duration ${formatShortDuration(bounds.minMs)}–${formatShortDuration(bounds.maxMs)}`);
    }
  });
});

test('a taint cool-down without the pressure taint loads, with a warning that it has no effect', () => {
  const cfg = parseConfigText('stormGuard:\n  owners:\n    taintCoolDown: 15m\n', 'test.yaml');
  expect(cfg.agent.stormGuard.owners.taintCoolDownMs).toBe(900_000);
  expect(cfg.warnings).toEqual([expect.objectContaining({ field: 'stormGuard.owners.taintCoolDown', message: expect.stringContaining('reporting.taint.enabled is false') })]);
  expect(parseConfigText('stormGuard:\n  owners:\n    taintCoolDown: 15m\nreporting:\n  taint:\n    enabled: true\n', 'test.yaml').warnings).toEqual([]);
});
