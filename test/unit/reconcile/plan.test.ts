import { describe, it, expect } from '@jest/globals';
import { KEY } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { applySetId } from '../../../shared/render/applyset.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { observedException, observedHash } from '../../../shared/reconcile/observed.ts';
import { afterWrites, desiredState, expectedTemplates, heldSnapshotOutdated, kindsAbsenceDecides, kindsToObserve, needsApply, parentNeedsWrite, parentObject, planNamespace, planWrites, unpopulated, type DesiredState, type HeldObjects, type PlanInput } from '../../../shared/reconcile/plan.ts';
import { EMPTY_RECORD, formatRecord, readRecord, type AppliedRecord } from '../../../shared/reconcile/record.ts';

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

/** The managedFields entry a template apply by Furnish leaves: it owns the labels (ApplySet membership: ownership.ts) and the recorded annotations. */
const furnishApply = { manager: 'furnish', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { [`f:${KEY.template}`]: {}, [`f:${KEY.applySetPartOf}`]: {} }, 'f:annotations': { [`f:${KEY.appliedHash}`]: {}, [`f:${KEY.deletionPolicy}`]: {} } } } };

/** What the API server would hold after applying the desired objects (plus server-side extras). */
function liveFrom(desired: DesiredState, normalise: (o: KubeObject) => KubeObject = (o) => o): KubeObject[] {
  return desired.objects.map((d) => normalise({ ...d.object, metadata: { ...d.object.metadata, uid: 'x', resourceVersion: '7', managedFields: [furnishApply] } }));
}

/** The record Furnish leaves after applying `live` for `desired`. */
function recordOf(desired: DesiredState, live: KubeObject[]): AppliedRecord {
  const objects: AppliedRecord['objects'] = {};
  desired.objects.forEach((d, i) => { objects[d.key] = { template: d.template, observed: d.mode === 'CreateOnly' ? '' : observedException(d.object, d.hash, observedHash(d.object, live[i]!)) }; });
  return { objects, groupKinds: desired.groupKinds, applied: desired.matched, failed: [] };
}

