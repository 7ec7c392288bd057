// Which objects are Furnish's (shared/ownership.ts): the one rule the reconciler prunes by and
// protect-objects keeps true. Objects are shaped as kube-apiserver stores them (managedFields
// FieldsV1 tries); issue 25 findings 8 (a template's object detached from pruning) and 13 (a user's
// own object, labelled furnish.dev/template, deleted by the reconciler).
import { describe, expect, it } from '@jest/globals';
import { KEY, LEGACY_KEY } from '../../shared/keys.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { isFurnishParent, ownedByFurnish, ownershipChange, wroteAsFurnish } from '../../shared/ownership.ts';
import { applySetId, applySetParent } from '../../shared/render/applyset.ts';
import { ownedObjects, planNamespace, desiredState } from '../../shared/reconcile/plan.ts';

const NS = 'team-a';
const ID = applySetId(NS);
const T1 = '2026-11-27T05:00:00Z';
const T2 = '2026-11-27T05:00:07Z';

const labelsOwned = { [`f:${KEY.template}`]: {}, [`f:${KEY.applySetPartOf}`]: {} };
const annotationsOwned = { [`f:${KEY.appliedHash}`]: {}, [`f:${KEY.deletionPolicy}`]: {} };

interface Entry { manager: string; operation: 'Apply' | 'Update'; time?: string; subresource?: string; fieldsV1: Record<string, unknown> }

const furnishApply = (fields: Record<string, unknown> = { 'f:metadata': { 'f:labels': labelsOwned, 'f:annotations': annotationsOwned }, 'f:data': { 'f:a': {} } }, time = T1): Entry =>
  ({ manager: 'furnish', operation: 'Apply', time, fieldsV1: fields });

/** A ConfigMap as Furnish's template apply leaves it (this version and every older one). */
function furnished(over: { labels?: Record<string, string>; annotations?: Record<string, string>; managedFields?: Entry[]; data?: Record<string, string> } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'seed',
      namespace: NS,
      labels: over.labels ?? { [KEY.template]: 'team-defaults', [KEY.applySetPartOf]: ID },
      annotations: over.annotations ?? { [KEY.appliedHash]: 'h1', [KEY.deletionPolicy]: 'Delete' },
      managedFields: over.managedFields ?? [furnishApply()],
    },
    data: over.data ?? { a: '1' },
  };
}

const tenantUpdate = (fields: Record<string, unknown>, manager = 'kubectl-edit'): Entry => ({ manager, operation: 'Update', time: T2, fieldsV1: fields });

describe('ownedByFurnish: a member of the namespace ApplySet, the membership owned by field manager furnish', () => {
  it('holds for what Furnish applied, including objects of older versions (label and field manager) and one whose template label someone took off', () => {
    expect(ownedByFurnish(furnished())).toBe(true);
    const olderVersion = furnished({ annotations: { [KEY.appliedHash]: 'h0', [LEGACY_KEY.observedHash]: 'o0', [KEY.deletionPolicy]: 'Orphan' } });
    expect(ownedByFurnish(olderVersion)).toBe(true);
    const created = furnished({ managedFields: [{ ...furnishApply(), operation: 'Update' }] });
    expect(ownedByFurnish(created)).toBe(true); // CreateOnly: a POST with fieldManager furnish
    expect(ownedByFurnish(furnished({ labels: { [KEY.applySetPartOf]: ID } }))).toBe(true);
  });

  it('finding 13: a label alone is not ownership (a user\'s own ConfigMap labelled furnish.dev/template: anything, even with the ApplySet label)', () => {
    const mine = furnished({ labels: { [KEY.template]: 'anything' }, managedFields: [tenantUpdate({ 'f:metadata': { 'f:labels': { [`f:${KEY.template}`]: {} } }, 'f:data': {} }, 'kubectl-create')] });
    expect(ownedByFurnish(mine)).toBe(false);
    const withSet = furnished({ labels: { [KEY.template]: 'anything', [KEY.applySetPartOf]: ID }, managedFields: [tenantUpdate({ 'f:metadata': { 'f:labels': labelsOwned } }, 'kubectl-create')] });
    expect(ownedByFurnish(withSet)).toBe(false);
  });

  it('a field manager alone is not ownership either: furnish must own the membership label of this namespace\'s set, through the object itself', () => {
    // The label added by someone else onto an object furnish wrote other fields of (the LNamespace reconciler's RoleBindings use the same manager).
    const labelledLater = furnished({ managedFields: [furnishApply({ 'f:data': { 'f:a': {} } }), tenantUpdate({ 'f:metadata': { 'f:labels': labelsOwned } }, 'kubectl-label')] });
    expect(ownedByFurnish(labelledLater)).toBe(false);
    expect(ownedByFurnish(furnished({ labels: { [KEY.applySetPartOf]: applySetId('team-b') } }))).toBe(false);
    expect(ownedByFurnish(furnished(), 'team-b')).toBe(false);
    expect(ownedByFurnish(furnished({ managedFields: [{ ...furnishApply(), subresource: 'status' }] }))).toBe(false);
    expect(ownedByFurnish(furnished({ managedFields: [] }))).toBe(false);
    expect(ownedByFurnish({ ...furnished(), metadata: { ...furnished().metadata, managedFields: [null, 'x'] as unknown[] } })).toBe(false);
  });

  it('the reconciler prunes only what is Furnish\'s: a user\'s own labelled ConfigMap stays when the template stops selecting the namespace', () => {
    const mine = furnished({ labels: { [KEY.template]: 'anything' }, managedFields: [tenantUpdate({ 'f:metadata': { 'f:labels': { [`f:${KEY.template}`]: {} } } }, 'kubectl-create')] });
    mine.metadata.name = 'mine';
    const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { [KEY.phase]: 'ready' } } };
    const observed = [furnished(), mine];
    expect([...ownedObjects(observed).keys()]).toEqual([`/ConfigMap/${NS}/seed`]);
    const plan = planNamespace({ namespace: ns, desired: desiredState(ns, []), observed, parent: null, templates: [] });
    expect(plan.prune.map((r) => r.name)).toEqual(['seed']);
  });
});

