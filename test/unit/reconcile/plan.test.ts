// The namespace planner (plan.ts), on objects as the API server holds them: each live object is
// what kube-sim's server-side apply leaves (memory-api.ts serverApply), managedFields included, so
// drift is judged as on a real server (drift.ts): a field someone else took is re-applied, a value
// the server only normalised is not.
import { describe, it, expect } from '@jest/globals';
import { KEY, LEGACY_KEY } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { afterWrites, desiredState, expectedTemplates, needsApply, parentKindsAfter, parentNeedsWrite, parentObject, planNamespace, templatesOutdated, withoutLegacyKeys, type DesiredState, type NamespacePlan, type PlanInput, type WriteResults } from '../../../shared/reconcile/plan.ts';

/** The writes a plan makes: a resync of a converged namespace plans none. */
const planWrites = (plan: NamespacePlan): number => (plan.parentBefore ? 1 : 0) + plan.apply.length + plan.create.length + plan.prune.length + plan.orphan.length + (plan.setReady ? 1 : 0);
import { serverApply, serverUpdate } from './memory-api.ts';

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

const at = (o: KubeObject, resourceVersion: string): KubeObject => ({ ...o, metadata: { ...o.metadata, resourceVersion } });

/** What the API server holds after Furnish applied the desired objects (at revision 7). */
function liveFrom(desired: DesiredState): KubeObject[] {
  return desired.objects.map((d) => at(serverApply(undefined, d.object), '7'));
}

/** `who` changes `live` by an update or patch (kubectl edit, label, a controller). */
const editedBy = (who: string, live: KubeObject, change: (o: KubeObject) => KubeObject, subresource?: string): KubeObject => serverUpdate(live, change(live), { manager: who, subresource });

/** A namespace as Furnish leaves it: the objects applied, and the parent naming them (at revision 3). */
function converged(ns: KubeObject, templates: NamespaceTemplate[]) {
  const desired = desiredState(ns, templates);
  const parent = at(parentObject(ns.metadata.name!, { groupKinds: desired.groupKinds, applied: desired.matched, failed: [] }), '3');
  return { desired, observed: liveFrom(desired), parent };
}

