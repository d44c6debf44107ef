// The credentials of one test control plane, generated with openssl into its temporary
// directory: the service-account signing key pair (TokenRequest needs it), a self-signed serving
// certificate for 127.0.0.1 (and the `kubernetes` Service's address) that is also the CA every client trusts, and a static token file
// with the admin identity (system:masters) and one kubelet identity (system:node:<name>, group
// system:nodes) per node the tests register.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The `kubernetes` Service's ClusterIP (the first address of the API server's
 * --service-cluster-ip-range): pods with an in-cluster configuration verify the API server's
 * certificate against it.
 */
export const KUBERNETES_SERVICE_IP = '10.0.0.1';

export interface Credentials {
  readonly saKeyFile: string;
  readonly saPubFile: string;
  readonly servingCertFile: string;
  readonly servingKeyFile: string;
  readonly tokenFile: string;
  /** The serving certificate, PEM: the CA the clients trust. */
  readonly caPem: string;
  readonly adminToken: string;
  /** The kubelet token of each node, by node name. */
  readonly nodeTokens: ReadonlyMap<string, string>;
}

function openssl(args: readonly string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

export function generateCredentials(dir: string, nodeNames: readonly string[]): Credentials {
  const saKeyFile = join(dir, 'sa.key');
  const saPubFile = join(dir, 'sa.pub');
  const servingKeyFile = join(dir, 'serving.key');
  const servingCertFile = join(dir, 'serving.crt');
  const tokenFile = join(dir, 'tokens.csv');
  openssl(['genrsa', '-out', saKeyFile, '2048']);
  openssl(['rsa', '-in', saKeyFile, '-pubout', '-out', saPubFile]);
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', `subjectAltName=IP:127.0.0.1,DNS:localhost,IP:${KUBERNETES_SERVICE_IP},DNS:kubernetes.default.svc`, '-keyout', servingKeyFile, '-out', servingCertFile]);
  const token = (): string => randomBytes(16).toString('hex');
  const adminToken = token();
  const nodeTokens = new Map(nodeNames.map((name) => [name, token()]));
  // token,user,uid,"group1,group2"
  const lines = [`${adminToken},admin,admin-uid,system:masters`, ...[...nodeTokens].map(([name, t]) => `${t},system:node:${name},${name}-uid,system:nodes`)];
  writeFileSync(tokenFile, `${lines.join('\n')}\n`, { mode: 0o600 });
  return { saKeyFile, saPubFile, servingCertFile, servingKeyFile, tokenFile, caPem: readFileSync(servingCertFile, 'utf8'), adminToken, nodeTokens };
}