function converged(ns: KubeObject, templates: NamespaceTemplate[]) {
  const desired = desiredState(ns, templates);
  const written = parentObject(ns.metadata.name!, { groupKinds: desired.groupKinds, applied: desired.matched, failed: [] });
  const parent = { ...written, metadata: { ...written.metadata, resourceVersion: '3' } };
  const observed = liveFrom(desired);
  return { desired, observed, parent, record: recordOf(desired, observed) };
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
    const plan = planNamespace({ namespace: ns, desired, observed: [], parent: null, record: EMPTY_RECORD, templates });
    expect(plan.parentBefore?.metadata.annotations?.[KEY.applySetGroupKinds]).toBe('ConfigMap,RoleBinding.rbac.authorization.k8s.io');
    expect(plan.apply.map((a) => a.key).sort()).toEqual(['/ConfigMap/team-a/owner', 'rbac.authorization.k8s.io/RoleBinding/team-a/creator-admin']);
    expect(plan.setReady).toBe(true);
    expect(kindsToObserve(desired, null, null, templates)).toEqual(['ConfigMap', 'RoleBinding.rbac.authorization.k8s.io']);
  });

  it('a converged namespace plans zero writes (a no-op resync writes nothing)', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const templates = [template('base', [configMap('owner'), roleBinding])];
    const { desired, observed, parent, record } = converged(ns, templates);
    const plan = planNamespace({ namespace: ns, desired, observed, parent, record, templates });
    expect(planWrites(plan)).toBe(0);
    expect(plan.keep).toHaveLength(2);
    expect(parentNeedsWrite(parent, parentObject('team-a', { groupKinds: desired.groupKinds, applied: desired.matched, failed: [] }))).toBe(false);
  });

  it('server-added fields are not drift; a changed field of ours is', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const templates = [template('base', [configMap('owner')])];
    const { desired, observed, record } = converged(ns, templates);
    const want = desired.objects[0]!;
    const recorded = record.objects[want.key];
    expect(needsApply(want, { ...observed[0]!, data: { owner: 'alice', extra: 'from someone else' } }, recorded)).toBe(false);
    expect(needsApply(want, { ...observed[0]!, data: { owner: 'mallory' } }, recorded)).toBe(true);
    expect(needsApply(want, undefined, recorded)).toBe(true);
  });

  it('what the server made of the template (quantities normalised, empty lists dropped) is not drift; an edit of it is', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const quota: KubeObject = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { 'requests.cpu': '1000m', 'requests.memory': '1024Mi', 'limits.cpu': '0.5' }, scopes: [] } };
    const desired = desiredState(ns, [template('base', [quota])]);
    const normalise = (o: KubeObject): KubeObject => ({ ...o, spec: { hard: { 'requests.cpu': '1', 'requests.memory': '1Gi', 'limits.cpu': '500m' } }, status: { used: { 'requests.cpu': '0' } } });
    const served = liveFrom(desired, normalise);
    const live = served[0]!;
    const want = desired.objects[0]!;
    const recorded = recordOf(desired, served).objects[want.key];
    expect(needsApply(want, live, recorded)).toBe(false);
    expect(needsApply(want, { ...live, status: { used: { 'requests.cpu': '250m' } } }, recorded)).toBe(false);
    expect(needsApply(want, { ...live, spec: { hard: { 'requests.cpu': '2', 'requests.memory': '1Gi', 'limits.cpu': '500m' } } }, recorded)).toBe(true);
    expect(needsApply(want, { ...live, metadata: { ...live.metadata, labels: { ...live.metadata.labels, [KEY.template]: 'other' } } }, recorded)).toBe(true);
    // The server dropped the empty list, which no prediction says: the record keeps its answer, and
    // an object whose answer was never recorded is applied once more, to record it.
    expect(recorded?.observed).not.toBe('');
    expect(needsApply(want, live, undefined)).toBe(true);
  });

  it('quantities the server only normalises need no record: the prediction is the server\'s answer', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const quota: KubeObject = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { pods: '60', 'requests.cpu': '1000m', 'requests.memory': '1024Mi', 'limits.cpu': '0.5' } } };
    const desired = desiredState(ns, [template('base', [quota])]);
    const served = liveFrom(desired, (o) => ({ ...o, spec: { hard: { pods: '60', 'requests.cpu': '1', 'requests.memory': '1Gi', 'limits.cpu': '500m' } }, status: { used: { pods: '0' } } }));
    const want = desired.objects[0]!;
    expect(recordOf(desired, served).objects[want.key]).toEqual({ template: 'base', observed: '' });
    expect(needsApply(want, served[0]!, undefined)).toBe(false);
    expect(needsApply(want, { ...served[0]!, spec: { hard: { pods: '61', 'requests.cpu': '1', 'requests.memory': '1Gi', 'limits.cpu': '500m' } } }, undefined)).toBe(true);
  });

  it('a template edit re-applies only the object whose content changed', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const before = [template('base', [configMap('owner'), roleBinding])];
    const { observed, parent, record } = converged(ns, before);
    const after = [template('base', [configMap('owner', { owner: '$(CREATOR)', tier: 'gold' }), roleBinding])];
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, after), observed, parent, record, templates: after });
    expect(plan.apply.map((a) => a.key)).toEqual(['/ConfigMap/team-a/owner']);
    expect(planWrites(plan)).toBe(1);
  });

  it('an object removed from a template is pruned under Delete and released under Orphan', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const { observed, parent, record } = converged(ns, [template('base', [configMap('owner'), roleBinding])]);
    const deleting = [template('base', [configMap('owner')], { deletionPolicy: 'Delete' })];
    const p1 = planNamespace({ namespace: ns, desired: desiredState(ns, deleting), observed, parent, record, templates: deleting });
    expect(p1.prune.map((r) => r.key)).toEqual(['rbac.authorization.k8s.io/RoleBinding/team-a/creator-admin']);
    const orphaning = [template('base', [configMap('owner')], { deletionPolicy: 'Orphan' })];
    const p2 = planNamespace({ namespace: ns, desired: desiredState(ns, orphaning), observed, parent, record, templates: orphaning });
    expect(p2.prune).toEqual([]);
    expect(p2.orphan.map((r) => r.name)).toEqual(['creator-admin']);
  });

  it('an object whose template label is gone is still ours (ApplySet membership, field manager): pruned; one Furnish never applied is not', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const { observed, parent } = converged(ns, [template('base', [configMap('owner')])]);
    const unlabelled = observed.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { [KEY.applySetPartOf]: o.metadata.labels![KEY.applySetPartOf]! } } }));
    // No record either: ownership is read on the object, never from an annotation in the namespace.
    expect(planNamespace({ namespace: ns, desired: desiredState(ns, []), observed: unlabelled, parent, record: EMPTY_RECORD, templates: [] }).prune.map((r) => r.name)).toEqual(['owner']);
    const theirs = unlabelled.map((o) => ({ ...o, metadata: { ...o.metadata, managedFields: [{ ...furnishApply, manager: 'kubectl-client-side-apply' }] } }));
    expect(planNamespace({ namespace: ns, desired: desiredState(ns, []), observed: theirs, parent, record: EMPTY_RECORD, templates: [] }).prune).toEqual([]);
  });

  it('objects of a deleted template follow the policy recorded on them', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const { observed, parent, record } = converged(ns, [template('keep', [configMap('kept')], { deletionPolicy: 'Orphan' }), template('drop', [configMap('dropped')])]);
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, []), observed, parent, record, templates: [] });
    expect(plan.orphan.map((r) => r.name)).toEqual(['kept']);
    expect(plan.prune.map((r) => r.name)).toEqual(['dropped']);
  });

  it('relabelling a namespace out of a selector prunes that template only', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready', tier: 'gold' });
    const templates = [template('all', [configMap('everyone')]), template('gold', [configMap('gold-only')], { namespaces: { labelSelector: { matchLabels: { tier: 'gold' } } } })];
    const { observed, parent, record } = converged(ns, templates);
    const relabelled = namespace('team-a', { [KEY.phase]: 'ready', tier: 'silver' });
    const plan = planNamespace({ namespace: relabelled, desired: desiredState(relabelled, templates), observed, parent, record, templates });
    expect(plan.prune.map((r) => r.name)).toEqual(['gold-only']);
    expect(plan.apply).toEqual([]);
  });

  it('CreateOnly creates what is absent and never modifies what exists', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const templates = [template('once', [configMap('seed')], { mode: 'CreateOnly' })];
    const fresh = planNamespace({ namespace: ns, desired: desiredState(ns, templates), observed: [], parent: null, record: EMPTY_RECORD, templates });
    expect(fresh.create.map((c) => c.key)).toEqual(['/ConfigMap/team-a/seed']);
    const { observed, parent, record } = converged(ns, templates);
    const edited = [template('once', [configMap('seed', { changed: 'yes' })], { mode: 'CreateOnly' })];
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, edited), observed: observed.map((o) => ({ ...o, data: { user: 'edited' } })), parent, record, templates: edited });
    expect(planWrites(plan)).toBe(0);
  });

  it('never prunes the objects of a template that failed to render here', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const { observed, parent, record } = converged(ns, [template('base', [configMap('owner')])]);
    const broken = [template('base', [configMap('$(NAMESPACE)-x'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'other' } }])];
    const desired = desiredState(ns, broken);
    expect(desired.problems.length).toBeGreaterThan(0);
    const plan = planNamespace({ namespace: ns, desired, observed, parent, record, templates: broken });
    expect(plan.prune).toEqual([]);
  });

  it('the parent grows before objects are applied and ignores itself as an observed object', () => {
    const ns = namespace('team-a', { [KEY.phase]: 'ready' });
    const { observed, parent, record } = converged(ns, [template('base', [configMap('owner')])]);
    const grown = [template('base', [configMap('owner'), roleBinding])];
    const desired = desiredState(ns, grown);
    const foreign = { ...parent, metadata: { ...parent.metadata, annotations: { [KEY.applySetGroupKinds]: 'ConfigMap,Secret' } } };
    expect(kindsToObserve(desired, null, foreign, [template('other', [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 's' } }])])).toEqual(['ConfigMap', 'RoleBinding.rbac.authorization.k8s.io', 'Secret', 'ServiceAccount']);
    const plan = planNamespace({ namespace: ns, desired, observed: [...observed, parent], parent, record, templates: grown });
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

