// What an LNamespace asks for, as Kubernetes objects: the namespace and the RBAC DESIGN.md lists
// for its users, managers and sudoers. Pure: from the LNamespace (and its organization's billing
// map) to objects; the planner compares them with what is live.
import { createHash } from 'node:crypto';
import { KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { qualifiedNameErrors } from '../render/names.ts';
import { LNS_API_VERSION, LNS_KEY, LNS_KIND, RBAC_API_VERSION, RBAC_GROUP, sudoersGroup, sudoStandIn, type LNamespace, type LSubject } from './types.ts';

export interface LnsSettings {
  /** ClusterRole the users get in the namespace (default `edit`). */
  userRole: string;
  /** ClusterRole the sudoers' group gets in the namespace (default `cluster-admin`). */
  sudoRole: string;
}

export const DEFAULT_LNS_SETTINGS: LnsSettings = { userRole: 'edit', sudoRole: 'cluster-admin' };

export interface RbacSubject {
  kind: string;
  name: string;
  apiGroup?: string;
  namespace?: string;
}

/** The label every object an LNamespace holds carries: `lns.furnish.dev/<name>`. */
export const holderLabel = (lns: string): string => `${LNS_KEY.holderPrefix}${lns}`;
/** Field manager of an LNamespace's share of a shared object: each holder owns its own ownerReference and label. */
export const holderManager = (lns: string): string => `furnish-lns-${lns}`;
export { sudoersGroup };

export const usersBindingName = 'furnish:users';
export const sudoersBindingName = 'furnish:sudoers';
export const managerRoleName = (lns: string): string => `furnish:lns:${lns}:manager`;
export const sudoRoleName = (lns: string): string => `furnish:lns:${lns}:sudo`;
/** Role and RoleBinding, in a ServiceAccount sudoer's own namespace, that let it impersonate itself. */
export const serviceAccountSelfName = (lns: string, serviceAccount: string): string => `furnish:lns:${lns}:self-impersonate:${serviceAccount}`;

/**
 * Name of the shared self-impersonation ClusterRole/ClusterRoleBinding of a user: always the user
 * name's SHA-256, never the name itself, so no user name (`sha256-<hash>` included) can be named
 * like another user's objects and overwrite them. Annotation furnish.dev/user says whose it is.
 */
export function selfImpersonationName(user: string): string {
  return `furnish:self-impersonate:sha256-${createHash('sha256').update(user).digest('hex')}`;
}

/** The LNamespace's name and uid: what its sudoers group and stand-in user are named after. */
export function lnsIdentity(lns: LNamespace): { name: string; uid: string } {
  return { name: lns.metadata.name!, uid: lns.metadata.uid ?? '' };
}

export function rbacSubject(s: LSubject): RbacSubject {
  if (s.kind === 'ServiceAccount') return { kind: 'ServiceAccount', name: s.name, namespace: s.namespace ?? '' };
  return { apiGroup: RBAC_GROUP, kind: s.kind, name: s.name };
}

/** Subjects of one list, in order, each once (bad entries are admission's business; here they are skipped). */
export function subjectsOf(list: readonly LSubject[] | undefined): RbacSubject[] {
  const seen = new Set<string>();
  const out: RbacSubject[] = [];
  for (const s of list ?? []) {
    if (!s || typeof s.name !== 'string' || s.name === '' || !['User', 'Group', 'ServiceAccount'].includes(s.kind)) continue;
    if (s.kind === 'ServiceAccount' && !s.namespace) continue;
    const id = `${s.kind}/${s.namespace ?? ''}/${s.name}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(rbacSubject(s));
  }
  return out;
}

/** Users among the sudoers: each gets the shared right to impersonate themselves. */
export function sudoUsers(lns: LNamespace): string[] {
  return [...new Set(subjectsOf(lns.spec?.sudoers).filter((s) => s.kind === 'User').map((s) => s.name))].sort();
}

function ownerRef(lns: LNamespace, controller: boolean): Record<string, unknown> {
  return { apiVersion: LNS_API_VERSION, kind: LNS_KIND, name: lns.metadata.name!, uid: lns.metadata.uid!, ...(controller ? { controller: true } : {}) };
}

function held(lns: LNamespace, kind: string, name: string, namespace: string | undefined, body: Record<string, unknown>): KubeObject {
  const lnsName = lns.metadata.name!;
  return {
    apiVersion: RBAC_API_VERSION,
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}), labels: { [holderLabel(lnsName)]: 'true', [LNS_KEY.managedBy]: 'furnish' }, ownerReferences: [ownerRef(lns, true)] },
    ...body,
  };
}

const roleRef = (name: string) => ({ apiGroup: RBAC_GROUP, kind: 'ClusterRole', name });

/** The RBAC objects this LNamespace alone holds (field manager `furnish`, controller reference). */
export function exclusiveObjects(lns: LNamespace, settings: LnsSettings): KubeObject[] {
  const name = lns.metadata.name!;
  const users = subjectsOf(lns.spec?.users);
  const managers = subjectsOf(lns.spec?.managers);
  const sudoers = subjectsOf(lns.spec?.sudoers);
  const out: KubeObject[] = [];
  if (users.length > 0) out.push(held(lns, 'RoleBinding', usersBindingName, name, { roleRef: roleRef(settings.userRole), subjects: users }));
  if (managers.length > 0) {
    out.push(held(lns, 'ClusterRole', managerRoleName(name), undefined, { rules: [{ apiGroups: ['furnish.dev'], resources: ['lnamespaces'], resourceNames: [name], verbs: ['get', 'update', 'patch'] }] }));
    out.push(held(lns, 'ClusterRoleBinding', managerRoleName(name), undefined, { roleRef: roleRef(managerRoleName(name)), subjects: managers }));
  }
  if (sudoers.length > 0) {
    out.push(held(lns, 'RoleBinding', sudoersBindingName, name, { roleRef: roleRef(settings.sudoRole), subjects: [{ apiGroup: RBAC_GROUP, kind: 'Group', name: sudoersGroup(lnsIdentity(lns)) }] }));
    out.push(held(lns, 'ClusterRole', sudoRoleName(name), undefined, { rules: sudoRules(lnsIdentity(lns), sudoers) }));
    out.push(held(lns, 'ClusterRoleBinding', sudoRoleName(name), undefined, { roleRef: roleRef(sudoRoleName(name)), subjects: sudoers }));
    out.push(...sudoers.filter((s) => s.kind === 'ServiceAccount').flatMap((sa) => serviceAccountSelfImpersonation(lns, sa)));
  }
  return out;
}

/**
 * What the sudoers may do: read their LNamespace (`kubectl sudo` finds the group in its status,
 * even where not everyone may read LNamespaces); impersonate the sudoers group; and, when a Group
 * is among them, the stand-in user its members act as (a member's own name is not known to RBAC).
 */
export function sudoRules(lns: { name: string; uid: string }, sudoers: readonly RbacSubject[]): Record<string, unknown>[] {
  const rules: Record<string, unknown>[] = [
    { apiGroups: ['furnish.dev'], resources: ['lnamespaces'], resourceNames: [lns.name], verbs: ['get'] },
    { apiGroups: [''], resources: ['groups'], resourceNames: [sudoersGroup(lns)], verbs: ['impersonate'] },
  ];
  if (sudoers.some((s) => s.kind === 'Group')) rules.push({ apiGroups: [''], resources: ['users'], resourceNames: [sudoStandIn(lns)], verbs: ['impersonate'] });
  return rules;
}

/**
 * A ServiceAccount sudoer impersonates itself as `system:serviceaccount:<ns>:<name>`, which the API
 * server authorizes as `impersonate` on that ServiceAccount in its own namespace: a Role and
 * RoleBinding there, held by this LNamespace alone (no other ServiceAccount may be impersonated).
 */
function serviceAccountSelfImpersonation(lns: LNamespace, sa: RbacSubject): KubeObject[] {
  const name = serviceAccountSelfName(lns.metadata.name!, sa.name);
  return [
    held(lns, 'Role', name, sa.namespace, { rules: [{ apiGroups: [''], resources: ['serviceaccounts'], resourceNames: [sa.name], verbs: ['impersonate'] }] }),
    held(lns, 'RoleBinding', name, sa.namespace, { roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name }, subjects: [sa] }),
  ];
}

/**
 * This LNamespace's share of the per-user self-impersonation objects: the same rules and subjects
 * every holder applies, plus its own ownerReference and holder label (field manager per holder).
 */
export function sharedObjects(lns: LNamespace): KubeObject[] {
  const lnsName = lns.metadata.name!;
  return sudoUsers(lns).flatMap((user) => {
    const name = selfImpersonationName(user);
    const metadata = { name, labels: { [holderLabel(lnsName)]: 'true', [LNS_KEY.selfImpersonation]: 'true', [LNS_KEY.managedBy]: 'furnish' }, annotations: { [LNS_KEY.user]: user }, ownerReferences: [ownerRef(lns, false)] };
    return [
      { apiVersion: RBAC_API_VERSION, kind: 'ClusterRole', metadata, rules: [{ apiGroups: [''], resources: ['users'], resourceNames: [user], verbs: ['impersonate'] }] },
      { apiVersion: RBAC_API_VERSION, kind: 'ClusterRoleBinding', metadata, roleRef: roleRef(name), subjects: [{ apiGroup: RBAC_GROUP, kind: 'User', name: user }] },
    ];
  });
}

/** Billing fields: the organization's map, overridden field by field by the LNamespace's own. */
export function effectiveBilling(organization: Record<string, unknown> | undefined, own: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const source of [organization ?? {}, own ?? {}]) {
    for (const [k, v] of Object.entries(source)) if (typeof v === 'string') out[k] = v;
  }
  return out;
}

/** A billing field name that fits an annotation key `furnish.dev/billing.<field>`; else why not. */
export function billingFieldError(field: string): string | undefined {
  const errors = qualifiedNameErrors(`billing.${field}`);
  return errors.length === 0 ? undefined : errors.join('; ');
}

/** Billing fields as the namespace's annotations `furnish.dev/billing.<field>` (fields that cannot be keys left out). */
export function billingAnnotations(billing: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(billing)) if (typeof v === 'string' && billingFieldError(k) === undefined) out[`${LNS_KEY.billingPrefix}${k}`] = v;
  return out;
}

/**
 * The namespace as the reconciler applies it: owned by the LNamespace, its creator named through
 * the trusted-creator annotation, its organization from the LNamespace's label (else admission's
 * default-organization rule decides), billing fields as annotations.
 */
export function namespaceObject(lns: LNamespace, billing: Record<string, string>): KubeObject {
  const name = lns.metadata.name!;
  const annotations: Record<string, string> = {};
  const creator = lns.metadata.annotations?.[KEY.creator];
  if (creator) annotations[LNS_KEY.requester] = creator;
  Object.assign(annotations, billingAnnotations(billing));
  const organization = lns.metadata.labels?.[KEY.organization];
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      ...(organization ? { labels: { [KEY.organization]: organization } } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      ownerReferences: [ownerRef(lns, true)],
    },
  };
}
