// Builders for initializer tests: configurations as an administrator writes them.
import type { KubeObject } from '../../../shared/kube/types.ts';

export const SEEDER_SA = 'system:serviceaccount:secret-seeder:seeder';
export const RECONCILER = 'system:serviceaccount:furnish-system:furnish-reconciler';

export function configuration(name: string, initializers: unknown[]): KubeObject {
  return { apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceInitializationConfiguration', metadata: { name }, spec: { initializers } };
}

/** `secret-seeder` (its ServiceAccount, every namespace) and `vault` (group vault-admins, label vault=on, 60 s). */
export const SEEDER = { name: 'secret-seeder', principals: [{ kind: 'ServiceAccount', namespace: 'secret-seeder', name: 'seeder' }] };
export const VAULT = { name: 'vault', principals: [{ kind: 'Group', name: 'vault-admins' }], namespaces: { labelSelector: { matchLabels: { vault: 'on' } } }, timeoutSeconds: 60 };
