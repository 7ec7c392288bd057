// The kubeconfig kube-sim writes: one cluster holding the generated CA, one user and one context
// per configured user (context named after the user), current context `admin` when present.
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import type { SimUser } from './authn.ts';

export const CLUSTER_NAME = 'kube-sim';

export function kubeconfigYaml(server: string, caPem: string, users: SimUser[], currentContext: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [{ name: CLUSTER_NAME, cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: users.map((u) => ({ name: u.name, user: { token: u.token } })),
    contexts: users.map((u) => ({ name: u.context, context: { cluster: CLUSTER_NAME, user: u.name } })),
    'current-context': currentContext,
  });
}

export function writeKubeconfig(path: string, server: string, caPem: string, users: SimUser[]): void {
  const current = users.find((u) => u.name === 'admin')?.context ?? users[0]?.context ?? '';
  writeFileSync(path, kubeconfigYaml(server, caPem, users, current), { mode: 0o600 });
}