describe('ownershipChange: what a write changes of Furnish\'s ownership', () => {
  const change = (next: KubeObject | null, old: KubeObject | null = furnished(), fieldManager?: string) => ownershipChange({ old, next, namespace: NS, fieldManager });

  it('finding 8: detaching a template\'s object, by its labels or by its managedFields, is a change', () => {
    // `metadata.managedFields: [{}]` (or `[]`) resets them: the server leaves the updater's own entry alone.
    const reset = furnished({ managedFields: [tenantUpdate({ 'f:data': { 'f:a': {} } })], data: { a: '2' } });
    expect(change(reset)).toBe(`takes it out of Furnish's ApplySet (label ${KEY.applySetPartOf}, or the managedFields entry of field manager "furnish" that owns it)`);
    const unlabelled = furnished({ labels: {}, managedFields: [furnishApply({ 'f:data': { 'f:a': {} } })] });
    expect(change(unlabelled)).toMatch(/^takes it out of Furnish's ApplySet/);
    expect(change(furnished({ labels: { [KEY.applySetPartOf]: ID } }))).toBe(`sets, changes or removes label ${KEY.template}`);
    // Orphaned instead of deleted when its template goes: the recorded deletionPolicy is Furnish's too.
    expect(change(furnished({ annotations: { [KEY.appliedHash]: 'h1', [KEY.deletionPolicy]: 'Orphan' } }))).toBe(`sets, changes or removes annotation ${KEY.deletionPolicy}`);
    expect(change(furnished({ labels: { [KEY.template]: 'other', [KEY.applySetPartOf]: ID }, annotations: {} }))).toBe(`sets, changes or removes annotation ${KEY.deletionPolicy}, annotation ${KEY.appliedHash}, label ${KEY.template}`);
  });

  it('finding 13 the other way: making an object Furnish\'s (to have the reconciler delete it) is a change, on update and on create', () => {
    const mine = furnished({ labels: { [KEY.template]: 'anything' }, managedFields: [tenantUpdate({ 'f:metadata': { 'f:labels': {} } }, 'kubectl-create')] });
    const faked = furnished({ managedFields: [{ ...furnishApply(), time: T2 }, tenantUpdate({ 'f:data': {} }, 'kubectl-create')] });
    expect(change(faked, mine)).toBe(`makes it Furnish's (label ${KEY.applySetPartOf}=${ID} with field manager "furnish")`);
    expect(change(furnished(), null)).toMatch(/^makes it Furnish's/);
  });

  it('writing as field manager furnish onto Furnish\'s object is a change: by name, a new entry, or an entry the server stamped anew', () => {
    expect(change(furnished(), furnished(), 'furnish')).toBe('writes as field manager "furnish"');
    expect(change(furnished({ managedFields: [furnishApply(), { ...tenantUpdate({ 'f:data': { 'f:b': {} } }), manager: 'furnish' }] }))).toBe('writes as field manager "furnish"');
    expect(change(furnished({ managedFields: [furnishApply(undefined, T2)] }))).toBe('writes as field manager "furnish"');
    expect(wroteAsFurnish(furnished(), furnished({ managedFields: [furnishApply({ 'f:metadata': { 'f:labels': labelsOwned, 'f:annotations': annotationsOwned }, 'f:data': { 'f:a': {}, 'f:b': {} } })] }))).toBe(true);
  });

  it('is nothing for the writes a namespace user may make: content edits (fields taken over from furnish), deletes, objects that are not Furnish\'s', () => {
    // kubectl edit of a value Furnish set: its entry loses the field, its time stays.
    const edited = furnished({ data: { a: '2' }, managedFields: [furnishApply({ 'f:metadata': { 'f:labels': labelsOwned, 'f:annotations': annotationsOwned } }), tenantUpdate({ 'f:data': { 'f:a': {} } })] });
    expect(change(edited)).toBeUndefined();
    expect(change(furnished({ labels: { [KEY.template]: 'team-defaults', [KEY.applySetPartOf]: ID, team: 'blue' } }))).toBeUndefined();
    expect(change(null)).toBeUndefined();
    const mine = furnished({ labels: { [KEY.template]: 'anything' }, managedFields: [tenantUpdate({ 'f:metadata': { 'f:labels': {} } }, 'kubectl-create')] });
    expect(change(furnished({ labels: {}, managedFields: mine.metadata.managedFields as Entry[] }), mine)).toBeUndefined();
    expect(change(mine, null)).toBeUndefined();
  });
});

describe('isFurnishParent', () => {
  it('is the ConfigMap furnish-applyset carrying this namespace\'s set id; a user\'s own kubectl ApplySet is not', () => {
    const parent = applySetParent(NS, []);
    expect(isFurnishParent(parent, NS)).toBe(true);
    expect(isFurnishParent(parent, 'team-b')).toBe(false);
    expect(isFurnishParent({ ...parent, metadata: { ...parent.metadata, name: 'my-app' } }, NS)).toBe(false);
    expect(isFurnishParent({ ...parent, metadata: { ...parent.metadata, labels: {} } }, NS)).toBe(false);
    expect(isFurnishParent({ ...parent, kind: 'Secret' }, NS)).toBe(false);
    expect(isFurnishParent(null, NS)).toBe(false);
  });
});