describe('which templates are dry-run first (all or nothing)', () => {
  const ns = namespace('team-a', { [KEY.phase]: 'pending' });
  const templates = [template('base', [configMap('owner'), roleBinding]), template('single', [configMap('alone')])];
  const fresh = (over: Partial<PlanInput> = {}) => planNamespace({ namespace: ns, desired: desiredState(ns, templates), observed: [], parent: null, record: EMPTY_RECORD, templates, ...over });

  it('a new namespace: every write creates an object seen to be absent, so nothing is dry-run (a refusal is rolled back instead)', () => {
    const plan = fresh();
    expect(plan.apply).toHaveLength(3);
    expect(plan.dryRun).toEqual([]);
  });

  it('an update of a live object cannot be rolled back: its template is dry-run, the others are not', () => {
    const { observed, parent, record } = converged(ns, [templates[0]!]);
    const edited = [template('base', [configMap('owner', { owner: 'x' }), { ...roleBinding, metadata: { name: 'second' } }]), templates[1]!];
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, edited), observed, parent, record, templates: edited });
    expect(plan.apply.map((a) => a.key).sort()).toEqual(['/ConfigMap/team-a/alone', '/ConfigMap/team-a/owner', 'rbac.authorization.k8s.io/RoleBinding/team-a/second']);
    expect(plan.dryRun).toEqual(['base']);
  });

  it('an object of that name that is not Furnish\'s exists: the apply would take it over, so it is dry-run', () => {
    const theirs: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: 'team-a', uid: 'u' }, data: { mine: 'yes' } };
    expect(fresh({ observed: [theirs] }).dryRun).toEqual(['base']);
  });

  it('absence not known: a kind that could not be listed, or objects not read at all (planned from the record)', () => {
    expect(fresh({ unreadableKinds: ['RoleBinding.rbac.authorization.k8s.io'] }).dryRun).toEqual(['base']);
    expect(fresh({ unreadableKinds: ['NetworkPolicy.networking.k8s.io'] }).dryRun).toEqual([]);
    expect(fresh({ observed: null, parent: undefined }).dryRun).toEqual(['base']);
  });

  it('a template that failed here before is dry-run, so that retrying it every resync writes nothing while it fails', () => {
    expect(fresh({ record: { ...EMPTY_RECORD, failed: ['base'] } }).dryRun).toEqual(['base']);
    const parent = parentObject('team-a', { groupKinds: ['ConfigMap'], applied: [], failed: ['base'] });
    expect(fresh({ parent }).dryRun).toEqual(['base']);
  });

  it('CreateOnly never changes an object that exists (a create answers 409): no dry run for it', () => {
    const once = [template('once', [configMap('seed'), configMap('other')], { mode: 'CreateOnly' })];
    const theirs: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'seed', namespace: 'team-a', uid: 'u' }, data: {} };
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, once), observed: [theirs], parent: null, record: EMPTY_RECORD, templates: once });
    expect(plan.create).toHaveLength(2);
    expect(plan.dryRun).toEqual([]);
  });
});

