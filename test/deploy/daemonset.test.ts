// deploy/daemonset.yaml, checked without a cluster: every field is one the Kubernetes API defines,
// the RBAC grants exactly the calls the agent makes, the pod has what the agent needs on a node
// (capabilities, host PIDs, host mounts, the node name, probes on the configured probe port), the
// NetworkPolicy admits the scrapers to the metrics port and no one but the node to the probe port,
// and the embedded configuration is valid and reads every host path through a mount.

import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { isSeq, parseAllDocuments, type Node } from 'yaml';
import { compareQuantity, parseQuantity } from '../../src/api/quantity.js';
import { isHardEvictionThreshold, thresholdEquals } from '../../src/api/threshold.js';
import { parseConfigText } from '../../src/config/load.js';
import type { LoadedConfig } from '../../src/config/types.js';
import { objectProblems, schemaProblems } from './kube-schema.js';
import { agentContainer, embeddedConfig, loadManifest, MANIFEST_PATH, packageVersion, type KubeObject } from './manifest.js';

const NAMESPACE = 'kube-eviction-agent';
// Maximum RSS measured for the agent's full module set with 110 pods in its view (MiB).
const MEASURED_MAX_RSS_MIB = 127;

const manifest = loadManifest();
const daemonSet = manifest.one('DaemonSet');
const podSpec = daemonSet.spec.template.spec as KubeObject;
const container = agentContainer(manifest);
const config = embeddedConfig(manifest);
const loaded: LoadedConfig = parseConfigText(config.text, `${MANIFEST_PATH} ConfigMap ${config.key}`);

const mib = (n: number): ReturnType<typeof parseQuantity> => parseQuantity(`${n}Mi`);

describe('deploy/daemonset.yaml documents', () => {
  // In Helm's install order (the manifest is the chart rendered): what others refer to comes first.
  test('holds the Namespace, NetworkPolicy, ServiceAccount, ConfigMap, ClusterRole, ClusterRoleBinding, the headless Service and DaemonSet, namespace first', () => {
    expect(manifest.documents.map((d) => d.kind)).toEqual(['Namespace', 'NetworkPolicy', 'ServiceAccount', 'ConfigMap', 'ClusterRole', 'ClusterRoleBinding', 'Service', 'DaemonSet']);
  });

  // The field check reads the version, not the group: the groups are pinned here.
  test('each object has its API group and version', () => {
    expect(manifest.documents.map((d) => `${d.kind} ${d.apiVersion}`)).toEqual([
      'Namespace v1',
      'NetworkPolicy networking.k8s.io/v1',
      'ServiceAccount v1',
      'ConfigMap v1',
      'ClusterRole rbac.authorization.k8s.io/v1',
      'ClusterRoleBinding rbac.authorization.k8s.io/v1',
      'Service v1',
      'DaemonSet apps/v1',
    ]);
  });

  // hostPID, hostPath volumes and CAP_DAC_READ_SEARCH are each outside the baseline level
  // (test/e2e/pod-security.e2e.test.ts shows the real API server's verdict).
  test('every namespaced object is in the agent namespace, whose Pod Security level admits host namespaces and mounts', () => {
    expect(manifest.one('Namespace').metadata.name).toBe(NAMESPACE);
    for (const kind of ['NetworkPolicy', 'ServiceAccount', 'ConfigMap', 'DaemonSet']) expect(manifest.one(kind).metadata.namespace).toBe(NAMESPACE);
    expect(manifest.one('Namespace').metadata.labels['pod-security.kubernetes.io/enforce']).toBe('privileged');
  });

  for (const document of manifest.documents) {
    test(`${document.kind} ${document.metadata?.name} uses only fields the Kubernetes API defines, with their types`, () => {
      expect(objectProblems(document)).toEqual([]);
    });
  }
});

