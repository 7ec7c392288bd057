// The LNamespace planner on its own: what each list asks for, and exactly which writes converge
// a live state (none when it already matches).
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { lnsSettings } from '../../../shared/lnamespace/config.ts';
import { DEFAULT_LNS_SETTINGS, effectiveBilling, exclusiveObjects, holderManager, namespaceObject, selfImpersonationName, sharedObjects, subjectsOf } from '../../../shared/lnamespace/desired.ts';
import { carries, planLNamespace, statusNeedsWrite, withTransitionTimes, type LnsObservation } from '../../../shared/lnamespace/plan.ts';
import { lnamespaceFingerprint } from '../../../shared/lnamespace/relay.ts';
import type { LNamespace } from '../../../shared/lnamespace/types.ts';

const shop = (spec: LNamespace['spec'], extra: Partial<LNamespace['metadata']> = {}): LNamespace => ({
  apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace',
  metadata: { name: 'shop', uid: 'uid-shop', generation: 1, annotations: { 'furnish.dev/creator': 'alice' }, ...extra },
  spec,
});
const user = (name: string) => ({ kind: 'User' as const, name });
const full = shop({ users: [user('bob')], managers: [user('alice')], sudoers: [user('carol'), { kind: 'Group', name: 'ops' }] });

/** What the API server holds once every planned write landed. */
function converged(lns: LNamespace): LnsObservation {
  const ns = namespaceObject(lns, effectiveBilling(undefined, lns.spec?.billing));
  return { lns, namespace: { ...ns, metadata: { ...ns.metadata, labels: { ...ns.metadata.labels, 'kubernetes.io/metadata.name': 'shop' } } }, held: [...exclusiveObjects(lns, DEFAULT_LNS_SETTINGS), ...sharedObjects(lns)].map((o) => ({ ...o, metadata: { ...o.metadata, resourceVersion: '7' } })), shared: [] };
}

const ops = (obs: LnsObservation) => planLNamespace(obs, DEFAULT_LNS_SETTINGS).writes.map((w) => `${w.op} ${w.key}${w.op === 'apply' && w.manager ? ` as ${w.manager}` : ''}`);

