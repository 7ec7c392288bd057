// protect-objects: the rules on their own, then the handler on what kube-apiserver 1.26 really sent
// (test/fixtures/kube-apiserver-1.26/admission/034-039: a tenant labelling, unlabelling and deleting
// a template's NetworkPolicy, the reconciler re-applying it, the namespace controller deleting it;
// captured before the ApplySet label counted, so `applied` adds it as Furnish applies it now).
import { describe, expect, it } from '@jest/globals';
import type { AdmissionRequest } from '../../../shared/admission/types.ts';
import { KEY } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { applySetId, applySetParent } from '../../../shared/render/applyset.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { HANDLERS } from '../../../shared/webhooks/handlers/index.ts';
import { protectObjects } from '../../../shared/webhooks/handlers/protect-objects.ts';
import type { TemplateSource } from '../../../shared/webhooks/deps.ts';
import {
  protectedContent,
  protectFirstStep,
  protectOutcome,
  templateOf,
  templateProtects,
  type ProtectInput,
} from '../../../shared/webhooks/rules/protect-objects.ts';
import { validateTemplate } from '../../../shared/render/validate.ts';
import { admissionRequest, asApplySetMembers, namespaceTemplate, testDeps, testSettings } from '../../support/fixtures.ts';

const settings = testSettings();
const RECONCILER = 'system:serviceaccount:furnish-system:furnish-reconciler';
const DENIAL_DELETE =
  'user "alice" may not delete NetworkPolicy "default-deny" in namespace "team-p": it belongs to NamespaceTemplate "security-defaults", which protects its objects (spec.protect: true), '
  + "so only Furnish's reconciler changes it. To change it, edit the template (kubectl edit namespacetemplate security-defaults); Furnish applies the change to every namespace the template selects";

function template(protect: boolean | undefined, annotations?: Record<string, string>): NamespaceTemplate {
  const t = namespaceTemplate('security-defaults');
  if (protect !== undefined) t.spec.protect = protect;
  if (annotations) t.metadata.annotations = annotations;
  return t;
}

/** Furnish's field manager owns the ApplySet label (what makes an object Furnish's, shared/ownership.ts). */
const MEMBERSHIP = { 'f:metadata': { 'f:labels': { [`f:${KEY.applySetPartOf}`]: {} } } };

function policy(labels: Record<string, string>, managers: string[] = ['furnish'], spec: Record<string, unknown> = { podSelector: {}, policyTypes: ['Ingress'] }): KubeObject {
  const managedFields = managers.map((manager) => ({ manager, operation: 'Apply', time: '2026-11-27T05:00:00Z', fieldsV1: manager === 'furnish' ? MEMBERSHIP : {} }));
  return { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'default-deny', namespace: 'team-a', labels, resourceVersion: '1', managedFields }, spec };
}

const LABELLED = { 'furnish.dev/template': 'security-defaults', [KEY.applySetPartOf]: applySetId('team-a') };
const TEMPLATE_LABEL_ONLY = { 'furnish.dev/template': 'security-defaults' };

/** A captured request with its objects members of the namespace's ApplySet, the label applied by furnish. */
const applied = (name: Parameters<typeof admissionRequest>[0]): AdmissionRequest => asApplySetMembers(admissionRequest(name));

function input(over: Partial<ProtectInput>): ProtectInput {
  return { operation: 'DELETE', user: { username: 'alice' }, oldObject: policy(LABELLED), object: null, kind: 'NetworkPolicy', name: 'default-deny', namespace: 'team-a', settings, ...over };
}

/** A source that counts reads, to show which requests cost one. */
function countingTemplates(templates: NamespaceTemplate[]): TemplateSource & { reads: string[] } {
  const reads: string[] = [];
  return { reads, list: async () => templates, get: async (name) => (reads.push(name), templates.find((t) => t.metadata.name === name)) };
}