describe('planNamespace without reading the objects (a fan-out)', () => {
  const ns = namespace('team-a', { [KEY.phase]: 'ready' });
  const templates = [template('base', [configMap('owner'), roleBinding])];
  /** What a fan-out message says the namespace holds of `base`: every object at the hash `templates` render. */
  const heldAsConverged = (): HeldObjects => ({ template: 'base', hashes: Object.fromEntries(desiredState(ns, templates).objects.map((d) => [d.key, d.hash])) });

  it('a converged namespace plans nothing and reads nothing more', () => {
    const { desired, record } = converged(ns, templates);
    const plan = planNamespace({ namespace: ns, desired, observed: null, record, templates, held: heldAsConverged() });
    expect(planWrites(plan)).toBe(0);
    expect(plan.needsObservation).toBe(false);
  });

  it('a changed object is applied on the fan-out\'s word, as a single write needing no dry run', () => {
    const { record } = converged(ns, templates);
    const edited = [template('base', [configMap('owner', { owner: 'x' }), roleBinding])];
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, edited), observed: null, record, templates: edited, held: heldAsConverged() });
    expect(plan.apply.map((a) => a.key)).toEqual(['/ConfigMap/team-a/owner']);
    expect(plan.dryRun).toEqual([]);
    expect(plan.needsObservation).toBe(false);
    const both = [template('base', [configMap('owner', { owner: 'x' }), { ...roleBinding, roleRef: { ...roleBinding.roleRef as object, name: 'edit' } }])];
    expect(planNamespace({ namespace: ns, desired: desiredState(ns, both), observed: null, record, templates: both, held: heldAsConverged() }).dryRun).toEqual(['base']);
  });

  it('an object the namespace lacks (deleted, never applied) is applied, whatever the record says', () => {
    const { desired, record } = converged(ns, templates);
    const held = heldAsConverged();
    const hashes = { ...held.hashes };
    delete hashes['/ConfigMap/team-a/owner'];
    const plan = planNamespace({ namespace: ns, desired, observed: null, record, templates, held: { template: 'base', hashes } });
    expect(plan.apply.map((a) => a.key)).toEqual(['/ConfigMap/team-a/owner']);
  });

  it('objects of the other templates stand on the record, unless their template failed here', () => {
    const two = [...templates, template('extra', [configMap('more')])];
    const { desired, record } = converged(ns, two);
    const held = heldAsConverged();
    expect(planWrites(planNamespace({ namespace: ns, desired, observed: null, record, templates: two, held }))).toBe(0);
    const failedExtra = { ...record, failed: ['extra'] };
    expect(planNamespace({ namespace: ns, desired, observed: null, record: failedExtra, templates: two, held }).apply.map((a) => a.key)).toEqual(['/ConfigMap/team-a/more']);
    const { objects: { ['/ConfigMap/team-a/more']: _more, ...rest } } = record;
    expect(planNamespace({ namespace: ns, desired, observed: null, record: { ...record, objects: rest }, templates: two, held }).apply.map((a) => a.key)).toEqual(['/ConfigMap/team-a/more']);
  });

  it('an object recorded as another template\'s (one that overrode it, then dropped it) is applied again', () => {
    // b-over comes after a-base by name, so its `shared` wins; then b-over drops it and a-base's is wanted again.
    const both = [template('a-base', [configMap('shared', { v: 'a' })]), template('b-over', [configMap('shared', { v: 'b' }), configMap('other')])];
    const { record } = converged(ns, both);
    expect(record.objects['/ConfigMap/team-a/shared']?.template).toBe('b-over');
    const dropped = [both[0]!, template('b-over', [configMap('other')])];
    const held: HeldObjects = { template: 'b-over', hashes: Object.fromEntries(desiredState(ns, both).objects.map((d) => [d.key, d.hash])) };
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, dropped), observed: null, record, templates: dropped, held });
    expect(plan.apply.map((a) => `${a.template} ${a.key}`)).toEqual(['a-base /ConfigMap/team-a/shared']);
  });

  it('something recorded or held that is no longer wanted asks for the objects to be read first', () => {
    const { record } = converged(ns, templates);
    const fewer = [template('base', [configMap('owner')])];
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, fewer), observed: null, record, templates: fewer, held: heldAsConverged() });
    expect(plan.needsObservation).toBe(true);
    expect(plan.prune).toEqual([]);
    const unrecorded = planNamespace({ namespace: ns, desired: desiredState(ns, fewer), observed: null, record: { ...record, objects: {} }, templates: fewer, held: heldAsConverged() });
    expect(unrecorded.needsObservation).toBe(true);
  });
});