const noResults: WriteResults = { applied: new Set(), created: new Set(), released: new Set(), failures: [] };

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
  it('a new namespace: parent first (naming every kind), every object applied, phase set', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'pending' });
    const templates = [template('base', [configMap('owner'), roleBinding])];
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, templates), observed: [], parent: null, templates });
    expect(plan.parentBefore?.metadata.annotations?.[KEY.applySetGroupKinds]).toBe('ConfigMap,RoleBinding.rbac.authorization.k8s.io');
    expect(plan.apply.map((a) => a.key).sort()).toEqual(['/ConfigMap/team-a/owner', 'rbac.authorization.k8s.io/RoleBinding/team-a/creator-admin']);
    expect(plan.setReady).toBe(true);
    expect(planWrites(plan)).toBe(4);
  });

  it('a resync of a converged namespace plans zero writes', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const templates = [template('base', [configMap('owner'), roleBinding])];
    const { desired, observed, parent } = converged(ns, templates);
    const plan = planNamespace({ namespace: ns, desired, observed, parent, templates });
    expect(planWrites(plan)).toBe(0);
    expect(plan.keep.sort()).toEqual(['/ConfigMap/team-a/owner', 'rbac.authorization.k8s.io/RoleBinding/team-a/creator-admin']);
    expect(parentNeedsWrite(parent, parentObject('team-a', { groupKinds: desired.groupKinds, applied: desired.matched, failed: [] }))).toBe(false);
  });

  it('an object someone edited (a field of Furnish\'s taken by another manager) is applied again; a field they added beside ours is no drift', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const templates = [template('base', [configMap('owner'), roleBinding])];
    const { desired, observed, parent } = converged(ns, templates);
    const [cm, rb] = observed as [KubeObject, KubeObject];
    const edited = editedBy('kubectl-edit', cm, (o) => ({ ...o, data: { owner: 'mallory' } }));
    const added = editedBy('kubectl-edit', cm, (o) => ({ ...o, data: { owner: 'alice', extra: 'theirs' } }));
    expect(planNamespace({ namespace: ns, desired, observed: [edited, rb], parent, templates }).apply.map((a) => a.key)).toEqual(['/ConfigMap/team-a/owner']);
    expect(planWrites(planNamespace({ namespace: ns, desired, observed: [added, rb], parent, templates }))).toBe(0);
    // A subject added to the binding: subjects are atomic, so the whole list is theirs now.
    const widened = editedBy('kubectl-patch', rb, (o) => ({ ...o, subjects: [...(o.subjects as object[]), { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }] }));
    expect(planNamespace({ namespace: ns, desired, observed: [cm, widened], parent, templates }).apply.map((a) => a.key)).toEqual(['rbac.authorization.k8s.io/RoleBinding/team-a/creator-admin']);
  });

  it('needsApply: absent, another version of the template, or a field no longer Furnish\'s', () => {
    const ns = namespace('team-a');
    const { desired, observed } = converged(ns, [template('base', [configMap('owner')])]);
    const want = desired.objects[0]!;
    const live = observed[0]!;
    expect(needsApply(want, live)).toBe(false);
    expect(needsApply(want, undefined)).toBe(true);
    expect(needsApply(want, { ...live, metadata: { ...live.metadata, annotations: { ...live.metadata.annotations, [KEY.appliedHash]: 'older' } } })).toBe(true);
    // Our own label removed by kubectl label: the membership mark is gone from our entry.
    expect(needsApply(want, editedBy('kubectl-label', live, (o) => ({ ...o, metadata: { ...o.metadata, labels: { [KEY.applySetPartOf]: o.metadata.labels![KEY.applySetPartOf]! } } })))).toBe(true);
    // Another manager applying the same value shares the field: still ours.
    expect(needsApply(want, serverApply(live, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: 'team-a' }, data: { owner: 'alice' } }, { manager: 'other-tool' }, false))).toBe(false);
    expect(needsApply(want, serverApply(live, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: 'team-a' }, data: { owner: 'eve' } }, { manager: 'other-tool' }))).toBe(true);
  });

  it('a value the server only normalised, and status a controller writes, are not drift; an edit of the spec is', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const quota: KubeObject = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { 'requests.cpu': '1000m', 'requests.memory': '1024Mi', 'limits.cpu': '0.5' }, scopes: [] } };
    const templates = [template('base', [quota])];
    const { desired, observed, parent } = converged(ns, templates);
    // The server stores quantities canonically and drops the empty list: ownership does not move.
    const stored = { ...observed[0]!, spec: { hard: { 'requests.cpu': '1', 'requests.memory': '1Gi', 'limits.cpu': '500m' } } };
    const counted = editedBy('resourcequota-controller', stored, (o) => ({ ...o, status: { used: { 'requests.cpu': '250m' } } }), 'status');
    expect(planWrites(planNamespace({ namespace: ns, desired, observed: [counted], parent, templates }))).toBe(0);
    const raised = editedBy('kubectl-edit', counted, (o) => ({ ...o, spec: { hard: { 'requests.cpu': '2', 'requests.memory': '1Gi', 'limits.cpu': '500m' } } }));
    expect(planNamespace({ namespace: ns, desired, observed: [raised], parent, templates }).apply.map((a) => a.key)).toEqual(['/ResourceQuota/team-a/q']);
  });

  it('a template edit re-applies only the object whose content changed', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const { observed, parent } = converged(ns, [template('base', [configMap('owner'), roleBinding])]);
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
    // The release takes Furnish's marks off, and the hash older versions recorded too.
    expect(p2.orphan[0]!.patch.metadata?.annotations).toMatchObject({ [KEY.appliedHash]: null, [LEGACY_KEY.observedHash]: null });
  });

  it('an object whose template label is gone is still ours (ApplySet membership, field manager): pruned; one Furnish never applied is not', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const { observed, parent } = converged(ns, [template('base', [configMap('owner')])]);
    const unlabelled = observed.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { [KEY.applySetPartOf]: o.metadata.labels![KEY.applySetPartOf]! } } }));
    expect(planNamespace({ namespace: ns, desired: desiredState(ns, []), observed: unlabelled, parent, templates: [] }).prune.map((r) => r.name)).toEqual(['owner']);
    // The same labels, written by someone else: the membership label is not Furnish's.
    const theirs = observed.map((o) => serverApply(undefined, { ...o, metadata: { name: o.metadata.name, namespace: 'team-a', labels: o.metadata.labels } }, { manager: 'kubectl-client-side-apply' }));
    expect(planNamespace({ namespace: ns, desired: desiredState(ns, []), observed: theirs, parent, templates: [] }).prune).toEqual([]);
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
    const userEdited = observed.map((o) => editedBy('kubectl-edit', o, (x) => ({ ...x, data: { user: 'edited' } })));
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, edited), observed: userEdited, parent, templates: edited });
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
    // Without the problem, the same live object is pruned: the guard is what keeps it.
    expect(planNamespace({ namespace: ns, desired: desiredState(ns, []), observed, parent, templates: [] }).prune.map((r) => r.name)).toEqual(['owner']);
  });

  it('the parent grows before objects are applied and ignores itself as an observed object', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const { observed, parent } = converged(ns, [template('base', [configMap('owner')])]);
    const grown = [template('base', [configMap('owner'), roleBinding])];
    const livePar = serverApply(undefined, { ...parent, metadata: { ...parent.metadata, namespace: 'team-a' } });
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, grown), observed: [...observed, livePar], parent, templates: grown });
    expect(plan.parentBefore?.metadata.annotations?.[KEY.applySetGroupKinds]).toBe('ConfigMap,RoleBinding.rbac.authorization.k8s.io');
    expect(plan.prune).toEqual([]);
  });

  it('the parent written before the objects names what it named and what is about to apply; a template that cannot render, as failed', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const broken = template('broken', [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'other' } }]);
    const desired = desiredState(ns, [template('base', [configMap('owner')]), broken]);
    expect(desired.matched).toEqual(['base', 'broken']);
    expect(expectedTemplates(desired, null)).toEqual({ applied: ['base'], failed: ['broken'] });
    // What the parent named stays named until the writes are done (a superset, as KEP-3659's group-kinds).
    expect(expectedTemplates(desired, { applied: ['gone'], failed: ['old'] })).toEqual({ applied: ['base', 'gone'], failed: ['broken', 'old'] });
  });

  it('the parent records applied and failed templates; clearing a failure is a write', () => {
    const ok = parentObject('team-a', { groupKinds: ['ConfigMap'], applied: ['a', 'b'], failed: [] });
    const failed = parentObject('team-a', { groupKinds: ['ConfigMap'], applied: ['a'], failed: ['b'] });
    expect(failed.metadata.annotations?.[KEY.appliedTemplates]).toBe('a');
    expect(failed.metadata.annotations?.[KEY.failedTemplates]).toBe('b');
    expect(parentNeedsWrite(failed, ok)).toBe(true);
    expect(parentNeedsWrite(ok, ok)).toBe(false);
    expect(parentNeedsWrite(null, ok)).toBe(true);
  });
});

