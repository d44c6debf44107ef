// The pod network of a cluster on this machine (cluster.ts), inside a network namespace of its own:
// containerd starts in a new one (containerd.ts), and the kubelet, kube-proxy and the API server's
// forwarder (api-forwarder.ts) join it. In it: the node's address on a dummy interface (a Node
// address that is not loopback, which the kubelet requires, on a veth pair), a default route through it (so the
// node's own processes reach Service addresses), IP forwarding, and the CNI reference plugins'
// bridge for the pods. Every address, route and rule lives and dies with that namespace: the
// machine's own network is never touched.

/** The node's address in the namespace (the kubelet's --node-ip, kube-proxy's node address). */
export const NODE_IP = '10.77.0.1';
/** The pods' addresses: the CNI bridge's host-local range, its gateway the first address. */
export const POD_SUBNET = '10.244.0.0/24';
/** What kube-proxy takes for cluster traffic (the pod subnet's supernet). */
export const CLUSTER_CIDR = '10.244.0.0/16';
const NODE_INTERFACE = 'kea-node';

export interface PodNetwork {
  /** The directory of the CNI plugins (scripts/build-cni.sh). */
  readonly cniBinDir: string;
}

/** Shell lines, run as root in the new network namespace before containerd starts, that set it up. */
export function podNetworkSetupScript(): string[] {
  return [
    'ip link set lo up',
    // A veth pair with both ends in the namespace (this kernel has no dummy interfaces): a link
    // that is up, for the node's address and the default route.
    `ip link add ${NODE_INTERFACE} type veth peer name ${NODE_INTERFACE}-peer`,
    `ip addr add ${NODE_IP}/32 dev ${NODE_INTERFACE}`,
    `ip link set ${NODE_INTERFACE}-peer up`,
    `ip link set ${NODE_INTERFACE} up`,
    `ip route add default dev ${NODE_INTERFACE}`,
    // Per network namespace: the pods' traffic is routed through it.
    'echo 1 > /proc/sys/net/ipv4/ip_forward',
  ];
}

/** The CNI configuration list containerd gives every pod sandbox: a bridge with NAT, host-local addresses. */
export function podNetworkConflist(): string {
  const conflist = {
    cniVersion: '1.0.0',
    name: 'kea-e2e-pods',
    plugins: [
      {
        type: 'bridge',
        bridge: 'cni0',
        isGateway: true,
        ipMasq: true,
        hairpinMode: true,
        ipam: { type: 'host-local', ranges: [[{ subnet: POD_SUBNET }]], routes: [{ dst: '0.0.0.0/0' }] },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
  return `${JSON.stringify(conflist, null, 2)}\n`;
}
