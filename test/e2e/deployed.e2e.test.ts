// The agent deployed as shipped (root, cgroup v1, real kube-apiserver, controller manager,
// scheduler, kubelet, containerd, CNI bridge and kube-proxy: harness/cluster.ts): its image, built
// here without a container engine (scripts/build-image.sh), imported into the node's containerd,
// and run by `helm install` of deploy/chart as the DaemonSet's pod, not privileged, with the chart's
// securityContext, probes, mounts and resources unchanged.

import { findClusterBinaries, findRealNodeBinaries } from './harness/binaries.js';
import { Cluster } from './harness/cluster.js';
import { createNamespace, createPod, type PodLike } from './harness/objects.js';
import { nodeImages, WORKLOAD_IMAGE } from './harness/real-node.js';
import { e2eSuite } from './harness/suite.js';
import { waitFor } from './harness/wait.js';

const MiB = 1024n * 1024n;
const NODE = 'deployed-node';
const KUBELET_EVICTION_HARD = { 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '2%', 'imagefs.inodesFree': '2%' };

const binaries = findRealNodeBinaries();
const clusterBinaries = findClusterBinaries();
const images = nodeImages();
const suite = e2eSuite<Cluster>({
  nodeNames: [NODE],
  needsCgroupV1: true,
  serviceAccountAdmission: true,
  skipReasons: [...(binaries.ok ? [] : [binaries.reason]), ...(clusterBinaries.ok ? [] : [clusterBinaries.reason]), ...(images.ok ? [] : [images.reason])],
  fixture: {
    start: ({ plane }) => {
      if (!binaries.ok || !clusterBinaries.ok || !images.ok) throw new Error('unreachable: the suite skips without binaries or images');
      return Cluster.start({
        plane,
        binaries: binaries.binaries,
        clusterBinaries: clusterBinaries.binaries,
        nodeName: NODE,
        imagesTar: images.binaries,
        kubepodsLimitBytes: 1536n * MiB,
        rootDirSizeBytes: 256n * MiB,
        evictionHard: KUBELET_EVICTION_HARD,
        podPidsLimit: 1024,
      });
    },
    stop: (cluster) => cluster.stop(),
    diagnostics: (cluster) => `cluster:\n${cluster.diagnostics()}`,
  },
});

suite.test('a pod on the pod network gets an address from the CNI bridge and the scheduler binds a pod without a node name', async ({ admin }) => {
  await createNamespace(admin, 'network');
  await waitFor(async () => (await admin.request('GET', '/api/v1/namespaces/network/serviceaccounts/default')).status === 200, { what: 'the default ServiceAccount of network', timeoutMs: 30_000 });
  await createPod(admin, 'network', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'scheduled' },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: WORKLOAD_IMAGE, imagePullPolicy: 'Never', args: ['hold', '8'] }] },
  });
  const pod = await waitFor(async () => {
    const got = await admin.request<PodLike & { spec?: { nodeName?: string }; status?: { podIP?: string } }>('GET', '/api/v1/namespaces/network/pods/scheduled');
    return got.body.status?.phase === 'Running' ? got.body : undefined;
  }, { what: 'the pod Running', timeoutMs: 90_000, intervalMs: 500 });
  expect(pod.spec?.nodeName).toBe(NODE);
  expect(pod.status?.podIP).toMatch(/^10\.244\.0\.\d+$/);
}, 180_000);