describe('heldSnapshotOutdated', () => {
  const at = (o: KubeObject, resourceVersion: string): KubeObject => ({ ...o, metadata: { ...o.metadata, resourceVersion } });
  const ours = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'q', namespace: 'team-a', labels: { [KEY.template]: 'base', [KEY.applySetPartOf]: applySetId('team-a') }, managedFields: [furnishApply] } } as KubeObject;
  const theirs = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'user', namespace: 'team-a' } } as KubeObject;
  const parent = parentObject('team-a', { groupKinds: ['ConfigMap'], applied: ['base'], failed: [] });

  it('a namespace untouched since the templates were listed plans from them; one written since lists them again', () => {
    expect(heldSnapshotOutdated('100', null, [])).toBe(false);
    expect(heldSnapshotOutdated('100', at(parent, '99'), [at(ours, '100')])).toBe(false);
    expect(heldSnapshotOutdated('100', at(parent, '101'), [])).toBe(true);
    expect(heldSnapshotOutdated('100', null, [at(ours, '101')])).toBe(true);
    // Someone else's object says nothing about what Furnish applied.
    expect(heldSnapshotOutdated('100', null, [at(theirs, '500')])).toBe(false);
    // Versions that are not etcd revisions cannot be compared: read again.
    expect(heldSnapshotOutdated('abc', null, [at(ours, '1')])).toBe(true);
    expect(heldSnapshotOutdated('100', null, [at(ours, 'x7')])).toBe(true);
  });
});