describe('the field check itself', () => {
  // Each mistake must be caught, or the check above proves nothing.
  const pod = (spec: KubeObject): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } });
  const cases: { name: string; object: KubeObject; problem: string }[] = [
    { name: 'misspelt pod field', object: pod({ hostPid: true }), problem: 'spec.hostPid: unknown field' },
    { name: 'misspelt volumeMount field', object: pod({ containers: [{ name: 'c', volumeMounts: [{ name: 'v', mountPath: '/v', mountpropagation: 'HostToContainer' }] }] }), problem: 'spec.containers[0].volumeMounts[0].mountpropagation: unknown field' },
    { name: 'string for an integer', object: pod({ terminationGracePeriodSeconds: '5' }), problem: 'spec.terminationGracePeriodSeconds: expected an integer' },
    { name: 'unquoted boolean label value', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', labels: { a: true } } }, problem: 'metadata.labels["a"]: expected a string' },
    { name: 'field of the wrong object', object: { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'd' }, spec: { replicas: 1 } }, problem: 'spec.replicas: unknown field' },
    { name: 'misspelt kind', object: { apiVersion: 'apps/v1', kind: 'DeamonSet' }, problem: 'no Kubernetes type' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(objectProblems(tc.object).join('\n')).toContain(tc.problem);
    });
  }

  test('a list where a map belongs', () => {
    expect(schemaProblems({ spec: [] }, 'V1Pod')).toEqual([expect.stringContaining('spec: expected a map')]);
  });
});

describe('RBAC', () => {
  const role = manifest.one('ClusterRole');
  const rules = role.rules as KubeObject[];
  const grants = rules.flatMap((rule) =>
    (rule.apiGroups as string[]).flatMap((group) => (rule.resources as string[]).flatMap((resource) => (rule.verbs as string[]).map((verb) => `${group === '' ? 'core' : group}/${resource}:${verb}`))),
  );

  test('grants exactly the calls the agent makes', () => {
    expect([...grants].sort()).toEqual(
      [
        // the pod view of this node, and re-reading a pod before acting
        'core/pods:get',
        'core/pods:list',
        'core/pods:watch',
        // hard evictions, taint evictions
        'core/pods:delete',
        // soft evictions through the Eviction API
        'core/pods/eviction:create',
        // the DisruptionTarget condition
        'core/pods/status:patch',
        // the agent's own Node
        'core/nodes:get',
        'core/nodes:list',
        'core/nodes:watch',
        // pressure conditions
        'core/nodes/status:patch',
        // the NoSchedule pressure taint
        'core/nodes:patch',
        // Events
        'core/events:create',
        'core/events:patch',
        // (no nodes/stats: the default observe.source is cgroupfs; test/deploy/chart.test.ts renders the kubelet source)
        // an evicted pod's ReplicaSet, for its Deployment (the eviction storm guard)
        'apps/replicasets:get',
      ].sort(),
    );
  });

  test('grants each call once, by name: no wildcards, no resourceNames, no non-resource URLs', () => {
    expect(new Set(grants).size).toBe(grants.length);
    for (const rule of rules) {
      expect([...rule.apiGroups, ...rule.resources, ...rule.verbs]).not.toContain('*');
      expect(rule.resourceNames).toBeUndefined();
      expect(rule.nonResourceURLs).toBeUndefined();
    }
  });

  test('grants nothing on secrets or configmaps', () => {
    expect(grants.filter((g) => /secrets|configmaps/.test(g))).toEqual([]);
  });

  test('every rule says which feature needs it', () => {
    const doc = parseAllDocuments(readFileSync(MANIFEST_PATH, 'utf8')).find((d) => d.get('kind') === 'ClusterRole');
    const seq = doc?.get('rules', true) as Node | undefined;
    if (!isSeq(seq)) throw new Error('ClusterRole rules is not a list');
    // The comment above the first item belongs to the list in the YAML model.
    const comments = seq.items.map((item, i) => (item as Node).commentBefore ?? (i === 0 ? seq.commentBefore : undefined));
    expect(comments.every((c) => typeof c === 'string' && c.trim().length > 10)).toBe(true);
    expect(comments).toHaveLength(rules.length);
  });

  test('is bound to the service account the DaemonSet runs as', () => {
    const binding = manifest.one('ClusterRoleBinding');
    const account = manifest.one('ServiceAccount');
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.metadata.name });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: account.metadata.name, namespace: account.metadata.namespace }]);
    expect(podSpec.serviceAccountName).toBe(account.metadata.name);
    expect(podSpec.automountServiceAccountToken).not.toBe(false);
  });
});