describe('templatesOutdated: plan only from templates at least as recent as every Furnish write here', () => {
  const ns = namespace('team-a');
  const { observed, parent } = converged(ns, [template('base', [configMap('owner')])]);
  const ours = observed[0]!;
  const theirs: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'user', namespace: 'team-a', resourceVersion: '500' } };

  it('a namespace untouched since the list plans from it', () => {
    expect(templatesOutdated('100', undefined, null, [])).toBeNull();
    expect(templatesOutdated('100', undefined, at(parent, '99'), [at(ours, '100')])).toBeNull();
    expect(templatesOutdated('100', '90', at(parent, '99'), [at(ours, '100')])).toBeNull();
  });

  it('the parent or an object of Furnish\'s written after the list, or a message naming a newer change: list again, at least that recent', () => {
    expect(templatesOutdated('100', undefined, at(parent, '101'), [])).toBe('101');
    expect(templatesOutdated('100', undefined, at(parent, '99'), [at(ours, '105')])).toBe('105');
    expect(templatesOutdated('100', '120', at(parent, '101'), [at(ours, '105')])).toBe('120');
    expect(templatesOutdated('99', undefined, at(parent, '100'), [])).toBe('100');
  });

  it('someone else\'s object, or Furnish\'s parent read among the ConfigMaps, says nothing more than the parent does', () => {
    expect(templatesOutdated('100', undefined, at(parent, '99'), [theirs])).toBeNull();
    const liveParent = at(serverApply(undefined, { ...parent, metadata: { ...parent.metadata, namespace: 'team-a' } }), '300');
    expect(templatesOutdated('100', undefined, at(parent, '99'), [liveParent])).toBeNull();
  });

  it('revisions that are not etcd revisions cannot be compared: list again', () => {
    expect(templatesOutdated('abc', undefined, at(parent, '1'), [])).toBe('1');
    expect(templatesOutdated('100', 'x7', null, [])).toBeNull();
  });
});