describe('afterWrites', () => {
  const ns = namespace('team-a', { [KEY.phase]: 'pending' });
  const templates = [template('base', [configMap('owner'), roleBinding]), template('extra', [configMap('more')])];

  it('records what was applied with the server\'s hash, writes the parent once, and makes the namespace ready in one patch', () => {
    const desired = desiredState(ns, templates);
    const input: PlanInput = { namespace: ns, desired, observed: [], parent: null, record: EMPTY_RECORD, templates };
    const plan = planNamespace(input);
    const applied = new Map(desired.objects.map((d) => [d.key, `seen-${d.key}`]));
    const after = afterWrites(input, plan, { applied, created: new Set(), released: new Set(), failures: [] });
    expect(Object.keys(after.record.objects).sort()).toEqual(desired.objects.map((d) => d.key).sort());
    // The server's answer here is not what was predicted: the record keeps it.
    expect(after.record.objects['/ConfigMap/team-a/owner']).toEqual({ template: 'base', observed: 'seen-/ConfigMap/team-a/owner' });
    expect(after.appliedTemplates).toEqual(['base', 'extra']);
    expect(after.parent.metadata.annotations?.[KEY.appliedTemplates]).toBe('base,extra');
    // The parent written before the objects already said so (a first population writes it once).
    expect(plan.parentBefore?.metadata.annotations?.[KEY.appliedTemplates]).toBe('base,extra');
    expect(after.parentWrite).toBe(false);
    expect(after.namespacePatch?.metadata.labels?.[KEY.phase]).toBe('ready');
    const patched = { ...ns, metadata: { ...ns.metadata, annotations: { ...ns.metadata.annotations, ...after.namespacePatch!.metadata.annotations } } } as KubeObject;
    expect(readRecord(patched)).toEqual(after.record);
  });

  it('a failed template is recorded as failed, keeps nothing it did not apply, and fails the namespace', () => {
    const desired = desiredState(ns, templates);
    const input: PlanInput = { namespace: ns, desired, observed: [], parent: null, record: EMPTY_RECORD, templates };
    const plan = planNamespace(input);
    const applied = new Map(desired.objects.filter((d) => d.template === 'base').map((d) => [d.key, 'h']));
    const failures = [{ template: 'extra', key: '/ConfigMap/team-a/more', hash: '', status: 422, reason: 'Invalid', message: 'no' }];
    const after = afterWrites(input, plan, { applied, created: new Set(), released: new Set(), failures });
    expect(Object.keys(after.record.objects)).not.toContain('/ConfigMap/team-a/more');
    expect(after.failedTemplates).toEqual(['extra']);
    expect(after.parent.metadata.annotations?.[KEY.failedTemplates]).toBe('extra');
    // The parent written before named 'extra' as about to apply: the failure rewrites it.
    expect(plan.parentBefore?.metadata.annotations?.[KEY.failedTemplates]).toBeUndefined();
    expect(after.parentWrite).toBe(true);
    expect(after.phase.phase).toBe('failed');
  });

  it('released objects leave the record; a converged namespace needs no write at all', () => {
    const ready = namespace('team-a', { [KEY.phase]: 'ready' });
    const { desired, observed, parent, record } = converged(ready, templates);
    const recorded = { ...ready, metadata: { ...ready.metadata, annotations: { ...ready.metadata.annotations, [KEY.applied]: formatRecord(record) } } };
    const input: PlanInput = { namespace: recorded, desired, observed, parent, record, templates };
    const after = afterWrites(input, planNamespace(input), { applied: new Map(), created: new Set(), released: new Set(), failures: [] });
    expect(after.namespacePatch).toBeNull();
    expect(after.parentWrite).toBe(false);
    const fewer = [template('base', [configMap('owner'), roleBinding])];
    const shrunk: PlanInput = { ...input, desired: desiredState(recorded, fewer), templates: fewer };
    const plan = planNamespace(shrunk);
    expect(plan.prune.map((r) => r.key)).toEqual(['/ConfigMap/team-a/more']);
    const gone = afterWrites(shrunk, plan, { applied: new Map(), created: new Set(), released: new Set(['/ConfigMap/team-a/more']), failures: [] });
    expect(Object.keys(gone.record.objects)).not.toContain('/ConfigMap/team-a/more');
    expect(gone.parent.metadata.annotations?.[KEY.appliedTemplates]).toBe('base');
  });
});

