import { describe, it, expect } from '@jest/globals';
import { KEY } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { observedHash, withObservedHash } from '../../../shared/reconcile/observed.ts';
import { desiredState, needsApply, parentInventory, parentNeedsWrite, parentObject, planNamespace, planWrites, toObserve, type DesiredState } from '../../../shared/reconcile/plan.ts';

function namespace(name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, uid: `uid-${name}`, labels: { [KEY.metadataName]: name, ...labels }, annotations: { [KEY.creator]: 'alice', ...annotations } } };
}

function template(name: string, objects: KubeObject[], spec: Partial<NamespaceTemplate['spec']> = {}, annotations: Record<string, string> = {}): NamespaceTemplate {
  return { apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name, generation: 1, annotations }, spec: { namespaces: { labelSelector: {} }, templates: objects, deletionPolicy: 'Delete', mode: 'Enforce', ...spec } };
}

const configMap = (name: string, data: Record<string, string> = { owner: '$(CREATOR)' }): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const roleBinding: KubeObject = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name: 'creator-admin' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: '$(CREATOR)' }],
};

/** What the API server would hold after applying the desired objects (plus server-side extras), with the hash of its dry-run answer. */
function liveFrom(desired: DesiredState, normalise: (o: KubeObject) => KubeObject = (o) => o): KubeObject[] {
  return desired.objects.map((d) => {
    const served = normalise({ ...d.object, metadata: { ...d.object.metadata, uid: 'x', resourceVersion: '7', managedFields: [] } });
    return withObservedHash(served, observedHash(d.object, served));
  });
}

function converged(ns: KubeObject, templates: NamespaceTemplate[]) {
  const desired = desiredState(ns, templates);
  const written = parentObject(ns.metadata.name!, { groupKinds: desired.groupKinds, inventory: desired.objects.map((o) => o.key), applied: desired.matched, failed: [] });
  const parent = { ...written, metadata: { ...written.metadata, resourceVersion: '3' } };
  return { desired, observed: liveFrom(desired), parent };
}

describe('desiredState', () => {
  it('renders the matched templates with tokens replaced and records hash and deletion policy', () => {
    const d = desiredState(namespace('team-a'), [template('base', [configMap('owner'), roleBinding], { deletionPolicy: 'Orphan' })]);
    expect(d.matched).toEqual(['base']);
    expect(d.groupKinds).toEqual(['ConfigMap', 'RoleBinding.rbac.authorization.k8s.io']);
    const cm = d.objects.find((o) => o.object.kind === 'ConfigMap')!;
    expect(cm.object.data).toEqual({ owner: 'alice' });
    expect(cm.object.metadata.namespace).toBe('team-a');
    expect(cm.object.metadata.labels?.[KEY.template]).toBe('base');
    expect(cm.object.metadata.annotations?.[KEY.appliedHash]).toBe(cm.hash);
    expect(cm.object.metadata.annotations?.[KEY.deletionPolicy]).toBe('Orphan');
  });

  it('leaves system namespaces and namespaces being deleted alone', () => {
    expect(desiredState(namespace('kube-system'), [template('base', [configMap('a')])]).skip).toBe('system namespace');
    expect(desiredState(namespace('extra'), [template('base', [configMap('a')])], { systemNamespaces: ['extra'] }).skip).toBe('system namespace');
    const dying = namespace('team-a');
    dying.metadata.deletionTimestamp = '2025-01-01T00:00:00Z';
    expect(desiredState(dying, [template('base', [configMap('a')])]).skip).toBe('namespace is being deleted');
  });

  it('opt-out and apply: disable desire nothing', () => {
    expect(desiredState(namespace('team-a', {}, { [KEY.optOut]: 'true' }), [template('base', [configMap('a')])]).objects).toEqual([]);
    expect(desiredState(namespace('team-a'), [template('base', [configMap('a')], {}, { [KEY.apply]: 'disable' })]).objects).toEqual([]);
  });

  it('a template being deleted no longer counts', () => {
    const t = template('base', [configMap('a')]);
    t.metadata.deletionTimestamp = '2025-01-01T00:00:00Z';
    expect(desiredState(namespace('team-a'), [t]).matched).toEqual([]);
  });

  it('require-permission templates need the creator to be granted', () => {
    const t = template('gated', [configMap('a')], {}, { [KEY.requirePermission]: 'true' });
    expect(desiredState(namespace('team-a'), [t], { granted: () => false }).matched).toEqual([]);
    expect(desiredState(namespace('team-a'), [t], { granted: (n) => n === 'gated' }).matched).toEqual(['gated']);
  });
});