describe('afterWrites', () => {
  const ns = namespace('team-a', { [KEY.phase]: 'pending' });
  const templates = [template('base', [configMap('owner'), roleBinding]), template('extra', [configMap('more')])];
  const applied = (desired: DesiredState, only = (_: string) => true): WriteResults => ({ ...noResults, applied: new Set(desired.objects.filter((d) => only(d.template)).map((d) => d.key)) });

  it('a first population: the parent written before the objects already says it all, and the namespace is made ready in one patch that holds no Furnish JSON', () => {
    const desired = desiredState(ns, templates);
    const input: PlanInput = { namespace: ns, desired, observed: [], parent: null, templates };
    const plan = planNamespace(input);
    const after = afterWrites(input, plan, applied(desired));
    expect(after.appliedTemplates).toEqual(['base', 'extra']);
    expect(after.parent.metadata.annotations?.[KEY.appliedTemplates]).toBe('base,extra');
    expect(plan.parentBefore?.metadata.annotations?.[KEY.appliedTemplates]).toBe('base,extra');
    expect(after.parentWrite).toBe(false);
    expect(after.namespacePatch?.metadata?.labels?.[KEY.phase]).toBe('ready');
    expect(Object.values(after.namespacePatch?.metadata?.annotations ?? {}).filter((v) => typeof v === 'string' && v.startsWith('{'))).toEqual([]);
  });

  it('a failed template is named failed on the parent, which is written again, and fails the namespace', () => {
    const desired = desiredState(ns, templates);
    const input: PlanInput = { namespace: ns, desired, observed: [], parent: null, templates };
    const plan = planNamespace(input);
    const failures = [{ template: 'extra', key: '/ConfigMap/team-a/more', hash: '', status: 422, reason: 'Invalid', message: 'no' }];
    const after = afterWrites(input, plan, { ...applied(desired, (t) => t === 'base'), failures });
    expect(after.failedTemplates).toEqual(['extra']);
    expect(after.appliedTemplates).toEqual(['base']);
    expect(after.parent.metadata.annotations?.[KEY.failedTemplates]).toBe('extra');
    expect(plan.parentBefore?.metadata.annotations?.[KEY.failedTemplates]).toBeUndefined();
    expect(after.parentWrite).toBe(true);
    expect(after.phase.phase).toBe('failed');
  });

  it('a converged namespace needs no write at all; one carrying the record earlier versions kept loses it in one namespace patch', () => {
    const ready = namespace('team-a', { [KEY.phase]: 'ready' });
    const { desired, observed, parent } = converged(ready, templates);
    const input: PlanInput = { namespace: ready, desired, observed, parent, templates };
    const after = afterWrites(input, planNamespace(input), noResults);
    expect(after.namespacePatch).toBeNull();
    expect(after.parentWrite).toBe(false);
    const upgraded = namespace('team-a', { [KEY.phase]: 'ready' }, { [LEGACY_KEY.applied]: '{"objects":{}}' });
    const legacy: PlanInput = { ...input, namespace: upgraded };
    const plan = planNamespace(legacy);
    expect(plan.apply).toEqual([]);
    expect(afterWrites(legacy, plan, noResults).namespacePatch).toEqual({ metadata: { annotations: { [LEGACY_KEY.applied]: null } } });
  });

  it('released objects leave the parent: a kind nothing of Furnish\'s is left of goes, one that could not be read stays named', () => {
    const ready = namespace('team-a', { [KEY.phase]: 'ready' });
    const { observed, parent } = converged(ready, templates);
    const fewer = [template('base', [configMap('owner')]), templates[1]!];
    const input: PlanInput = { namespace: ready, desired: desiredState(ready, fewer), observed, parent, templates: fewer };
    const plan = planNamespace(input);
    expect(plan.prune.map((r) => r.name)).toEqual(['creator-admin']);
    const done = afterWrites(input, plan, { ...noResults, released: new Set(plan.prune.map((r) => r.key)) });
    expect(done.parent.metadata.annotations?.[KEY.applySetGroupKinds]).toBe('ConfigMap');
    expect(done.parentWrite).toBe(true);
    // Not released (the delete failed): still ours, still named.
    expect(parentKindsAfter(input, noResults)).toEqual(['ConfigMap', 'RoleBinding.rbac.authorization.k8s.io']);
    // RoleBindings could not be listed: nothing is known gone, so the parent keeps naming them.
    const unread: PlanInput = { ...input, observed: observed.filter((o) => o.kind === 'ConfigMap'), unreadableKinds: ['RoleBinding.rbac.authorization.k8s.io'] };
    expect(parentKindsAfter(unread, noResults)).toEqual(['ConfigMap', 'RoleBinding.rbac.authorization.k8s.io']);
    expect(parentKindsAfter({ ...unread, unreadableKinds: [] }, noResults)).toEqual(['ConfigMap']);
  });
});

