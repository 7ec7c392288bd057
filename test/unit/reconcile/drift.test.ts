// appliedFieldsHeld on objects captured from kube-apiserver 1.26.3
// (test/fixtures/kube-apiserver-1.26/managed-fields: applied as `furnish` with force, then changed
// by another manager). Each case checks the object held and changed, so a constant answer fails.
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { wroteAsFurnish } from '../../../shared/ownership.ts';
import { appliedFieldsHeld } from '../../../shared/reconcile/drift.ts';

const dir = join(import.meta.dirname, '../../fixtures/kube-apiserver-1.26/managed-fields');
const read = (file: string): KubeObject => JSON.parse(readFileSync(join(dir, file), 'utf8')) as KubeObject;
/** Desired objects, longest name first: a case `configmap-finalizer-removed` was made from `configmap-finalizer`. */
const wants = readdirSync(join(dir, 'want')).map((f) => f.replace(/\.json$/, '')).sort((a, b) => b.length - a.length);
/** The live object of a case and the desired object Furnish applied to it (want/KIND.json under the case's name). */
function fixture(name: string): { want: KubeObject; live: KubeObject } {
  const want = read(`want/${wants.find((w) => name.startsWith(`${w}-`))}.json`);
  return { want: { ...want, metadata: { ...want.metadata, name } }, live: read(`${name}.json`) };
}
const held = (name: string): boolean => {
  const { want, live } = fixture(name);
  return appliedFieldsHeld(want, live);
};

describe('drift judged by field ownership, on objects from a real API server', () => {
  // Each row: a change that is not drift (still held) beside one that is, on the same kind.
  it.each([
    ['a data key changed by kubectl edit (a strategic merge patch as kubectl-edit)', 'configmap-applied', 'configmap-data-edited'],
    ['a label added beside ours is not drift; a label of ours removed by kubectl label is', 'configmap-label-added', 'configmap-label-removed'],
    ['another manager applying the same value shares it; applying another value with force takes it', 'configmap-same-value-applied', 'configmap-value-forced'],
    ['our finalizer (a set item, v:) removed by a JSON patch', 'configmap-finalizer-applied', 'configmap-finalizer-removed'],
    ['ingress ports (atomic; the server added protocol TCP the template omits) edited by someone else', 'networkpolicy-applied', 'networkpolicy-ports-edited'],
    ['a container (by name, its port by containerPort and the defaulted protocol) whose image kubectl set image changed', 'deployment-applied', 'deployment-image-set'],
    ['a container env var added by someone else is not drift; the value of ours changed by kubectl set env is', 'deployment-env-added', 'deployment-env-changed'],
    ['RoleBinding subjects (atomic) added to by a JSON patch', 'rolebinding-applied', 'rolebinding-subjects-edited'],
    ['quota hard 1000m stored as 1 and status written by the quota controller are not drift; a hard limit edited is', 'resourcequota-applied', 'resourcequota-hard-edited'],
  ])('%s', (_what, kept, changed) => {
    expect([held(kept), held(changed)]).toEqual([true, false]);
  });

  it('managedFields are the writer\'s word: a no-op update sending our entry back makes an edit look held, so protect-objects refuses it', () => {
    const { want, live: forged } = fixture('configmap-forged');
    const edited = read('configmap-forged-edited.json');
    expect([(forged.data as Record<string, string>).level, appliedFieldsHeld(want, edited), appliedFieldsHeld(want, forged)]).toEqual(['4', false, true]);
    // ownershipChange (refuseOwnershipChange, for every template's objects) calls this "writes as field manager furnish".
    expect(wroteAsFurnish(edited, forged)).toBe(true);
  });

  it('the fixtures hold what the rows rely on: a normalised quantity, a status write, a shared field', () => {
    const quota = fixture('resourcequota-applied').live as KubeObject & { spec: { hard: Record<string, string> }; status: { used?: unknown } };
    expect([quota.spec.hard['requests.cpu'], quota.status.used !== undefined]).toEqual(['1', true]);
    const shared = fixture('configmap-same-value-applied').live;
    expect((shared.metadata.managedFields as Array<{ manager: string }>).map((e) => e.manager).sort()).toEqual(['furnish', 'other-tool']);
  });
});