describe('what each list asks for', () => {
  it('users: a RoleBinding to edit; managers: get/update/patch on this LNamespace only; sudoers: cluster-admin to <name>-sudoers and impersonation of that group', () => {
    const objs = exclusiveObjects(full, DEFAULT_LNS_SETTINGS);
    const by = (kind: string, name: string) => objs.find((o) => o.kind === kind && o.metadata.name === name)!;
    expect(by('RoleBinding', 'furnish:users')).toMatchObject({ metadata: { namespace: 'shop' }, roleRef: { kind: 'ClusterRole', name: 'edit' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }] });
    expect(by('ClusterRole', 'furnish:lns:shop:manager').rules).toEqual([{ apiGroups: ['furnish.dev'], resources: ['lnamespaces'], resourceNames: ['shop'], verbs: ['get', 'update', 'patch'] }]);
    expect(by('RoleBinding', 'furnish:sudoers')).toMatchObject({ roleRef: { name: 'cluster-admin' }, subjects: [{ kind: 'Group', name: 'shop-sudoers' }] });
    // A Group among the sudoers: its members, unknown to RBAC, act as the namespace's stand-in user.
    expect(by('ClusterRole', 'furnish:lns:shop:sudo').rules).toEqual([
      { apiGroups: [''], resources: ['groups'], resourceNames: ['shop-sudoers'], verbs: ['impersonate'] },
      { apiGroups: [''], resources: ['users'], resourceNames: ['furnish:sudo:shop'], verbs: ['impersonate'] },
    ]);
    expect(exclusiveObjects(shop({ sudoers: [user('carol')] }), DEFAULT_LNS_SETTINGS).find((o) => o.kind === 'ClusterRole')!.rules).toEqual([{ apiGroups: [''], resources: ['groups'], resourceNames: ['shop-sudoers'], verbs: ['impersonate'] }]);
    expect((by('ClusterRoleBinding', 'furnish:lns:shop:sudo').subjects as unknown[])).toHaveLength(2);
    for (const o of objs) expect(o.metadata.ownerReferences).toEqual([{ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', name: 'shop', uid: 'uid-shop', controller: true }]);
  });

  it('a ServiceAccount sudoer may impersonate itself, and no other ServiceAccount: a Role and RoleBinding in its own namespace', () => {
    const objs = exclusiveObjects(shop({ sudoers: [{ kind: 'ServiceAccount', name: 'ci', namespace: 'tools' }] }), DEFAULT_LNS_SETTINGS);
    const name = 'furnish:lns:shop:self-impersonate:ci';
    expect(objs.find((o) => o.kind === 'Role')).toMatchObject({ metadata: { name, namespace: 'tools', labels: { 'lns.furnish.dev/shop': 'true' } }, rules: [{ apiGroups: [''], resources: ['serviceaccounts'], resourceNames: ['ci'], verbs: ['impersonate'] }] });
    expect(objs.find((o) => o.kind === 'RoleBinding' && o.metadata.namespace === 'tools')).toMatchObject({ metadata: { name }, roleRef: { kind: 'Role', name }, subjects: [{ kind: 'ServiceAccount', name: 'ci', namespace: 'tools' }] });
    // Removed from the list: the planner deletes both (they carry this LNamespace's holder label).
    const held = objs.map((o) => ({ ...o, metadata: { ...o.metadata, resourceVersion: '1' } }));
    const obs = { ...converged(shop({})), held };
    expect(ops(obs).filter((w) => w.includes(':self-impersonate:ci'))).toEqual([`delete Role/tools/${name}`, `delete RoleBinding/tools/${name}`]);
  });

  it('the Group leaves the sudoers, a User stays: the sudo ClusterRole is re-applied without the stand-in', () => {
    const withGroup = converged(shop({ sudoers: [user('carol'), { kind: 'Group', name: 'ops' }] }));
    const obs = { ...withGroup, lns: shop({ sudoers: [user('carol')] }) };
    expect(ops(obs)).toEqual(['apply ClusterRole//furnish:lns:shop:sudo', 'apply ClusterRoleBinding//furnish:lns:shop:sudo']);
  });

  it('empty lists ask for nothing; the user role is configurable', () => {
    expect(exclusiveObjects(shop({}), DEFAULT_LNS_SETTINGS)).toEqual([]);
    const objs = exclusiveObjects(shop({ users: [user('bob')] }), lnsSettings({ FURNISH_LNS_USER_ROLE: 'view' }));
    expect(objs.map((o) => (o.roleRef as { name: string }).name)).toEqual(['view']);
    expect(() => lnsSettings({ FURNISH_LNS_USER_ROLE: 'a/b' })).toThrow('FURNISH_LNS_USER_ROLE: must name a ClusterRole, got "a/b"');
  });

  it('a ServiceAccount subject keeps its namespace; duplicates and malformed entries are dropped', () => {
    expect(subjectsOf([{ kind: 'ServiceAccount', name: 'ci', namespace: 'tools' }, user('bob'), user('bob'), { kind: 'ServiceAccount', name: 'nons' }, { kind: 'Robot' as 'User', name: 'x' }])).toEqual([
      { kind: 'ServiceAccount', name: 'ci', namespace: 'tools' },
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' },
    ]);
  });

  it('each sudoer user gets a shared self-impersonation role and binding, without a controller reference', () => {
    const [role, binding] = sharedObjects(full);
    expect(sharedObjects(full)).toHaveLength(2); // the group ops has no user to impersonate
    expect(role).toMatchObject({ kind: 'ClusterRole', metadata: { name: 'furnish:self-impersonate:carol', labels: { 'lns.furnish.dev/shop': 'true', 'furnish.dev/self-impersonation': 'true' }, annotations: { 'furnish.dev/user': 'carol' } }, rules: [{ resources: ['users'], resourceNames: ['carol'], verbs: ['impersonate'] }] });
    expect(role!.metadata.ownerReferences).toEqual([{ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', name: 'shop', uid: 'uid-shop' }]);
    expect(binding).toMatchObject({ kind: 'ClusterRoleBinding', roleRef: { name: 'furnish:self-impersonate:carol' }, subjects: [{ kind: 'User', name: 'carol' }] });
  });

  it('a user name that cannot be an object name (OIDC issuer URL) is named by its hash', () => {
    expect(selfImpersonationName('carol@example.com')).toBe('furnish:self-impersonate:carol@example.com');
    expect(selfImpersonationName('https://issuer.example.com#carol')).toMatch(/^furnish:self-impersonate:sha256-[0-9a-f]{32}$/);
    expect(selfImpersonationName('..')).toMatch(/sha256-/);
  });

  it('the namespace: owned by the LNamespace, creator through the trusted-creator annotation, organization and billing carried', () => {
    const lns = shop({ billing: { costCenter: '4711', 'bad key!': 'x' } }, { labels: { 'furnish.dev/organization': 'acme' } });
    expect(namespaceObject(lns, effectiveBilling({ costCenter: '1', project: 'p' }, lns.spec?.billing)).metadata).toEqual({
      name: 'shop',
      labels: { 'furnish.dev/organization': 'acme' },
      annotations: { 'furnish.dev/requester': 'alice', 'furnish.dev/billing.costCenter': '4711', 'furnish.dev/billing.project': 'p' },
      ownerReferences: [{ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', name: 'shop', uid: 'uid-shop', controller: true }],
    });
    // No organization label: admission's default-organization rule decides.
    expect(namespaceObject(shop({}), {}).metadata.labels).toBeUndefined();
  });
});

describe('planning writes', () => {
  it('a new LNamespace: the namespace first, then every object', () => {
    expect(ops({ lns: full, namespace: null, held: [], shared: [] })).toEqual([
      'apply Namespace//shop',
      'apply RoleBinding/shop/furnish:users', 'apply ClusterRole//furnish:lns:shop:manager', 'apply ClusterRoleBinding//furnish:lns:shop:manager',
      'apply RoleBinding/shop/furnish:sudoers', 'apply ClusterRole//furnish:lns:shop:sudo', 'apply ClusterRoleBinding//furnish:lns:shop:sudo',
      `apply ClusterRole//furnish:self-impersonate:carol as ${holderManager('shop')}`, `apply ClusterRoleBinding//furnish:self-impersonate:carol as ${holderManager('shop')}`,
    ]);
  });

  it('nothing changed: nothing written, also while another LNamespace co-holds the shared objects', () => {
    const obs = converged(full);
    expect(ops(obs)).toEqual([]);
    const other = { apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', name: 'lab', uid: 'uid-lab' };
    const coHeld = obs.held.map((o) => (o.metadata.labels?.['furnish.dev/self-impersonation'] ? { ...o, metadata: { ...o.metadata, ownerReferences: [other, ...(o.metadata.ownerReferences ?? [])] } } : o));
    expect(ops({ ...obs, held: coHeld })).toEqual([]);
  });

  it('a shared object another LNamespace made is joined (our reference added), not recreated', () => {
    const lab = sharedObjects({ ...full, metadata: { ...full.metadata, name: 'lab', uid: 'uid-lab' } });
    const obs = converged(full);
    const held = obs.held.filter((o) => !o.metadata.labels?.['furnish.dev/self-impersonation']);
    expect(ops({ ...obs, held, shared: lab })).toEqual([`apply ClusterRole//furnish:self-impersonate:carol as ${holderManager('shop')}`, `apply ClusterRoleBinding//furnish:self-impersonate:carol as ${holderManager('shop')}`]);
  });

  it('a name leaving a list removes what it alone needed: exclusive objects deleted, shared ones released or, by the last holder, deleted', () => {
    const obs = converged(full);
    const after = shop({ users: [user('bob')], managers: [user('alice')] }, { uid: 'uid-shop' });
    expect(ops({ ...obs, lns: after })).toEqual(['delete RoleBinding/shop/furnish:sudoers', 'delete ClusterRole//furnish:lns:shop:sudo', 'delete ClusterRoleBinding//furnish:lns:shop:sudo', 'delete ClusterRole//furnish:self-impersonate:carol', 'delete ClusterRoleBinding//furnish:self-impersonate:carol']);
    const last = planLNamespace({ ...obs, lns: after }, DEFAULT_LNS_SETTINGS).writes.find((w) => w.key === 'ClusterRole//furnish:self-impersonate:carol')!;
    expect(last).toMatchObject({ op: 'delete', resourceVersion: '7' });

    const other = { apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', name: 'lab', uid: 'uid-lab' };
    const coHeld = obs.held.map((o) => (o.metadata.labels?.['furnish.dev/self-impersonation'] ? { ...o, metadata: { ...o.metadata, ownerReferences: [other, ...(o.metadata.ownerReferences ?? [])] } } : o));
    const release = planLNamespace({ ...obs, held: coHeld, lns: after }, DEFAULT_LNS_SETTINGS).writes.filter((w) => w.key.includes('self-impersonate'));
    expect(release).toEqual([
      { op: 'apply', key: 'ClusterRole//furnish:self-impersonate:carol', manager: holderManager('shop'), why: 'released; still held by 1 other LNamespace(s)', object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'furnish:self-impersonate:carol' } } },
      { op: 'apply', key: 'ClusterRoleBinding//furnish:self-impersonate:carol', manager: holderManager('shop'), why: 'released; still held by 1 other LNamespace(s)', object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'furnish:self-impersonate:carol' } } },
    ]);
  });

  it('drift is repaired: a changed subject list is applied again', () => {
    const obs = converged(full);
    const held = obs.held.map((o) => (o.metadata.name === 'furnish:users' ? { ...o, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }] } : o));
    expect(ops({ ...obs, held })).toEqual(['apply RoleBinding/shop/furnish:users']);
  });

  it('someone else\'s namespace: nothing is granted inside it unless the LNamespace is annotated to adopt it', () => {
    const theirs: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', annotations: { 'furnish.dev/creator': 'mallory' } } };
    const conflict = planLNamespace({ lns: full, namespace: theirs, held: [], shared: [] }, DEFAULT_LNS_SETTINGS);
    expect(conflict.writes).toEqual([]);
    expect(conflict.status.conditions![0]).toMatchObject({ status: 'False', reason: 'NamespaceConflict' });
    const adopting = shop(full.spec, { annotations: { 'furnish.dev/creator': 'alice', 'furnish.dev/adopt-namespace': 'true' } });
    const adopt = planLNamespace({ lns: adopting, namespace: theirs, held: [], shared: [] }, DEFAULT_LNS_SETTINGS);
    expect(adopt.namespace).toBe('adopt');
    expect(adopt.writes[0]).toMatchObject({ op: 'apply', key: 'Namespace//shop', why: 'adopt namespace' });
    const terminating = planLNamespace({ lns: full, namespace: { ...theirs, metadata: { ...theirs.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, held: [], shared: [] }, DEFAULT_LNS_SETTINGS);
    expect(terminating).toMatchObject({ namespace: 'terminating', writes: [] });
  });

  it('billing: the organization\'s map, overridden field by field; fields that cannot be annotation keys are said in the status', () => {
    const lns = shop({ billing: { costCenter: '4711', 'no spaces': 'x' } });
    const plan = planLNamespace({ lns, namespace: null, held: [], shared: [], organizationBilling: { costCenter: '1', project: 'p', nested: { no: 1 } } }, DEFAULT_LNS_SETTINGS);
    expect(plan.status.billing).toEqual({ costCenter: '4711', project: 'p', 'no spaces': 'x' });
    expect(plan.skippedBilling).toEqual(['no spaces']);
    expect(plan.status.conditions![0]).toMatchObject({ status: 'True', reason: 'BillingFieldsSkipped' });
    expect(plan.status.bindings).toEqual({ users: 0, managers: 0, sudoers: 0 });
  });
});

describe('status and relay bookkeeping', () => {
  it('an unchanged status is not rewritten, whatever the key order or transition times', () => {
    const want = planLNamespace(converged(full), DEFAULT_LNS_SETTINGS).status;
    const stored = withTransitionTimes(undefined, want, new Date('2026-01-01T00:00:00Z'));
    const reordered = JSON.parse(JSON.stringify(stored, Object.keys(stored).sort())) as typeof stored;
    expect(statusNeedsWrite({ ...reordered, conditions: stored.conditions, bindings: stored.bindings, billing: stored.billing }, want)).toBe(false);
    expect(statusNeedsWrite(stored, { ...want, bindings: { users: 2, managers: 1, sudoers: 2 } })).toBe(true);
    expect(withTransitionTimes(stored, want, new Date('2027-01-01T00:00:00Z')).conditions![0]!.lastTransitionTime).toBe('2026-01-01T00:00:00.000Z');
  });

  it('carries: other holders\' references are no difference, a missing own reference is', () => {
    const [role] = sharedObjects(full);
    const lab = { apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', name: 'lab', uid: 'uid-lab' };
    expect(carries(role!, { ...role!, metadata: { ...role!.metadata, ownerReferences: [lab, ...role!.metadata.ownerReferences!] } })).toBe(true);
    expect(carries(role!, { ...role!, metadata: { ...role!.metadata, ownerReferences: [lab] } })).toBe(false);
  });

  it('the relay fingerprint moves with the spec and the creator, not with the status', () => {
    const fp = lnamespaceFingerprint(full);
    expect(lnamespaceFingerprint({ ...full, status: { namespace: 'shop' } })).toBe(fp);
    expect(lnamespaceFingerprint({ ...full, spec: { users: [] } })).not.toBe(fp);
    expect(lnamespaceFingerprint({ ...full, metadata: { ...full.metadata, annotations: {} } })).not.toBe(fp);
  });
});