describe('protect-objects rules', () => {
  it('templateOf: the label names the template', () => {
    expect(templateOf(policy(LABELLED))).toBe('security-defaults');
    expect(templateOf(policy({}))).toBeUndefined();
    expect(templateOf(policy({ 'furnish.dev/template': '' }))).toBeUndefined();
    expect(templateOf(null)).toBeUndefined();
  });

  it('protectedContent: spec, labels, annotations and owner references count; status and bookkeeping do not', () => {
    const base = policy(LABELLED);
    const same = { ...policy(LABELLED, ['furnish', 'kube-controller-manager']), status: { x: 1 } };
    same.metadata = { ...same.metadata, resourceVersion: '9', finalizers: ['example.com/f'], generation: 3 };
    expect(protectedContent(same)).toEqual(protectedContent(base));
    expect(protectedContent(policy({ ...LABELLED, team: 'blue' }))).not.toEqual(protectedContent(base));
    expect(protectedContent(policy(LABELLED, ['furnish'], { podSelector: {}, policyTypes: ['Egress'] }))).not.toEqual(protectedContent(base));
    expect(protectedContent({ ...base, metadata: { ...base.metadata, ownerReferences: [{ kind: 'ConfigMap', name: 'mine' }] } })).not.toEqual(protectedContent(base));
    // Dropping Furnish's managedFields entry would unprotect the object: that is a change too.
    expect(protectedContent(policy(LABELLED, ['kubectl-edit']))).not.toEqual(protectedContent(base));
  });

  it('first step: allows without a read what needs none, else names the template to read', () => {
    const rule = (over: Partial<ProtectInput>) => {
      const step = protectFirstStep(input(over));
      return 'lookup' in step ? `lookup ${step.lookup}` : step.rule;
    };
    expect(rule({ operation: 'CREATE', object: policy(TEMPLATE_LABEL_ONLY), oldObject: null })).toBe('allow-other-operations');
    expect(rule({ operation: 'CREATE', object: policy(LABELLED), oldObject: null, user: { username: RECONCILER } })).toBe('allow-other-operations');
    expect(rule({ oldObject: policy({}) })).toBe('allow-unlabelled');
    expect(rule({ oldObject: policy(LABELLED, ['kubectl-client-side-apply']) })).toBe('allow-not-furnish');
    // A label alone (finding 13): not Furnish's, so not protected either.
    expect(rule({ oldObject: policy(TEMPLATE_LABEL_ONLY) })).toBe('allow-not-furnish');
    expect(rule({ user: { username: RECONCILER } })).toBe('allow-reconciler');
    expect(rule({ user: { username: 'system:serviceaccount:kube-system:namespace-controller' } })).toBe('allow-system-principals');
    expect(rule({ user: { username: 'system:serviceaccount:kube-system:generic-garbage-collector' } })).toBe('allow-system-principals');
    expect(rule({ operation: 'UPDATE', object: { ...policy(LABELLED), status: { ok: true } } })).toBe('allow-unchanged');
    expect(rule({})).toBe('lookup security-defaults');
    expect(rule({ operation: 'UPDATE', object: policy({ ...LABELLED, team: 'blue' }) })).toBe('lookup security-defaults');
    // Whether the object is Furnish's changes only by the reconciler, whichever way, whatever the template says.
    expect(rule({ operation: 'UPDATE', oldObject: policy({}), object: policy(TEMPLATE_LABEL_ONLY) })).toBe('allow-unlabelled');
    expect(rule({ operation: 'CREATE', object: policy(LABELLED), oldObject: null })).toBe('protect-ownership');
    expect(rule({ operation: 'UPDATE', oldObject: policy({}), object: policy(LABELLED) })).toBe('protect-ownership');
    expect(rule({ operation: 'UPDATE', object: policy({}) })).toBe('protect-ownership');
    expect(rule({ operation: 'UPDATE', object: policy(LABELLED, ['kubectl-edit']) })).toBe('protect-ownership');
    expect(rule({ operation: 'UPDATE', object: policy(LABELLED, ['kubectl-edit']), user: { username: RECONCILER } })).toBe('allow-reconciler');
    // A kube-system ServiceAccount that is not configured is nobody special.
    expect(rule({ user: { username: 'system:serviceaccount:kube-system:evil' } })).toBe('lookup security-defaults');
  });

  it('templateProtects: spec.protect true on a template that exists and is not disabled', () => {
    expect(templateProtects(template(true))).toBe(true);
    expect(templateProtects(template(false))).toBe(false);
    expect(templateProtects(template(undefined))).toBe(false);
    expect(templateProtects(template(true, { 'furnish.dev/apply': 'disable' }))).toBe(false);
    expect(templateProtects(undefined)).toBe(false);
  });

  it('outcome: the denial names the template and how to change the object', () => {
    expect(protectOutcome(input({ namespace: 'team-p' }), 'security-defaults', template(true))).toEqual({ rule: 'protect-template-objects', deny: DENIAL_DELETE });
    expect(protectOutcome(input({}), 'security-defaults', template(false))).toMatchObject({ rule: 'allow-unprotected', allow: 'NamespaceTemplate "security-defaults" does not protect its objects' });
    expect(protectOutcome(input({}), 'gone', undefined)).toMatchObject({ rule: 'allow-unprotected', allow: 'NamespaceTemplate "gone" does not exist' });
  });

  it('finding 8: a tenant may not detach a template\'s object from pruning (labels, managedFields reset), whether or not the template protects', () => {
    const reset = input({ operation: 'UPDATE', object: policy(LABELLED, ['kubectl-edit']) });
    expect(protectFirstStep(reset)).toEqual({
      rule: 'protect-ownership',
      deny: `user "alice" may not update NetworkPolicy "default-deny" in namespace "team-a": the request takes it out of Furnish's ApplySet (label ${KEY.applySetPartOf}, or the managedFields entry of field manager "furnish" that owns it). `
        + "Only Furnish's reconciler changes whether an object is Furnish's: it prunes it, or releases it under deletionPolicy Orphan, when no template wants it any more",
    });
    const orphaned = input({ operation: 'UPDATE', object: { ...policy(LABELLED), metadata: { ...policy(LABELLED).metadata, annotations: { [KEY.deletionPolicy]: 'Orphan' } } } });
    expect(protectFirstStep(orphaned)).toMatchObject({ rule: 'protect-ownership', deny: expect.stringContaining(`the request sets, changes or removes annotation ${KEY.deletionPolicy}.`) });
    expect(protectFirstStep(input({ operation: 'UPDATE', object: policy(LABELLED), fieldManager: 'furnish' }))).toMatchObject({ deny: expect.stringContaining('the request writes as field manager "furnish"') });
  });

  it('finding 13: nobody but the reconciler makes an object Furnish\'s (created so, or labelled and written as furnish)', () => {
    expect(protectFirstStep(input({ operation: 'CREATE', oldObject: null, object: policy(LABELLED) }))).toMatchObject({
      rule: 'protect-ownership', deny: expect.stringMatching(/^user "alice" may not create NetworkPolicy "default-deny" in namespace "team-a": the request makes it Furnish's \(label applyset.kubernetes.io\/part-of=applyset-.*-v1 with field manager "furnish"\)/),
    });
  });

  it('the ApplySet parent is written by the reconciler alone, deleted by it or the system controllers; users\' own ApplySets pass', () => {
    const parent = applySetParent('team-a', []);
    const edited = { ...parent, metadata: { ...parent.metadata, annotations: { ...parent.metadata.annotations, [KEY.applySetGroupKinds]: 'Secret' } } };
    const on = (over: Partial<ProtectInput>) => protectFirstStep(input({ kind: 'ConfigMap', name: 'furnish-applyset', oldObject: parent, object: null, ...over }));
    const denial = (verb: string) => ({ rule: 'protect-applyset-parent', deny: `user "alice" may not ${verb} ConfigMap "furnish-applyset" in namespace "team-a": it is the parent of the namespace's ApplySet, where Furnish records what it applied there, and only Furnish's reconciler writes it` });
    expect(on({})).toEqual(denial('delete'));
    expect(on({ operation: 'UPDATE', object: edited })).toEqual(denial('update'));
    expect(on({ operation: 'UPDATE', object: { ...parent, metadata: { ...parent.metadata, labels: {} } } })).toEqual(denial('update'));
    expect(on({ operation: 'CREATE', oldObject: null, object: parent })).toEqual(denial('create'));
    expect(on({ operation: 'UPDATE', object: parent })).toMatchObject({ rule: 'allow-unlabelled' });
    expect(on({ operation: 'UPDATE', object: edited, user: { username: RECONCILER } })).toMatchObject({ rule: 'allow-unlabelled' });
    expect(on({ user: { username: 'system:serviceaccount:kube-system:namespace-controller' } })).toMatchObject({ rule: 'allow-unlabelled' });
    const mine = { ...parent, metadata: { ...parent.metadata, name: 'my-app' } };
    expect(on({ name: 'my-app', oldObject: mine })).toMatchObject({ rule: 'allow-unlabelled' });
  });
});

describe('spec.protect in a NamespaceTemplate', () => {
  const problems = (spec: Record<string, unknown>) => validateTemplate({ ...template(undefined), spec: { ...template(undefined).spec, ...spec } });
  it('is a boolean, default absent (false), and needs mode Enforce', () => {
    expect(problems({})).toEqual([]);
    expect(problems({ protect: true })).toEqual([]);
    expect(problems({ protect: false, mode: 'CreateOnly' })).toEqual([]);
    expect(problems({ protect: 'yes' })).toEqual([{ path: 'spec.protect', message: 'must be true or false, found "yes"' }]);
    expect(problems({ protect: true, mode: 'CreateOnly' })).toEqual([{ path: 'spec.protect', message: 'true needs mode Enforce: a CreateOnly template leaves its objects to the namespace, so a protected one could never change' }]);
  });
});

describe('protect-objects handler on what kube-apiserver sent', () => {
  const deps = (templates: NamespaceTemplate[]) => {
    const source = countingTemplates(templates);
    return { deps: { ...testDeps(), templates: source }, reads: source.reads };
  };

  it('refuses alice deleting and labelling the protected default-deny, reading its template once each; unlabelling it without a read, protected or not', async () => {
    const { deps: d, reads } = deps([template(true)]);
    const deleted = await protectObjects(applied('037-protect-DELETE-networkpolicies-default-deny-alice'), d);
    expect(deleted).toMatchObject({ allowed: false, status: { code: 403, reason: 'Forbidden', message: DENIAL_DELETE } });
    const labelled = await protectObjects(applied('034-protect-UPDATE-networkpolicies-default-deny-alice'), d);
    expect(labelled.status!.message).toMatch(/^user "alice" may not update NetworkPolicy "default-deny" in namespace "team-p": it belongs to NamespaceTemplate "security-defaults"/);
    expect(reads).toEqual(['security-defaults', 'security-defaults']);
    for (const templates of [[template(true)], [template(false)], []]) {
      const unlabelled = protectObjects(applied('035-protect-UPDATE-networkpolicies-default-deny-alice'), deps(templates).deps);
      expect(unlabelled).toMatchObject({ allowed: false, status: { code: 403, message: expect.stringContaining(`the request sets, changes or removes label ${KEY.template}.`) } });
    }
  });

  it('allows labelling and deleting when the template does not protect, or no longer exists', async () => {
    for (const templates of [[template(false)], [template(undefined)], []]) {
      const { deps: d } = deps(templates);
      for (const name of ['034-protect-UPDATE-networkpolicies-default-deny-alice', '037-protect-DELETE-networkpolicies-default-deny-alice'] as const) {
        expect(await protectObjects(applied(name), d)).toMatchObject({ allowed: true });
      }
    }
  });

  it('an object labelled furnish.dev/template without the ApplySet label Furnish applies is not Furnish\'s: passes, protected template or not', async () => {
    const { deps: d, reads } = deps([template(true)]);
    for (const name of ['034-protect-UPDATE-networkpolicies-default-deny-alice', '035-protect-UPDATE-networkpolicies-default-deny-alice', '037-protect-DELETE-networkpolicies-default-deny-alice'] as const) {
      expect(await protectObjects(admissionRequest(name), d)).toMatchObject({ allowed: true, auditAnnotations: { protect: expect.stringMatching(/^allow-not-furnish: /) } });
    }
    expect(reads).toEqual([]);
  });

  it('reads options.fieldManager: alice writing as furnish is refused', () => {
    const request = applied('034-protect-UPDATE-networkpolicies-default-deny-alice');
    request.options = { ...request.options, fieldManager: 'furnish' };
    expect(protectObjects(request, deps([]).deps)).toMatchObject({ allowed: false, status: { message: expect.stringContaining('the request writes as field manager "furnish"') } });
  });

  it("allows the reconciler's applies and the namespace controller's collection delete without a read, and synchronously", () => {
    const { deps: d, reads } = deps([template(true)]);
    for (const [name, rule] of [
      // Re-labelling what alice had unlabelled: the old object carried no label, so nothing to protect yet.
      ['036-protect-UPDATE-networkpolicies-default-deny-system_serviceaccount_furnish_system_furnish_reconciler', 'allow-unlabelled'],
      ['038-protect-UPDATE-networkpolicies-default-deny-system_serviceaccount_furnish_system_furnish_reconciler', 'allow-reconciler'],
      ['039-protect-DELETE-networkpolicies-default-deny-system_serviceaccount_kube_system_namespace_controller', 'allow-system-principals'],
    ] as const) {
      const response = protectObjects(applied(name), d);
      expect(response).not.toBeInstanceOf(Promise);
      expect(response).toMatchObject({ allowed: true, auditAnnotations: { protect: expect.stringMatching(new RegExp(`^${rule}: `)) } });
    }
    expect(reads).toEqual([]);
  });

  it('names the object from oldObject in a collection delete (the request has no name)', async () => {
    const request = applied('039-protect-DELETE-networkpolicies-default-deny-system_serviceaccount_kube_system_namespace_controller');
    request.userInfo = { username: 'alice' };
    const response = await protectObjects(request, deps([template(true)]).deps);
    expect(response.status!.message).toMatch(/^user "alice" may not delete NetworkPolicy "default-deny" in namespace "team-p": /);
  });

  it('fails closed with 503 when the template cannot be read; never for the reconciler', async () => {
    const broken: TemplateSource = { list: async () => Promise.reject(new Error('HTTP 500')), get: async () => Promise.reject(new Error('HTTP 500')) };
    const d = { ...testDeps(), templates: broken };
    const refused = await protectObjects(applied('037-protect-DELETE-networkpolicies-default-deny-alice'), d);
    expect(refused).toMatchObject({ allowed: false, status: { code: 503, message: 'could not read NamespaceTemplate "security-defaults", which decides whether NetworkPolicy "default-deny" is protected (HTTP 500); retry' } });
    expect(await protectObjects(applied('038-protect-UPDATE-networkpolicies-default-deny-system_serviceaccount_furnish_system_furnish_reconciler'), d)).toMatchObject({ allowed: true });
  });

  it('without get(), finds the template in the list; subresources and unlabelled objects pass', async () => {
    const d = testDeps({ templates: [template(true)] });
    expect(await HANDLERS['protect-objects'](applied('037-protect-DELETE-networkpolicies-default-deny-alice'), d)).toMatchObject({ allowed: false, status: { code: 403 } });
    const status: AdmissionRequest = { ...applied('034-protect-UPDATE-networkpolicies-default-deny-alice'), subResource: 'status' };
    expect(await protectObjects(status, d)).toMatchObject({ allowed: true });
    const own = applied('034-protect-UPDATE-networkpolicies-default-deny-alice');
    delete own.oldObject!.metadata.labels;
    own.object!.metadata.labels = Object.fromEntries(Object.entries(own.object!.metadata.labels!).filter(([k]) => k !== KEY.applySetPartOf));
    expect(await protectObjects(own, d)).toMatchObject({ allowed: true });
  });
});