describe('what a first population must list', () => {
  const want = (template: string, groupKind: string, mode: 'Enforce' | 'CreateOnly' = 'Enforce') => ({ template, groupKind, mode }) as DesiredState['objects'][number];

  it('a pending namespace without a record is unpopulated; one with a record, or without the phase, is not', () => {
    const pending: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a', labels: { [KEY.phase]: 'pending' } } };
    expect(unpopulated(pending, null)).toBe(true);
    expect(unpopulated(pending, EMPTY_RECORD)).toBe(false);
    expect(unpopulated({ ...pending, metadata: { name: 'a', labels: { [KEY.phase]: 'failed' } } }, null)).toBe(false);
    expect(unpopulated({ ...pending, metadata: { name: 'a' } }, null)).toBe(false);
  });

  it('lists the Enforce kinds of templates with two or more writes, not those of a single write or of CreateOnly objects', () => {
    expect(kindsAbsenceDecides({ objects: [want('one', '/ConfigMap')] })).toEqual([]);
    expect(kindsAbsenceDecides({ objects: [want('two', '/ConfigMap'), want('two', 'rbac.authorization.k8s.io/RoleBinding')] })).toEqual(['/ConfigMap', 'rbac.authorization.k8s.io/RoleBinding']);
    expect(kindsAbsenceDecides({ objects: [want('mixed', '/ConfigMap', 'CreateOnly'), want('mixed', '/ResourceQuota')] })).toEqual(['/ResourceQuota']);
    expect(kindsAbsenceDecides({ objects: [want('seed', '/ConfigMap', 'CreateOnly'), want('seed', '/Secret', 'CreateOnly'), want('one', '/LimitRange')] })).toEqual([]);
  });
});
