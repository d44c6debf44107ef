// The kubeconfig that points the agent's own client at a stand-in, so the adapter code under
// test connects exactly as it would to a real cluster.

import type { ApiStandIn } from './public-api.js';

/** A kubeconfig for the stand-in, with token auth, so `connect({ kubeconfig })` uses it as it would a real cluster. */
export function kubeconfigFor(standIn: Pick<ApiStandIn, 'url'>, token = 'stand-in-token'): string {
  // The client library refuses plain http unless TLS verification is explicitly off.
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: stand-in',
    '  cluster:',
    `    server: ${standIn.url}`,
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: stand-in',
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: stand-in',
    '  context:',
    '    cluster: stand-in',
    '    user: stand-in',
    'current-context: stand-in',
    '',
  ].join('\n');
}
