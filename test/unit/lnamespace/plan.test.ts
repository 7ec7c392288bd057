// The LNamespace planner on its own: what each list asks for, and exactly which writes converge
// a live state (none when it already matches).
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { lnsSettings } from '../../../shared/lnamespace/config.ts';
import { DEFAULT_LNS_SETTINGS, effectiveBilling, exclusiveObjects, holderManager, namespaceObject, selfImpersonationName, sharedObjects, subjectsOf } from '../../../shared/lnamespace/desired.ts';
import { carries, planLNamespace, recordedNamespaceUid, statusNeedsWrite, withTransitionTimes, type LnsObservation } from '../../../shared/lnamespace/plan.ts';
import { lnamespaceFingerprint } from '../../../shared/lnamespace/relay.ts';
import type { LNamespace } from '../../../shared/lnamespace/types.ts';

const shop = (spec: LNamespace['spec'], extra: Partial<LNamespace['metadata']> = {}): LNamespace => ({
  apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace',
  metadata: { name: 'shop', uid: 'uid-shop', generation: 1, annotations: { 'furnish.dev/creator': 'alice' }, ...extra },
  spec,
});
const user = (name: string) => ({ kind: 'User' as const, name });
const CAROL = selfImpersonationName('carol');
const full = shop({ users: [user('bob')], managers: [user('alice')], sudoers: [user('carol'), { kind: 'Group', name: 'ops' }] });

/** What the API server holds once every planned write landed. */
function converged(lns: LNamespace): LnsObservation {
  const ns = namespaceObject(lns, effectiveBilling(undefined, lns.spec?.billing));
  return { lns, namespace: { ...ns, metadata: { ...ns.metadata, labels: { ...ns.metadata.labels, 'kubernetes.io/metadata.name': 'shop' } } }, held: [...exclusiveObjects(lns, DEFAULT_LNS_SETTINGS), ...sharedObjects(lns)].map((o) => ({ ...o, metadata: { ...o.metadata, resourceVersion: '7' } })), shared: [] };
}

const ops = (obs: LnsObservation) => planLNamespace(obs, DEFAULT_LNS_SETTINGS).writes.map((w) => `${w.op} ${w.key}${w.op === 'apply' && w.manager ? ` as ${w.manager}` : ''}`);

