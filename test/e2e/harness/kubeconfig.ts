// A kubeconfig document for the product's `connect({ kubeconfigYaml })`, the way an operator
// would write one for a token identity: the harness's CA inline, a bearer token, one context.

import { stringify } from 'yaml';

export function kubeconfigYaml(options: { readonly server: string; readonly caPem: string; readonly token: string; readonly user: string }): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'e2e', cluster: { server: options.server, 'certificate-authority-data': Buffer.from(options.caPem).toString('base64') } }],
    users: [{ name: options.user, user: { token: options.token } }],
    contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: options.user } }],
    'current-context': 'e2e',
  });
}