describe('the NetworkPolicy', () => {
  const policy = manifest.one('NetworkPolicy');
  const rules = policy.spec.ingress as KubeObject[];
  const portsOf = (rule: KubeObject): number[] => (rule.ports as KubeObject[]).map((p) => p.port as number);

  const cases: { name: string; check: () => void }[] = [
    { name: "selects the DaemonSet's pods", check: () => expect(daemonSet.spec.template.metadata.labels).toMatchObject(policy.spec.podSelector.matchLabels) },
    // Egress is left alone: the agent calls the API server and the kubelet, wherever they are.
    { name: 'restricts ingress only', check: () => expect(policy.spec.policyTypes).toEqual(['Ingress']) },
    // A rule without `from`, or without `ports`, admits every source or every port.
    { name: 'every rule names its sources and its ports', check: () => rules.forEach((rule) => expect([(rule.from ?? []).length > 0, (rule.ports ?? []).length > 0]).toEqual([true, true])) },
    {
      name: "admits the scrapers and the release's helm test pod to the metrics port, and nothing to the probe port but the node (which no policy blocks)",
      check: () => {
        expect(rules.map(portsOf)).toEqual([[loaded.agent.server.port], [loaded.agent.server.port]]);
        expect(rules[1]?.from).toEqual([{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'kube-eviction-agent', 'app.kubernetes.io/component': 'test' } } }]);
        expect(rules[0]?.from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } }]);
      },
    },
  ];
  for (const tc of cases) test(tc.name, tc.check);
});

