// The LNamespace API (furnish.dev/v1alpha1, cluster-scoped): a namespace with its team around it.
// Shapes, resource coordinates and the label/annotation keys the reconciler owns. No logic.
import type { ResourceInfo } from '../kube/resources.ts';
import type { KubeObject, Subject } from '../kube/types.ts';

export type LSubject = Subject;

export interface LNamespaceSpec {
  users?: LSubject[];
  managers?: LSubject[];
  sudoers?: LSubject[];
  billing?: Record<string, string>;
}

export interface LNamespaceStatus {
  namespace?: string;
  /**
   * uid of the namespace this LNamespace created or adopted: ownership recognised without the
   * namespace's ownerReferences, which a sudoer (cluster-admin inside) can edit. Only the reconciler
   * writes status.
   */
  namespaceUID?: string;
  /** What `kubectl sudo` impersonates for this LNamespace: its sudoers group and the stand-in user of a Group sudoer's members. */
  sudo?: { group: string; standIn: string };
  observedGeneration?: number;
  bindings?: { users: number; managers: number; sudoers: number };
  billing?: Record<string, string>;
  conditions?: Array<{ type: string; status: 'True' | 'False' | 'Unknown'; reason: string; message: string; lastTransitionTime?: string }>;
}

export interface LNamespace extends KubeObject {
  spec?: LNamespaceSpec;
  status?: LNamespaceStatus;
}

export const LNS_GROUP = 'furnish.dev';
export const LNS_VERSION = 'v1alpha1';
export const LNS_API_VERSION = `${LNS_GROUP}/${LNS_VERSION}`;
export const LNS_KIND = 'LNamespace';
export const LNAMESPACES: ResourceInfo = { group: LNS_GROUP, version: LNS_VERSION, plural: 'lnamespaces', namespaced: false };
export const ORGANIZATIONS: ResourceInfo = { group: LNS_GROUP, version: LNS_VERSION, plural: 'organizations', namespaced: false };
export const CLUSTERROLES: ResourceInfo = { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterroles', namespaced: false };
export const CLUSTERROLEBINDINGS: ResourceInfo = { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterrolebindings', namespaced: false };
export const ROLES: ResourceInfo = { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'roles', namespaced: true };
export const ROLEBINDINGS: ResourceInfo = { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'rolebindings', namespaced: true };

export const RBAC_GROUP = 'rbac.authorization.k8s.io';
export const RBAC_API_VERSION = `${RBAC_GROUP}/v1`;

export const LNS_KEY = {
  /** Contract with mutate-namespace's trusted-creator path: the user the namespace is created for. */
  requester: 'furnish.dev/requester',
  /** Prefix of the billing annotations carried to the namespace: `furnish.dev/billing.<field>`. */
  billingPrefix: 'furnish.dev/billing.',
  /** On an LNamespace: put it around a namespace that already exists (admission: verb `adopt`). */
  adopt: 'furnish.dev/adopt-namespace',
  /** Prefix of the per-LNamespace label on everything it holds: `lns.furnish.dev/<name>`. */
  holderPrefix: 'lns.furnish.dev/',
  /** On the shared self-impersonation objects: marks them as shared (value "true"). */
  selfImpersonation: 'furnish.dev/self-impersonation',
  /** On the shared self-impersonation objects: the user they let impersonate themselves. */
  user: 'furnish.dev/user',
  managedBy: 'app.kubernetes.io/managed-by',
} as const;

/** The verb a principal needs on lnamespaces/<name> to put an LNamespace around an existing namespace. */
export const ADOPT_VERB = 'adopt';

/**
 * Group whose members are root in the namespace; `kubectl sudo` asks for it with --as-group (read
 * from status.sudo, never derived from the namespace name). Named after the LNamespace's uid under
 * Furnish's prefix, so no binding written before this LNamespace existed can mean it, no
 * LNamespace name can make it equal another's (names have no `:`), and an LNamespace deleted and
 * created again under the same name inherits no binding (the seed's `<name>-sudoers` allowed all three).
 */
export const sudoersGroup = (lns: { name: string; uid: string }): string => `furnish:sudoers:${lns.name}:${lns.uid}`;

/**
 * The user `kubectl sudo` acts as for a member of a Group sudoer. Impersonation needs a user, and
 * RBAC cannot say "impersonate yourself" for a group's unknown members, so the sudoers may
 * impersonate this stand-in, which has no rights of its own beyond the sudoers group it comes
 * with. The audit log still records the real user behind every request. Named by uid, like the group.
 */
export const sudoStandIn = (lns: { name: string; uid: string }): string => `furnish:sudo:${lns.name}:${lns.uid}`;
