// The decisions behind listing the templates again after a reconcile's writes (recheck.ts): which
// templates a written parent names for the first time, when that needs a second list, and
// whether the templates moved since they were planned from.
import { describe, it, expect } from '@jest/globals';
import { KEY } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { parentObject } from '../../../shared/reconcile/plan.ts';
import { namedBefore, newlyNamed, plannedFrom, recheckNeeded, templatesMoved } from '../../../shared/reconcile/recheck.ts';

const parent = (applied: string[], failed: string[] = []): KubeObject => parentObject('a', { groupKinds: ['ConfigMap'], applied, failed });
const ns = (phase?: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a', labels: phase ? { [KEY.phase]: phase } : {} } });
const tpl = (name: string, team: string): NamespaceTemplate => ({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: { namespaces: { labelSelector: { matchLabels: { team } } }, templates: [] } });

describe('namedBefore', () => {
  it('is what the live parent names, applied or failed, when it was read', () => {
    expect(namedBefore(parent(['t'], ['u']), { applied: ['x'], failed: [] }).sort()).toEqual(['t', 'u']);
  });

  it('is nothing when the parent was read and is absent, whatever the record says', () => {
    expect(namedBefore(null, { applied: ['x'], failed: ['y'] })).toEqual([]);
  });

  it('is the record\'s word when the parent was not read (a fan-out planned from the record)', () => {
    expect(namedBefore(undefined, { applied: ['x'], failed: ['y'] })).toEqual(['x', 'y']);
  });
});

describe('newlyNamed', () => {
  it('names the templates a written parent names that were not named before', () => {
    expect(newlyNamed(['t'], [parent(['t', 'u'], ['v'])])).toEqual(['u', 'v']);
  });

  it('is empty when the parents written name nothing new, or none was written', () => {
    expect(newlyNamed(['t', 'u'], [parent(['t']), parent(['u'])])).toEqual([]);
    expect(newlyNamed([], [null, null])).toEqual([]);
  });

  it('counts a template moving from failed to applied as named before', () => {
    expect(newlyNamed(['t'], [parent([], ['t'])])).toEqual([]);
    expect(newlyNamed(['t'], [parent(['t'])])).toEqual([]);
  });

  it('takes the parent written before the objects and the one after together', () => {
    expect(newlyNamed([], [parent(['t']), parent(['t', 'u'])])).toEqual(['t', 'u']);
  });
});

describe('recheckNeeded', () => {
  const named = (newlyNamed: string[], objectsChanged = false) => ({ newlyNamed, objectsChanged });
  it('lists again when a template is newly named in a namespace that is ready, failed, or has no phase', () => {
    for (const phase of ['ready', 'failed', undefined]) expect(recheckNeeded(ns(phase), named(['t']))).toBe(true);
  });

  it('lists again when objects were written or released there (a drift repair, a batch beside another batch of the same namespace)', () => {
    for (const phase of ['ready', 'failed', undefined]) expect(recheckNeeded(ns(phase), named([], true))).toBe(true);
  });

  it('never for a pending namespace: every fan-out messages it alone, after the reconcile in flight', () => {
    expect(recheckNeeded(ns('pending'), named(['t'], true))).toBe(false);
  });

  it('never when nothing is newly named and no object changed (a no-op fan-out, a no-op resync)', () => {
    expect(recheckNeeded(ns('ready'), named([]))).toBe(false);
  });
});

describe('templatesMoved', () => {
  const v1 = [tpl('t', 'x'), tpl('u', 'x')];

  it('is false when every template planned from is as it was', () => {
    expect(templatesMoved(plannedFrom(v1, ['t']), v1)).toBe(false);
  });

  it('is true when one of them changed, went away, or came to be', () => {
    expect(templatesMoved(plannedFrom(v1, ['t']), [tpl('t', 'y'), tpl('u', 'x')])).toBe(true);
    expect(templatesMoved(plannedFrom(v1, ['t']), [tpl('u', 'x')])).toBe(true);
    expect(templatesMoved(plannedFrom(v1, ['new']), [...v1, tpl('new', 'x')])).toBe(true);
  });

  it('is false when only a template it does not concern changed', () => {
    expect(templatesMoved(plannedFrom(v1, ['t']), [tpl('t', 'x'), tpl('u', 'y')])).toBe(false);
  });

  it('is false with nothing planned', () => {
    expect(templatesMoved([], v1)).toBe(false);
  });
});