describe('the DaemonSet', () => {
  const env = (name: string): KubeObject | undefined => (container.env as KubeObject[]).find((e) => e.name === name);
  const namedPort = (port: string | number): number => (typeof port === 'number' ? port : (container.ports as KubeObject[]).find((p) => p.name === port)?.containerPort);

  const cases: { name: string; check: () => void }[] = [
    { name: 'selects the pods of its own template', check: () => expect(daemonSet.spec.template.metadata.labels).toMatchObject(daemonSet.spec.selector.matchLabels) },
    { name: 'runs as root', check: () => expect(container.securityContext).toMatchObject({ runAsUser: 0, runAsNonRoot: false }) },
    {
      name: 'drops every capability and adds back only the two measured (test/kernel/capabilities.test.ts)',
      check: () => expect(container.securityContext.capabilities).toEqual({ drop: ['ALL'], add: ['KILL', 'DAC_READ_SEARCH'] }),
    },
    { name: 'cannot gain privileges (no-new-privs)', check: () => expect(container.securityContext.allowPrivilegeEscalation).toBe(false) },
    { name: "runs under the container runtime's default seccomp profile", check: () => expect(container.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' }) },
    { name: 'keeps its own filesystem read-only', check: () => expect(container.securityContext.readOnlyRootFilesystem).toBe(true) },
    { name: 'nothing in the pod is privileged', check: () => expect(JSON.stringify(podSpec)).not.toMatch(/"privileged":true/) },
    { name: 'shares the host PID namespace (local termination)', check: () => expect(podSpec.hostPID).toBe(true) },
    { name: 'is system-node-critical', check: () => expect(podSpec.priorityClassName).toBe('system-node-critical') },
    { name: 'tolerates every taint', check: () => expect(podSpec.tolerations).toEqual([{ operator: 'Exists' }]) },
    { name: 'gets its node name from the downward API', check: () => expect(env('NODE_NAME')).toEqual({ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }) },
    // Going below the -997 the kubelet gives a node-critical pod needs CAP_SYS_RESOURCE, which the
    // container lacks: the privileged fallback passes --oom-score-adj=-999.
    { name: 'runs the run command, without an OOM score it could not set', check: () => expect([container.args[0], container.args.filter((a: string) => a.startsWith('--oom-score-adj'))]).toEqual(['run', []]) },
    { name: 'runs the image of this version', check: () => expect(container.image).toMatch(new RegExp(`:${packageVersion().replaceAll('.', '\\.')}$`)) },
    { name: 'stops promptly', check: () => expect(podSpec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(1) },
    { name: 'gives up waiting within ten seconds', check: () => expect(podSpec.terminationGracePeriodSeconds).toBeLessThanOrEqual(10) },
    // The new pod starts as a standby beside the old one (the node lock lets one act) and takes over when it exits.
    { name: 'rolls out with surge: the new pod first, no node without an agent', check: () => expect(daemonSet.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } }) },
    {
      name: 'names itself for the node lock: its pod, namespace, release and image',
      check: () => {
        expect(env('POD_NAME')).toEqual({ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
        expect(env('POD_NAMESPACE')).toEqual({ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } });
        expect(env('KEA_RELEASE')?.value).toBe(`${daemonSet.metadata.namespace}/${daemonSet.metadata.name}`);
        expect(env('KEA_IMAGE')?.value).toBe(container.image);
      },
    },
    {
      name: 'probes liveness on /healthz and readiness on /readyz, on the probe port, which nothing else shares',
      check: () => {
        expect(container.livenessProbe.httpGet.path).toBe('/healthz');
        expect(container.readinessProbe.httpGet.path).toBe('/readyz');
        expect(container.startupProbe.httpGet.path).toBe('/healthz');
        for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) expect(namedPort(probe.httpGet.port)).toBe(loaded.agent.server.probePort);
        expect(loaded.agent.server.probePort).not.toBe(loaded.agent.server.port);
      },
    },
    {
      name: 'declares the metrics port and the probe port',
      check: () =>
        expect(container.ports).toEqual([
          { name: 'http-metrics', containerPort: loaded.agent.server.port, protocol: 'TCP' },
          { name: 'http-probes', containerPort: loaded.agent.server.probePort, protocol: 'TCP' },
        ]),
    },
    {
      name: 'requests the measured steady state and limits memory with headroom',
      check: () => {
        const { requests, limits } = container.resources as { requests: Record<string, string>; limits: Record<string, string> };
        expect(requests.cpu).toBe('20m');
        expect(compareQuantity(parseQuantity(requests.memory as string), mib(MEASURED_MAX_RSS_MIB))).toBe(1);
        expect(compareQuantity(parseQuantity(limits.memory as string), mib(Math.ceil(MEASURED_MAX_RSS_MIB * 1.5)))).toBe(1);
      },
    },
    { name: 'sets no CPU limit (throttling would delay reactions)', check: () => expect(container.resources.limits.cpu).toBeUndefined() },
    {
      name: 'caps the V8 heap below the memory limit',
      check: () => {
        const match = /--max-old-space-size=(\d+)/.exec(env('NODE_OPTIONS')?.value ?? '');
        expect(match).not.toBeNull();
        expect(compareQuantity(mib(Number(match?.[1])), parseQuantity(container.resources.limits.memory))).toBe(-1);
      },
    },
  ];
  for (const tc of cases) test(tc.name, tc.check);
});

describe('the embedded configuration', () => {
  test('is a valid AgentConfiguration with nothing to warn about', () => {
    expect(loaded.kind).toBe('AgentConfiguration');
    expect(loaded.warnings).toEqual([]);
  });

  test('has exactly the kubelet default hard thresholds', () => {
    const defaults = parseConfigText('apiVersion: kube-eviction-agent.io/v1alpha1\nkind: AgentConfiguration\n', 'defaults');
    const hard = loaded.eviction.thresholds.filter(isHardEvictionThreshold);
    const defaultHard = defaults.eviction.thresholds.filter(isHardEvictionThreshold);
    expect(hard).toHaveLength(defaultHard.length);
    for (const threshold of defaultHard) expect(hard.some((t) => thresholdEquals(t, threshold))).toBe(true);
    expect(loaded.eviction.pressureTransitionPeriodMs).toBe(defaults.eviction.pressureTransitionPeriodMs);
  });

  test('has a soft memory threshold a little above the hard one, with a grace period', () => {
    const memory = loaded.eviction.thresholds.filter((t) => t.signal === 'memory.available');
    const hard = memory.find(isHardEvictionThreshold);
    const soft = memory.find((t) => !isHardEvictionThreshold(t));
    if (hard?.value.kind !== 'quantity' || soft?.value.kind !== 'quantity') throw new Error('expected hard and soft memory.available quantities');
    expect(compareQuantity(soft.value.quantity, hard.value.quantity)).toBe(1);
    expect(compareQuantity(soft.value.quantity, parseQuantity('1Gi'))).toBe(-1);
    expect(soft.gracePeriodMs).toBeGreaterThan(0);
    expect(loaded.eviction.maxPodGracePeriodSeconds).toBeGreaterThan(0);
  });

  const settings: { name: string; actual: () => unknown; expected: unknown }[] = [
    { name: 'reads the host through /host', actual: () => loaded.agent.observe.hostRoot, expected: '/host' },
    { name: 'observes cgroupfs directly', actual: () => loaded.agent.observe.source, expected: 'cgroupfs' },
    { name: 'picks its notifier from the kernel', actual: () => loaded.agent.notifier.mode, expected: 'auto' },
    { name: 'acts (no dry run)', actual: () => loaded.agent.actions.dryRun, expected: false },
    { name: 'kills locally on hard memory pressure', actual: () => loaded.agent.actions.localTermination, expected: true },
    { name: 'soft-evicts through the Eviction API', actual: () => loaded.agent.actions.softEviction, expected: 'eviction-api' },
    { name: 'reports node conditions', actual: () => loaded.agent.reporting.nodeConditions, expected: true },
    { name: 'records events', actual: () => loaded.agent.reporting.events, expected: true },
    { name: 'does not taint', actual: () => loaded.agent.reporting.taint.enabled, expected: false },
    { name: 'leaves NoExecute taints to the cluster', actual: () => loaded.agent.taintEviction.enabled, expected: false },
    { name: 'leaves the node name to NODE_NAME', actual: () => loaded.agent.nodeName, expected: null },
    { name: 'serves on every address', actual: () => loaded.agent.server.address, expected: '0.0.0.0' },
  ];
  for (const tc of settings) test(tc.name, () => expect(tc.actual()).toEqual(tc.expected));
});

describe('mounts', () => {
  const mounts = container.volumeMounts as KubeObject[];
  const volumes = new Map((podSpec.volumes as KubeObject[]).map((v) => [v.name as string, v]));
  const hostRoot = loaded.agent.observe.hostRoot;
  const observed = loaded.agent.observe;
  // The settings hold host paths; the agent reads each one at hostRoot + path.
  const inContainer = (hostPath: string): string => posix.join(hostRoot, hostPath);
  const hostPaths: { name: string; path: string; writable: boolean }[] = [
    { name: 'cgroupRoot', path: inContainer(observed.cgroupRoot), writable: true },
    { name: 'procRoot', path: inContainer(observed.procRoot), writable: false },
    { name: 'kubeletRootDir', path: inContainer(observed.kubeletRootDir), writable: false },
    { name: 'imageFsPath', path: inContainer(observed.imageFsPath), writable: false },
    { name: 'containerFsPath', path: inContainer(observed.containerFsPath), writable: false },
    { name: 'podLogsDir', path: inContainer(observed.podLogsDir), writable: false },
  ];
  const mountFor = (path: string): KubeObject | undefined =>
    mounts.filter((m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`)).sort((a, b) => b.mountPath.length - a.mountPath.length)[0];

  for (const tc of hostPaths) {
    test(`observe.${tc.name}, read at ${tc.path}, is the host's own directory mounted there${tc.writable ? ', writable' : ', read-only'}`, () => {
      const mount = mountFor(tc.path);
      if (mount === undefined) throw new Error(`nothing is mounted at ${tc.path}`);
      const volume = volumes.get(mount.name);
      expect(volume?.hostPath).toBeDefined();
      // The mount shows the host's directory at the place hostRoot says it is.
      expect(posix.join(hostRoot, volume?.hostPath.path)).toBe(mount.mountPath);
      expect(mount.readOnly === true).toBe(!tc.writable);
    });
  }

  test('the kubelet and runtime directories follow mounts made after the agent started', () => {
    for (const path of [observed.kubeletRootDir, observed.imageFsPath]) expect(mountFor(inContainer(path))?.mountPropagation).toBe('HostToContainer');
  });

  test('the node lock directory is the host\'s own, writable, at the path the configuration names', () => {
    const directory = loaded.agent.nodeLock.directory;
    const mount = mounts.find((m) => m.mountPath === directory);
    expect(mount?.readOnly).toBeUndefined();
    expect(volumes.get(mount?.name)?.hostPath).toEqual({ path: directory, type: 'DirectoryOrCreate' });
  });

  test('every host directory mounted is one the configuration reads', () => {
    const used = new Set([...hostPaths.map((p) => mountFor(p.path)?.name), mounts.find((m) => m.mountPath === loaded.agent.nodeLock.directory)?.name]);
    const hostVolumes = [...volumes.values()].filter((v) => v.hostPath !== undefined).map((v) => v.name);
    expect(hostVolumes.filter((name) => !used.has(name))).toEqual([]);
  });

  test('the configuration is the ConfigMap mounted as a directory, so updates reach the pod', () => {
    const mount = mounts.find((m) => m.mountPath === posix.dirname(config.path));
    expect(mount).toBeDefined();
    expect(mount?.subPath).toBeUndefined();
    expect(mount?.readOnly).toBe(true);
    expect(volumes.get(mount?.name)?.configMap?.name).toBe(manifest.one('ConfigMap').metadata.name);
  });
});