describe('planNamespace', () => {
  it('a new namespace: parent first, every object applied, phase set', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'pending' });
    const templates = [template('base', [configMap('owner'), roleBinding])];
    const desired = desiredState(ns, templates);
    const plan = planNamespace({ namespace: ns, desired, observed: [], parent: null, templates });
    expect(plan.parentBefore?.metadata.annotations?.[KEY.applySetGroupKinds]).toBe('ConfigMap,RoleBinding.rbac.authorization.k8s.io');
    expect(plan.apply.map((a) => a.key).sort()).toEqual(['/ConfigMap/team-a/owner', 'rbac.authorization.k8s.io/RoleBinding/team-a/creator-admin']);
    expect(plan.setReady).toBe(true);
    expect(toObserve(null, desired)).toEqual({ by: 'inventory', keys: ['/ConfigMap/team-a/owner', 'rbac.authorization.k8s.io/RoleBinding/team-a/creator-admin'] });
    expect(parentInventory(plan.parentBefore)).toEqual(['/ConfigMap/team-a/owner', 'rbac.authorization.k8s.io/RoleBinding/team-a/creator-admin']);
  });

  it('a converged namespace plans zero writes (a no-op resync writes nothing)', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const templates = [template('base', [configMap('owner'), roleBinding])];
    const { desired, observed, parent } = converged(ns, templates);
    const plan = planNamespace({ namespace: ns, desired, observed, parent, templates });
    expect(planWrites(plan)).toBe(0);
    expect(plan.keep).toHaveLength(2);
    expect(parentNeedsWrite(parent, parentObject('team-a', { groupKinds: desired.groupKinds, inventory: desired.objects.map((o) => o.key), applied: desired.matched, failed: [] }))).toBe(false);
  });

  it('server-added fields are not drift; a changed field of ours is', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const templates = [template('base', [configMap('owner')])];
    const { desired, observed } = converged(ns, templates);
    const want = desired.objects[0]!;
    expect(needsApply(want, { ...observed[0]!, data: { owner: 'alice', extra: 'from someone else' } })).toBe(false);
    expect(needsApply(want, { ...observed[0]!, data: { owner: 'mallory' } })).toBe(true);
    expect(needsApply(want, undefined)).toBe(true);
  });

  it('what the server made of the template (quantities normalised, empty lists dropped) is not drift; an edit of it is', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const quota: KubeObject = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { 'requests.cpu': '1000m', 'requests.memory': '1024Mi', 'limits.cpu': '0.5' }, scopes: [] } };
    const desired = desiredState(ns, [template('base', [quota])]);
    const normalise = (o: KubeObject): KubeObject => ({ ...o, spec: { hard: { 'requests.cpu': '1', 'requests.memory': '1Gi', 'limits.cpu': '500m' } }, status: { used: { 'requests.cpu': '0' } } });
    const [live] = liveFrom(desired, normalise);
    const want = desired.objects[0]!;
    expect(needsApply(want, live)).toBe(false);
    expect(needsApply(want, { ...live!, status: { used: { 'requests.cpu': '250m' } } })).toBe(false);
    expect(needsApply(want, { ...live!, spec: { hard: { 'requests.cpu': '2', 'requests.memory': '1Gi', 'limits.cpu': '500m' } } })).toBe(true);
    expect(needsApply(want, { ...live!, metadata: { ...live!.metadata, labels: { ...live!.metadata.labels, [KEY.template]: 'other' } } })).toBe(true);
    // An object applied before the hash was recorded is applied once more, to record it.
    const { [KEY.observedHash]: _gone, ...older } = live!.metadata.annotations!;
    expect(needsApply(want, { ...live!, metadata: { ...live!.metadata, annotations: older } })).toBe(true);
  });

  it('a template edit re-applies only the object whose content changed', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const before = [template('base', [configMap('owner'), roleBinding])];
    const { observed, parent } = converged(ns, before);
    const after = [template('base', [configMap('owner', { owner: '$(CREATOR)', tier: 'gold' }), roleBinding])];
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, after), observed, parent, templates: after });
    expect(plan.apply.map((a) => a.key)).toEqual(['/ConfigMap/team-a/owner']);
    expect(planWrites(plan)).toBe(1);
  });

  it('an object removed from a template is pruned under Delete and released under Orphan', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const { observed, parent } = converged(ns, [template('base', [configMap('owner'), roleBinding])]);
    const deleting = [template('base', [configMap('owner')], { deletionPolicy: 'Delete' })];
    const p1 = planNamespace({ namespace: ns, desired: desiredState(ns, deleting), observed, parent, templates: deleting });
    expect(p1.prune.map((r) => r.key)).toEqual(['rbac.authorization.k8s.io/RoleBinding/team-a/creator-admin']);
    const orphaning = [template('base', [configMap('owner')], { deletionPolicy: 'Orphan' })];
    const p2 = planNamespace({ namespace: ns, desired: desiredState(ns, orphaning), observed, parent, templates: orphaning });
    expect(p2.prune).toEqual([]);
    expect(p2.orphan.map((r) => r.name)).toEqual(['creator-admin']);
  });

  it('an object someone took our label off is theirs: never pruned', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const { observed, parent } = converged(ns, [template('base', [configMap('owner')])]);
    const unlabelled = observed.map((o) => ({ ...o, metadata: { ...o.metadata, labels: {} } }));
    expect(planNamespace({ namespace: ns, desired: desiredState(ns, []), observed: unlabelled, parent, templates: [] }).prune).toEqual([]);
  });

  it('objects of a deleted template follow the policy recorded on them', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const { observed, parent } = converged(ns, [template('keep', [configMap('kept')], { deletionPolicy: 'Orphan' }), template('drop', [configMap('dropped')])]);
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, []), observed, parent, templates: [] });
    expect(plan.orphan.map((r) => r.name)).toEqual(['kept']);
    expect(plan.prune.map((r) => r.name)).toEqual(['dropped']);
  });

  it('relabelling a namespace out of a selector prunes that template only', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready', tier: 'gold' });
    const templates = [template('all', [configMap('everyone')]), template('gold', [configMap('gold-only')], { namespaces: { labelSelector: { matchLabels: { tier: 'gold' } } } })];
    const { observed, parent } = converged(ns, templates);
    const relabelled = namespace('team-a', { [KEY.phase]: 'ready', tier: 'silver' });
    const plan = planNamespace({ namespace: relabelled, desired: desiredState(relabelled, templates), observed, parent, templates });
    expect(plan.prune.map((r) => r.name)).toEqual(['gold-only']);
    expect(plan.apply).toEqual([]);
  });

  it('CreateOnly creates what is absent and never modifies what exists', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const templates = [template('once', [configMap('seed')], { mode: 'CreateOnly' })];
    const fresh = planNamespace({ namespace: ns, desired: desiredState(ns, templates), observed: [], parent: null, templates });
    expect(fresh.create.map((c) => c.key)).toEqual(['/ConfigMap/team-a/seed']);
    const { observed, parent } = converged(ns, templates);
    const edited = [template('once', [configMap('seed', { changed: 'yes' })], { mode: 'CreateOnly' })];
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, edited), observed: observed.map((o) => ({ ...o, data: { user: 'edited' } })), parent, templates: edited });
    expect(planWrites(plan)).toBe(0);
  });

  it('never prunes the objects of a template that failed to render here', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const { observed, parent } = converged(ns, [template('base', [configMap('owner')])]);
    const broken = [template('base', [configMap('$(NAMESPACE)-x'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'other' } }])];
    const desired = desiredState(ns, broken);
    expect(desired.problems.length).toBeGreaterThan(0);
    const plan = planNamespace({ namespace: ns, desired, observed, parent, templates: broken });
    expect(plan.prune).toEqual([]);
  });

  it('the parent grows before objects are applied and ignores itself as an observed object', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const { observed, parent } = converged(ns, [template('base', [configMap('owner')])]);
    const grown = [template('base', [configMap('owner'), roleBinding])];
    const desired = desiredState(ns, grown);
    expect(toObserve(parent, desired)).toEqual({ by: 'inventory', keys: ['/ConfigMap/team-a/owner', 'rbac.authorization.k8s.io/RoleBinding/team-a/creator-admin'] });
    const foreign = { ...parent, metadata: { ...parent.metadata, annotations: { [KEY.applySetGroupKinds]: 'ConfigMap' } } };
    expect(toObserve(foreign, desired)).toEqual({ by: 'kinds', groupKinds: ['ConfigMap', 'RoleBinding.rbac.authorization.k8s.io'] });
    const plan = planNamespace({ namespace: ns, desired, observed: [...observed, parent], parent, templates: grown });
    expect(plan.parentBefore?.metadata.annotations?.[KEY.applySetGroupKinds]).toBe('ConfigMap,RoleBinding.rbac.authorization.k8s.io');
    expect(plan.prune).toEqual([]);
  });

  it('the parent records applied and failed templates; clearing a failure is a write', () => {
    const ok = parentObject('team-a', { groupKinds: ['ConfigMap'], inventory: [], applied: ['a', 'b'], failed: [] });
    const failed = parentObject('team-a', { groupKinds: ['ConfigMap'], inventory: [], applied: ['a'], failed: ['b'] });
    expect(failed.metadata.annotations?.[KEY.appliedTemplates]).toBe('a');
    expect(failed.metadata.annotations?.[KEY.failedTemplates]).toBe('b');
    expect(parentNeedsWrite(failed, ok)).toBe(true);
    expect(parentNeedsWrite(ok, ok)).toBe(false);
    expect(parentNeedsWrite(null, ok)).toBe(true);
  });
});