describe('what each list asks for', () => {
  it('users: a RoleBinding to edit; managers: get/update/patch on this LNamespace only; sudoers: cluster-admin to the LNamespace\'s sudoers group and impersonation of that group', () => {
    const objs = exclusiveObjects(full, DEFAULT_LNS_SETTINGS);
    const by = (kind: string, name: string) => objs.find((o) => o.kind === kind && o.metadata.name === name)!;
    expect(by('RoleBinding', 'furnish:users')).toMatchObject({ metadata: { namespace: 'shop' }, roleRef: { kind: 'ClusterRole', name: 'edit' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }] });
    expect(by('ClusterRole', 'furnish:lns:shop:manager').rules).toEqual([{ apiGroups: ['furnish.dev'], resources: ['lnamespaces'], resourceNames: ['shop'], verbs: ['get', 'update', 'patch'] }]);
    expect(by('RoleBinding', 'furnish:sudoers')).toMatchObject({ roleRef: { name: 'cluster-admin' }, subjects: [{ kind: 'Group', name: 'furnish:sudoers:shop:uid-shop' }] });
    // A Group among the sudoers: its members, unknown to RBAC, act as the namespace's stand-in user.
    // kubectl sudo reads the group from the LNamespace's status: the sudoers may always read it.
    const readIt = { apiGroups: ['furnish.dev'], resources: ['lnamespaces'], resourceNames: ['shop'], verbs: ['get'] };
    expect(by('ClusterRole', 'furnish:lns:shop:sudo').rules).toEqual([
      readIt,
      { apiGroups: [''], resources: ['groups'], resourceNames: ['furnish:sudoers:shop:uid-shop'], verbs: ['impersonate'] },
      { apiGroups: [''], resources: ['users'], resourceNames: ['furnish:sudo:shop:uid-shop'], verbs: ['impersonate'] },
    ]);
    expect(exclusiveObjects(shop({ sudoers: [user('carol')] }), DEFAULT_LNS_SETTINGS).find((o) => o.kind === 'ClusterRole')!.rules).toEqual([readIt, { apiGroups: [''], resources: ['groups'], resourceNames: ['furnish:sudoers:shop:uid-shop'], verbs: ['impersonate'] }]);
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
    expect(role).toMatchObject({ kind: 'ClusterRole', metadata: { name: CAROL, labels: { 'lns.furnish.dev/shop': 'true', 'furnish.dev/self-impersonation': 'true' }, annotations: { 'furnish.dev/user': 'carol' } }, rules: [{ resources: ['users'], resourceNames: ['carol'], verbs: ['impersonate'] }] });
    expect(role!.metadata.ownerReferences).toEqual([{ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', name: 'shop', uid: 'uid-shop' }]);
    expect(binding).toMatchObject({ kind: 'ClusterRoleBinding', roleRef: { name: CAROL }, subjects: [{ kind: 'User', name: 'carol' }] });
  });

  it('every user\'s objects are named by the hash of the name, so no name can take another\'s (issue 25, finding 15)', () => {
    const hashOf = (name: string) => createHash('sha256').update(name).digest('hex');
    expect(selfImpersonationName('carol')).toBe(`furnish:self-impersonate:sha256-${hashOf('carol')}`);
    expect(selfImpersonationName('https://issuer.example.com#carol')).toMatch(/^furnish:self-impersonate:sha256-[0-9a-f]{64}$/);
    // The attack: a user named like the hashed name of another (an OIDC name here; the seed hashed to 32 digits).
    const oidc = 'https://issuer.example.com#carol';
    for (const squatter of [`sha256-${hashOf(oidc)}`, `sha256-${hashOf(oidc).slice(0, 32)}`, selfImpersonationName(oidc)]) {
      expect(selfImpersonationName(squatter)).not.toBe(selfImpersonationName(oidc));
    }
    // ... so the squatter's shared objects are not the victim's: planned under another name, each naming its own user.
    const [victimRole] = sharedObjects(shop({ sudoers: [user(oidc)] }));
    const [squatterRole] = sharedObjects(shop({ sudoers: [user(`sha256-${hashOf(oidc).slice(0, 32)}`)] }, { name: 'lab', uid: 'uid-lab' }));
    expect(squatterRole!.metadata.name).not.toBe(victimRole!.metadata.name);
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
      `apply ClusterRole//${CAROL} as ${holderManager('shop')}`, `apply ClusterRoleBinding//${CAROL} as ${holderManager('shop')}`,
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
    expect(ops({ ...obs, held, shared: lab })).toEqual([`apply ClusterRole//${CAROL} as ${holderManager('shop')}`, `apply ClusterRoleBinding//${CAROL} as ${holderManager('shop')}`]);
  });

  it('a name leaving a list removes what it alone needed: exclusive objects deleted, shared ones released or, by the last holder, deleted', () => {
    const obs = converged(full);
    const after = shop({ users: [user('bob')], managers: [user('alice')] }, { uid: 'uid-shop' });
    expect(ops({ ...obs, lns: after })).toEqual(['delete RoleBinding/shop/furnish:sudoers', 'delete ClusterRole//furnish:lns:shop:sudo', 'delete ClusterRoleBinding//furnish:lns:shop:sudo', `delete ClusterRole//${CAROL}`, `delete ClusterRoleBinding//${CAROL}`]);
    const last = planLNamespace({ ...obs, lns: after }, DEFAULT_LNS_SETTINGS).writes.find((w) => w.key === `ClusterRole//${CAROL}`)!;
    expect(last).toMatchObject({ op: 'delete', resourceVersion: '7' });

    const other = { apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', name: 'lab', uid: 'uid-lab' };
    const coHeld = obs.held.map((o) => (o.metadata.labels?.['furnish.dev/self-impersonation'] ? { ...o, metadata: { ...o.metadata, ownerReferences: [other, ...(o.metadata.ownerReferences ?? [])] } } : o));
    const release = planLNamespace({ ...obs, held: coHeld, lns: after }, DEFAULT_LNS_SETTINGS).writes.filter((w) => w.key.includes('self-impersonate'));
    expect(release).toEqual([
      { op: 'apply', key: `ClusterRole//${CAROL}`, manager: holderManager('shop'), why: 'released; still held by 1 other LNamespace(s)', object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: CAROL } } },
      { op: 'apply', key: `ClusterRoleBinding//${CAROL}`, manager: holderManager('shop'), why: 'released; still held by 1 other LNamespace(s)', object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: CAROL } } },
    ]);
  });

  it('a RoleBinding someone labelled as ours and as shared, in a namespace they administer, is deleted, not released (a release of a namespaced object would fail)', () => {
    const obs = converged(full);
    const fake: KubeObject = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'fake', namespace: 'shop', resourceVersion: '9', labels: { 'lns.furnish.dev/shop': 'true', 'furnish.dev/self-impersonation': 'true' }, ownerReferences: [{ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', name: 'lab', uid: 'uid-lab' }] } };
    expect(ops({ ...obs, held: [...obs.held, fake] })).toEqual(['delete RoleBinding/shop/fake']);
  });

  it('drift is repaired: a changed subject list is applied again', () => {
    const obs = converged(full);
    const held = obs.held.map((o) => (o.metadata.name === 'furnish:users' ? { ...o, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }] } : o));
    expect(ops({ ...obs, held })).toEqual(['apply RoleBinding/shop/furnish:users']);
  });

  it('someone else\'s namespace: nothing is granted inside it unless the LNamespace is annotated to adopt it', () => {
    const theirs: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', uid: 'uid-theirs', annotations: { 'furnish.dev/creator': 'mallory' } } };
    const inside = (w: { object: KubeObject }) => w.object.kind === 'Namespace' || w.object.metadata.namespace === 'shop';
    const conflict = planLNamespace({ lns: full, namespace: theirs, held: [], shared: [] }, DEFAULT_LNS_SETTINGS);
    expect(conflict.namespace).toBe('conflict');
    expect(conflict.writes.filter(inside)).toEqual([]);
    expect(conflict.status.conditions![0]).toMatchObject({ status: 'False', reason: 'NamespaceConflict' });
    expect(conflict.status.namespaceUID).toBeUndefined();
    const adopting = shop(full.spec, { annotations: { 'furnish.dev/creator': 'alice', 'furnish.dev/adopt-namespace': 'true' } });
    const adopt = planLNamespace({ lns: adopting, namespace: theirs, held: [], shared: [] }, DEFAULT_LNS_SETTINGS);
    expect(adopt.namespace).toBe('adopt');
    expect(adopt.writes[0]).toMatchObject({ op: 'apply', key: 'Namespace//shop', why: 'adopt namespace' });
    expect(adopt.status.namespaceUID).toBe('uid-theirs');
    const terminating = planLNamespace({ lns: full, namespace: { ...theirs, metadata: { ...theirs.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, held: [], shared: [] }, DEFAULT_LNS_SETTINGS);
    expect(terminating.namespace).toBe('terminating');
    expect(terminating.writes.filter(inside)).toEqual([]);
  });

  // Issue 25, finding 5: a sudoer (cluster-admin inside, which covers namespaces/<ns>) removes the
  // namespace's ownerReferences; the manager then removes the sudoer. The seed planned nothing in
  // the conflict state it saw, so the impersonation grant stayed.
  const detached = (obs: LnsObservation): KubeObject => ({ ...obs.namespace!, metadata: { ...obs.namespace!.metadata, uid: 'uid-ns-shop', ownerReferences: [] } });

  it('a removed sudoer loses sudo even while the namespace looks like someone else\'s: revocations apply in every state', () => {
    const obs = converged(full);
    const lostOwnership = { ...obs, namespace: detached(obs), lns: shop({ users: [user('bob')], managers: [user('alice')], sudoers: [] }) };
    const plan = planLNamespace(lostOwnership, DEFAULT_LNS_SETTINGS);
    expect(plan.namespace).toBe('conflict');
    expect(plan.writes.map((w) => `${w.op} ${w.key}`)).toEqual(expect.arrayContaining(['delete ClusterRole//furnish:lns:shop:sudo', 'delete ClusterRoleBinding//furnish:lns:shop:sudo', `delete ClusterRole//${CAROL}`, `delete ClusterRoleBinding//${CAROL}`]));
    // Nothing stays granted inside a namespace that is not ours: its RoleBindings go too, and it is not taken back.
    expect(plan.writes.filter((w) => w.object.metadata.namespace === 'shop').map((w) => `${w.op} ${w.key}`)).toEqual(['delete RoleBinding/shop/furnish:users', 'delete RoleBinding/shop/furnish:sudoers']);
    expect(plan.writes.some((w) => w.object.kind === 'Namespace')).toBe(false);
    // One sudoer of two removed: the binding of the sudo role is applied again without her, also in conflict.
    const oneLeft = planLNamespace({ ...obs, namespace: detached(obs), lns: shop({ ...full.spec, sudoers: [{ kind: 'Group', name: 'ops' }] }) }, DEFAULT_LNS_SETTINGS);
    expect(oneLeft.writes.find((w) => w.key === 'ClusterRoleBinding//furnish:lns:shop:sudo')).toMatchObject({ op: 'apply', object: { subjects: [{ kind: 'Group', name: 'ops' }] } });
  });

  it('the namespace it created stays its own when a sudoer removes the ownerReferences: known by the uid in its status, the reference put back', () => {
    const obs = converged(full);
    const recorded = { ...full, status: { namespaceUID: 'uid-ns-shop' } };
    const plan = planLNamespace({ ...obs, lns: recorded, namespace: detached(obs) }, DEFAULT_LNS_SETTINGS);
    expect(plan.namespace).toBe('owned');
    expect(plan.writes.map((w) => `${w.op} ${w.key} (${w.why})`)).toEqual(['apply Namespace//shop (namespace drifted)']);
    expect(plan.writes[0]!.object.metadata.ownerReferences).toEqual([{ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', name: 'shop', uid: 'uid-shop', controller: true }]);
    expect(plan.status).toMatchObject({ namespaceUID: 'uid-ns-shop', conditions: [{ status: 'True' }] });
    // Another namespace of the same name (the first deleted, this one made by someone else): not ours.
    const other = { ...detached(obs), metadata: { ...detached(obs).metadata, uid: 'uid-someone-elses' } };
    expect(planLNamespace({ ...obs, lns: recorded, namespace: other }, DEFAULT_LNS_SETTINGS)).toMatchObject({ namespace: 'conflict', status: { namespaceUID: 'uid-ns-shop' } });
  });

  it('a namespace someone else made, naming this LNamespace as its owner, is not taken for its own once a uid is recorded', () => {
    const obs = converged(full);
    const forged = { ...obs.namespace!, metadata: { ...obs.namespace!.metadata, uid: 'uid-mallorys' } };
    const plan = planLNamespace({ ...obs, lns: { ...full, status: { namespaceUID: 'uid-ns-shop' } }, namespace: forged }, DEFAULT_LNS_SETTINGS);
    expect(plan.namespace).toBe('conflict');
    expect(plan.writes.filter((w) => w.object.kind === 'Namespace' || w.object.metadata.namespace === 'shop').map((w) => `${w.op} ${w.key}`)).toEqual(['delete RoleBinding/shop/furnish:users', 'delete RoleBinding/shop/furnish:sudoers']);
    // Before any uid is recorded (reconciled by an older Furnish), the ownerReference still counts, and the uid is recorded.
    expect(planLNamespace({ ...obs, namespace: forged }, DEFAULT_LNS_SETTINGS)).toMatchObject({ namespace: 'owned', status: { namespaceUID: 'uid-mallorys' } });
  });

  it('the namespace uid recorded: the live one once ours, else the one recorded before, else none', () => {
    const ns = (uid: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', uid } });
    expect(recordedNamespaceUid(full, ns('a'), 'owned')).toEqual({ namespaceUID: 'a' });
    expect(recordedNamespaceUid(full, ns('a'), 'adopt')).toEqual({ namespaceUID: 'a' });
    expect(recordedNamespaceUid({ ...full, status: { namespaceUID: 'b' } }, ns('a'), 'conflict')).toEqual({ namespaceUID: 'b' });
    expect(recordedNamespaceUid(full, null, 'create')).toEqual({});
  });

  // Issue 25, finding 4: the seed's group `<name>-sudoers` is a name anyone can reach by choosing
  // the LNamespace's name, and that an existing binding may already mean.
  it('the sudoers group is Furnish\'s and the LNamespace\'s own: no name reaches an existing group or another LNamespace\'s, and a recreated one inherits nothing', () => {
    const ops = (uid: string) => shop({ sudoers: [user('mallory')] }, { name: 'ops', uid });
    const groupOf = (lns: LNamespace) => (exclusiveObjects(lns, DEFAULT_LNS_SETTINGS).find((o) => o.kind === 'RoleBinding')!.subjects as Array<{ name: string }>)[0]!.name;
    const impersonable = (lns: LNamespace) => (exclusiveObjects(lns, DEFAULT_LNS_SETTINGS).find((o) => o.kind === 'ClusterRole')!.rules as Array<{ resources: string[]; resourceNames: string[] }>).filter((r) => r.resources[0] === 'groups').flatMap((r) => r.resourceNames);
    expect(groupOf(ops('uid-1'))).toBe('furnish:sudoers:ops:uid-1');
    expect(impersonable(ops('uid-1'))).toEqual(['furnish:sudoers:ops:uid-1']);
    expect(impersonable(ops('uid-1'))).not.toContain('ops-sudoers');
    expect(groupOf(ops('uid-2'))).not.toBe(groupOf(ops('uid-1')));
    // A name chosen to look like another's group reaches only its own.
    expect(groupOf(shop({ sudoers: [user('mallory')] }, { name: 'ops-sudoers', uid: 'uid-3' }))).toBe('furnish:sudoers:ops-sudoers:uid-3');
    // The status says which group and stand-in kubectl sudo asks for.
    expect(planLNamespace({ lns: ops('uid-1'), namespace: null, held: [], shared: [] }, DEFAULT_LNS_SETTINGS).status.sudo).toEqual({ group: 'furnish:sudoers:ops:uid-1', standIn: 'furnish:sudo:ops:uid-1' });
  });

  it('upgrade: the seed\'s <name>-sudoers binding and impersonation rule are replaced at the next reconcile', () => {
    const obs = converged(full);
    const seed = obs.held.map((o) => {
      if (o.kind === 'RoleBinding' && o.metadata.name === 'furnish:sudoers') return { ...o, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'shop-sudoers' }] };
      if (o.kind === 'ClusterRole' && o.metadata.name === 'furnish:lns:shop:sudo') return { ...o, rules: [{ apiGroups: [''], resources: ['groups'], resourceNames: ['shop-sudoers'], verbs: ['impersonate'] }, { apiGroups: [''], resources: ['users'], resourceNames: ['furnish:sudo:shop'], verbs: ['impersonate'] }] };
      return o;
    });
    const plan = planLNamespace({ ...obs, held: seed }, DEFAULT_LNS_SETTINGS);
    expect(plan.writes.map((w) => `${w.op} ${w.key}`)).toEqual(['apply RoleBinding/shop/furnish:sudoers', 'apply ClusterRole//furnish:lns:shop:sudo']);
    expect(JSON.stringify(plan.writes.map((w) => w.object))).not.toMatch(/shop-sudoers|furnish:sudo:shop"/);
    // The seed's readable self-impersonation objects are let go (the last holder deletes them).
    const readable = sharedObjects(full).map((o) => ({ ...o, metadata: { ...o.metadata, name: 'furnish:self-impersonate:carol', resourceVersion: '3' } }));
    expect(ops({ ...obs, held: [...obs.held, ...readable] })).toEqual(['delete ClusterRole//furnish:self-impersonate:carol', 'delete ClusterRoleBinding//furnish:self-impersonate:carol']);
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
    expect(statusNeedsWrite({ ...reordered, conditions: stored.conditions, bindings: stored.bindings, billing: stored.billing, sudo: stored.sudo }, want)).toBe(false);
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
