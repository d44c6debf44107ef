// The agent as shipped on a real cgroup v2 node (root, a QEMU guest, real kube-apiserver, real
// kubelet and containerd under the systemd cgroup driver): its image, the archive the deployed suite
// imports (scripts/build-image.sh), and the chart's DaemonSet, installed here with `helm install`
// and values for the guest's node (cgroup v2 under the systemd driver, the psi notifier, the node's
// image filesystem). The API server and etcd run on the machine, as for
// real-kubelet-cgroup-v2.e2e.test.ts; the guest's node, its pod and the leak run in the guest
// (test/kernel/cgroup-v2/guest/suites/deployed-chart.ts). The test control plane runs no controller
// manager: what it would publish in a namespace for its pods (the `default` ServiceAccount, the
// kube-root-ca.crt ConfigMap the projected service-account volume reads) is created here and in
// the guest. Times: docs/real-kubelet-cgroup-v2.md.

import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { agentImage } from './harness/agent-image.js';
import { findClusterBinaries, findControlPlaneBinaries, findRealNodeBinaries, foundBinaries, REPO_ROOT } from './harness/binaries.js';
import { ControlPlane } from './harness/control-plane.js';
import { guestClusterSuite, writeGuestCluster } from './harness/guest-cluster.js';
import { kubeconfigYaml } from './harness/kubeconfig.js';
import { publishNamespaceDefaults } from './harness/objects.js';
import { nodeImages } from './harness/real-node.js';
import { GUEST_IMAGE_FS_DIR } from '../kernel/cgroup-v2/guest/guest-kubelet-node.js';
import { suite, type DeployedChart } from '../kernel/cgroup-v2/guest/suites/deployed-chart.js';
import { AGENT_EVICTION_HARD } from '../kernel/cgroup-v2/guest/suites/real-kubelet.js';

const NODE = 'v2-deployed';
const RELEASE = 'kube-eviction-agent';
const RELEASE_NAMESPACE = 'kube-eviction-agent';

const controlPlane = findControlPlaneBinaries();
const node = findRealNodeBinaries();
const cni = findClusterBinaries();
const images = nodeImages();
const image = await agentImage();
const helmBin = process.env.KEA_HELM_BIN;
const systemd = ['/lib/systemd/systemd', '/usr/bin/dbus-daemon'].every((path) => existsSync(path)) ? { ok: true as const } : { ok: false as const, reason: 'no systemd and D-Bus for the systemd driver (apt-get install -y systemd dbus)' };
const helm = helmBin !== undefined && helmBin !== '' ? { ok: true as const } : { ok: false as const, reason: 'KEA_HELM_BIN is not set: run eval "$(bash scripts/build-tools.sh)"' };

// What an operator sets for this node: the cgroup driver and the notifier of a cgroup v2 node, its
// image filesystem (containerd's root is not the default /var/lib/containerd here), the thresholds
// of real-kubelet.ts (above the kubelet's), and the fast passes and escalation wait of its agent.
// The kubelet's root and the pod logs are where the chart's defaults look.
function nodeValues(): Record<string, unknown> {
  return {
    // The archive's own name in containerd (harness/agent-image.ts); the tag is the chart's appVersion.
    image: { repository: 'localhost/kube-eviction-agent' },
    config: {
      evictionHard: AGENT_EVICTION_HARD,
      evictionPressureTransitionPeriod: '5s',
      housekeepingInterval: '1s',
      observe: { cgroupDriver: 'systemd', podCgroupRoot: 'kubepods', imageFsPath: GUEST_IMAGE_FS_DIR },
      notifier: { mode: 'psi' },
      // The emulated kubelet takes seconds to tear down an evicted pod (real-kubelet.ts's agent too).
      actions: { escalationTimeout: '30s' },
    },
  };
}

// What the README has an operator do: the namespace, and `helm install` with the node's values.
async function installChart(plane: ControlPlane, shared: string): Promise<void> {
  const admin = plane.admin();
  // The README's namespace, and what the controller manager would publish in it.
  await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: RELEASE_NAMESPACE, labels: { 'pod-security.kubernetes.io/enforce': 'privileged', 'pod-security.kubernetes.io/audit': 'privileged', 'pod-security.kubernetes.io/warn': 'privileged' } } });
  await publishNamespaceDefaults(admin, RELEASE_NAMESPACE, plane.caPem);
  const values = join(shared, 'values.yaml');
  writeFileSync(values, stringify(nodeValues()));
  writeFileSync(join(shared, 'kubeconfig'), kubeconfigYaml({ server: plane.url, caPem: plane.caPem, token: plane.credentials.adminToken, user: 'admin' }), { mode: 0o600 });
  const env = { PATH: process.env.PATH, KUBECONFIG: join(shared, 'kubeconfig'), HOME: shared, HELM_CACHE_HOME: join(shared, 'helm'), HELM_DATA_HOME: join(shared, 'helm'), HELM_CONFIG_HOME: join(shared, 'helm') };
  const installed = spawnSync(helmBin as string, ['install', RELEASE, 'deploy/chart', '--namespace', RELEASE_NAMESPACE, '--values', values], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 180_000 });
  if (installed.status !== 0) throw new Error(`helm install exited ${installed.status}:\n${installed.stderr}`);
}

guestClusterSuite(suite, {
  what: 'the deployed agent on cgroup v2',
  missing: [controlPlane, node, cni, images, image, systemd, helm].flatMap((lookup) => (lookup.ok ? [] : [lookup.reason])),
  // Well over the run's measured time (docs/real-kubelet-cgroup-v2.md); each case in the guest has its own.
  timeoutMs: 900_000,
  startPlane: () => ControlPlane.start({ binaries: foundBinaries(controlPlane), nodeNames: [NODE], serviceAccountAdmission: true }),
  prepare: async (plane, shared) => {
    await installChart(plane, shared);
    // The agent's token is the pod's own (its projected service-account volume).
    writeGuestCluster(shared, plane, { nodeName: NODE, driver: 'systemd', agentToken: '', imagesTar: foundBinaries(images) });
    const chart: DeployedChart = { cniBinDir: foundBinaries(cni).cniBinDir, image: foundBinaries(image), namespace: RELEASE_NAMESPACE, daemonSet: RELEASE };
    writeFileSync(join(shared, 'deployed.json'), JSON.stringify(chart));
  },
});