describe('withoutLegacyKeys', () => {
  it('adds the removal of the namespace\'s old record to the phase patch, and leaves a namespace without one alone', () => {
    const phase = { metadata: { labels: { [KEY.phase]: 'ready' }, annotations: { [KEY.failure]: null } } };
    const old = namespace('a', {}, { [LEGACY_KEY.applied]: '{}' });
    expect(withoutLegacyKeys(old, phase)).toEqual({ metadata: { labels: { [KEY.phase]: 'ready' }, annotations: { [KEY.failure]: null, [LEGACY_KEY.applied]: null } } });
    expect(withoutLegacyKeys(old, null)).toEqual({ metadata: { annotations: { [LEGACY_KEY.applied]: null } } });
    expect(withoutLegacyKeys(namespace('a'), phase)).toBe(phase);
    expect(withoutLegacyKeys(namespace('a'), null)).toBeNull();
  });
});

describe('which templates are dry-run first (all or nothing)', () => {
  const ns = namespace('team-a', { [KEY.phase]: 'pending' });
  const templates = [template('base', [configMap('owner'), roleBinding]), template('single', [configMap('alone')])];
  const fresh = (over: Partial<PlanInput> = {}) => planNamespace({ namespace: ns, desired: desiredState(ns, templates), observed: [], parent: null, templates, ...over });

  it('a new namespace: every write creates an object seen to be absent, so nothing is dry-run (a refusal is rolled back instead)', () => {
    const plan = fresh();
    expect(plan.apply).toHaveLength(3);
    expect(plan.dryRun).toEqual([]);
  });

  it('an update of a live object cannot be rolled back: its template is dry-run, the others are not', () => {
    const { observed, parent } = converged(ns, [templates[0]!]);
    const edited = [template('base', [configMap('owner', { owner: 'x' }), { ...roleBinding, metadata: { name: 'second' } }]), templates[1]!];
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, edited), observed, parent, templates: edited });
    expect(plan.apply.map((a) => a.key).sort()).toEqual(['/ConfigMap/team-a/alone', '/ConfigMap/team-a/owner', 'rbac.authorization.k8s.io/RoleBinding/team-a/second']);
    expect(plan.dryRun).toEqual(['base']);
  });

  it('an object of that name that is not Furnish\'s exists: the apply would take it over, so it is dry-run', () => {
    const theirs: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: 'team-a', uid: 'u' }, data: { mine: 'yes' } };
    expect(fresh({ observed: [theirs] }).dryRun).toEqual(['base']);
  });

  it('absence not known: a kind that could not be listed', () => {
    expect(fresh({ unreadableKinds: ['RoleBinding.rbac.authorization.k8s.io'] }).dryRun).toEqual(['base']);
    expect(fresh({ unreadableKinds: ['NetworkPolicy.networking.k8s.io'] }).dryRun).toEqual([]);
  });

  it('a template that failed here before is dry-run, so that retrying it every resync writes nothing while it fails', () => {
    const parent = parentObject('team-a', { groupKinds: ['ConfigMap'], applied: [], failed: ['base'] });
    expect(fresh({ parent }).dryRun).toEqual(['base']);
  });

  it('CreateOnly never changes an object that exists (a create answers 409): no dry run for it', () => {
    const once = [template('once', [configMap('seed'), configMap('other')], { mode: 'CreateOnly' })];
    const theirs: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'seed', namespace: 'team-a', uid: 'u' }, data: {} };
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, once), observed: [theirs], parent: null, templates: once });
    expect(plan.create).toHaveLength(2);
    expect(plan.dryRun).toEqual([]);
  });
});