describe('which entry is Furnish\'s, and what it must cover', () => {
  const { want, live } = fixture('deployment-applied');
  const entries = live.metadata.managedFields as Array<Record<string, unknown>>;
  const withEntries = (managedFields: unknown[]): KubeObject => ({ ...live, metadata: { ...live.metadata, managedFields } });
  const ours = entries.find((e) => e.manager === 'furnish')!;
  type Spec = { template: { spec: { containers: Array<Record<string, unknown>> } } };
  const withContainers = (edit: (containers: Array<Record<string, unknown>>) => Array<Record<string, unknown>>): KubeObject => {
    const spec = structuredClone(want.spec) as Spec;
    spec.template.spec.containers = edit(spec.template.spec.containers);
    return { ...want, spec };
  };

  it('only the Apply entry of manager furnish on the main resource counts', () => {
    expect(appliedFieldsHeld(want, withEntries([ours]))).toBe(true);
    expect(appliedFieldsHeld(want, withEntries([]))).toBe(false);
    expect(appliedFieldsHeld(want, withEntries([{ ...ours, manager: 'other-tool' }]))).toBe(false);
    expect(appliedFieldsHeld(want, withEntries([{ ...ours, operation: 'Update' }]))).toBe(false);
    expect(appliedFieldsHeld(want, withEntries([{ ...ours, subresource: 'status' }]))).toBe(false);
  });

  it('an entry recorded in another apiVersion does not count: its paths are that version\'s', () => {
    expect(appliedFieldsHeld(want, withEntries([{ ...ours, apiVersion: 'apps/v1beta2' }]))).toBe(false);
    expect(appliedFieldsHeld({ ...want, apiVersion: 'apps/v1beta2' }, withEntries([{ ...ours, apiVersion: 'apps/v1beta2' }]))).toBe(true);
  });

  it('asks nothing of apiVersion, kind, name, namespace or status; asks every other field', () => {
    expect(appliedFieldsHeld({ ...want, status: { replicas: 1 } }, live)).toBe(true);
    expect(appliedFieldsHeld({ ...want, metadata: { ...want.metadata, labels: { ...want.metadata.labels, extra: 'x' } } }, live)).toBe(false);
    expect(appliedFieldsHeld({ ...want, spec: { ...(want.spec as object), paused: true } }, live)).toBe(false);
  });

  it('a keyed list item matches by the keys it sets; a key it leaves out may be the server\'s default', () => {
    const port = (p: Record<string, unknown>) => withContainers(([app, ...rest]) => [{ ...app, ports: [p] }, ...rest]);
    expect(appliedFieldsHeld(port({ containerPort: 8080 }), live)).toBe(true);
    expect(appliedFieldsHeld(port({ containerPort: 8080, protocol: 'UDP' }), live)).toBe(false);
    // The same key, now spelt out: the item matches, but we never applied `protocol`, so it is not ours.
    expect(appliedFieldsHeld(port({ containerPort: 8080, protocol: 'TCP' }), live)).toBe(false);
    expect(appliedFieldsHeld(port({ containerPort: 9090 }), live)).toBe(false);
    expect(appliedFieldsHeld(withContainers((cs) => [...cs, { name: 'third', image: 'x' }]), live)).toBe(false);
    expect(appliedFieldsHeld(withContainers((cs) => [{ image: 'nginx:1.25' }, ...cs.slice(1)]), live)).toBe(false);
  });

  it('a set item (v:) is looked up by value', () => {
    const { want: cm, live: applied } = fixture('configmap-finalizer-applied');
    const finalizers = (list: string[]): KubeObject => ({ ...cm, metadata: { ...cm.metadata, finalizers: list } });
    expect(appliedFieldsHeld(finalizers(['example.com/keep']), applied)).toBe(true);
    expect(appliedFieldsHeld(finalizers(['example.com/keep', 'example.com/other']), applied)).toBe(false);
  });

  it('a null, an empty list or an empty map is not asked (what an apply owns of them varies); what they would hold is', () => {
    expect(appliedFieldsHeld(withContainers(([app, ...rest]) => [{ ...app, volumeMounts: [], workingDir: null, securityContext: {} }, ...rest]), live)).toBe(true);
    expect(appliedFieldsHeld(withContainers(([app, ...rest]) => [{ ...app, securityContext: { runAsUser: 1 } }, ...rest]), live)).toBe(false);
  });
});
