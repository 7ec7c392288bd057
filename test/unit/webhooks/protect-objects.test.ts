// protect-objects: the rules on their own, then the handler on what kube-apiserver 1.26 really sent
// (test/fixtures/kube-apiserver-1.26/admission/034-039: a tenant labelling, unlabelling and deleting
// a template's NetworkPolicy, the reconciler re-applying it, the namespace controller deleting it).
import { describe, expect, it } from '@jest/globals';
import type { AdmissionRequest } from '../../../shared/admission/types.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { HANDLERS } from '../../../shared/webhooks/handlers/index.ts';
import { protectObjects } from '../../../shared/webhooks/handlers/protect-objects.ts';
import type { TemplateSource } from '../../../shared/webhooks/deps.ts';
import {
  appliedByFurnish,
  protectedContent,
  protectFirstStep,
  protectOutcome,
  templateOf,
  templateProtects,
  type ProtectInput,
} from '../../../shared/webhooks/rules/protect-objects.ts';
import { validateTemplate } from '../../../shared/render/validate.ts';
import { admissionRequest, namespaceTemplate, testDeps, testSettings } from '../../support/fixtures.ts';

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

function policy(labels: Record<string, string>, managers: string[] = ['furnish'], spec: Record<string, unknown> = { podSelector: {}, policyTypes: ['Ingress'] }): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'default-deny', namespace: 'team-a', labels, resourceVersion: '1', managedFields: managers.map((manager) => ({ manager, operation: 'Apply' })) },
    spec,
  };
}

const LABELLED = { 'furnish.dev/template': 'security-defaults' };

function input(over: Partial<ProtectInput>): ProtectInput {
  return { operation: 'DELETE', user: { username: 'alice' }, oldObject: policy(LABELLED), object: null, kind: 'NetworkPolicy', name: 'default-deny', namespace: 'team-a', settings, ...over };
}

/** A source that counts reads, to show which requests cost one. */
function countingTemplates(templates: NamespaceTemplate[]): TemplateSource & { reads: string[] } {
  const reads: string[] = [];
  return { reads, list: async () => templates, get: async (name) => (reads.push(name), templates.find((t) => t.metadata.name === name)) };
}

describe('protect-objects rules', () => {
  it('templateOf and appliedByFurnish: the label names the template, the field manager says Furnish wrote it', () => {
    expect(templateOf(policy(LABELLED))).toBe('security-defaults');
    expect(templateOf(policy({}))).toBeUndefined();
    expect(templateOf(policy({ 'furnish.dev/template': '' }))).toBeUndefined();
    expect(templateOf(null)).toBeUndefined();
    expect(appliedByFurnish(policy(LABELLED))).toBe(true);
    expect(appliedByFurnish(policy(LABELLED, ['kubectl-client-side-apply']))).toBe(false);
    expect(appliedByFurnish({ metadata: { managedFields: [null, 'x', { manager: 'furnish' }] } } as unknown as KubeObject)).toBe(true);
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
    expect(rule({ operation: 'CREATE', object: policy(LABELLED), oldObject: null })).toBe('allow-other-operations');
    expect(rule({ oldObject: policy({}) })).toBe('allow-unlabelled');
    expect(rule({ oldObject: policy(LABELLED, ['kubectl-client-side-apply']) })).toBe('allow-not-applied-by-furnish');
    expect(rule({ user: { username: RECONCILER } })).toBe('allow-reconciler');
    expect(rule({ user: { username: 'system:serviceaccount:kube-system:namespace-controller' } })).toBe('allow-system-principals');
    expect(rule({ user: { username: 'system:serviceaccount:kube-system:generic-garbage-collector' } })).toBe('allow-system-principals');
    expect(rule({ operation: 'UPDATE', object: { ...policy(LABELLED), status: { ok: true } } })).toBe('allow-unchanged');
    expect(rule({})).toBe('lookup security-defaults');
    expect(rule({ operation: 'UPDATE', object: policy({ ...LABELLED, team: 'blue' }) })).toBe('lookup security-defaults');
    // The old object decides: adding the label to one's own object is not judged, removing it is.
    expect(rule({ operation: 'UPDATE', oldObject: policy({}), object: policy(LABELLED) })).toBe('allow-unlabelled');
    expect(rule({ operation: 'UPDATE', object: policy({}) })).toBe('lookup security-defaults');
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

  it('outcome: the denial names the template and how to change the object; label changes say they are updates', () => {
    expect(protectOutcome(input({ namespace: 'team-p' }), 'security-defaults', template(true))).toEqual({ rule: 'protect-template-objects', deny: DENIAL_DELETE });
    const unlabel = protectOutcome(input({ operation: 'UPDATE', object: policy({}) }), 'security-defaults', template(true));
    expect(unlabel).toMatchObject({ deny: expect.stringContaining('may not update NetworkPolicy "default-deny" in namespace "team-a" (changing or removing label furnish.dev/template is an update of it too): it belongs to NamespaceTemplate "security-defaults"') });
    expect(protectOutcome(input({}), 'security-defaults', template(false))).toMatchObject({ rule: 'allow-unprotected', allow: 'NamespaceTemplate "security-defaults" does not protect its objects' });
    expect(protectOutcome(input({}), 'gone', undefined)).toMatchObject({ rule: 'allow-unprotected', allow: 'NamespaceTemplate "gone" does not exist' });
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

  it('refuses alice deleting, labelling and unlabelling the protected default-deny, reading its template once each', async () => {
    const { deps: d, reads } = deps([template(true)]);
    const deleted = await protectObjects(admissionRequest('037-protect-DELETE-networkpolicies-default-deny-alice'), d);
    expect(deleted).toMatchObject({ allowed: false, status: { code: 403, reason: 'Forbidden', message: DENIAL_DELETE } });
    const labelled = await protectObjects(admissionRequest('034-protect-UPDATE-networkpolicies-default-deny-alice'), d);
    expect(labelled.status!.message).toMatch(/^user "alice" may not update NetworkPolicy "default-deny" in namespace "team-p": it belongs to NamespaceTemplate "security-defaults"/);
    const unlabelled = await protectObjects(admissionRequest('035-protect-UPDATE-networkpolicies-default-deny-alice'), d);
    expect(unlabelled).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(unlabelled.status!.message).toContain('(changing or removing label furnish.dev/template is an update of it too)');
    expect(reads).toEqual(['security-defaults', 'security-defaults', 'security-defaults']);
  });

  it('allows the same requests when the template does not protect, or no longer exists', async () => {
    for (const templates of [[template(false)], [template(undefined)], []]) {
      const { deps: d } = deps(templates);
      for (const name of ['034-protect-UPDATE-networkpolicies-default-deny-alice', '035-protect-UPDATE-networkpolicies-default-deny-alice', '037-protect-DELETE-networkpolicies-default-deny-alice'] as const) {
        expect(await protectObjects(admissionRequest(name), d)).toMatchObject({ allowed: true });
      }
    }
  });

  it("allows the reconciler's applies and the namespace controller's collection delete without a read, and synchronously", () => {
    const { deps: d, reads } = deps([template(true)]);
    for (const [name, rule] of [
      // Re-labelling what alice had unlabelled: the old object carried no label, so nothing to protect yet.
      ['036-protect-UPDATE-networkpolicies-default-deny-system_serviceaccount_furnish_system_furnish_reconciler', 'allow-unlabelled'],
      ['038-protect-UPDATE-networkpolicies-default-deny-system_serviceaccount_furnish_system_furnish_reconciler', 'allow-reconciler'],
      ['039-protect-DELETE-networkpolicies-default-deny-system_serviceaccount_kube_system_namespace_controller', 'allow-system-principals'],
    ] as const) {
      const response = protectObjects(admissionRequest(name), d);
      expect(response).not.toBeInstanceOf(Promise);
      expect(response).toMatchObject({ allowed: true, auditAnnotations: { protect: expect.stringMatching(new RegExp(`^${rule}: `)) } });
    }
    expect(reads).toEqual([]);
  });

  it('names the object from oldObject in a collection delete (the request has no name)', async () => {
    const request = admissionRequest('039-protect-DELETE-networkpolicies-default-deny-system_serviceaccount_kube_system_namespace_controller');
    request.userInfo = { username: 'alice' };
    const response = await protectObjects(request, deps([template(true)]).deps);
    expect(response.status!.message).toMatch(/^user "alice" may not delete NetworkPolicy "default-deny" in namespace "team-p": /);
  });

  it('fails closed with 503 when the template cannot be read; never for the reconciler', async () => {
    const broken: TemplateSource = { list: async () => Promise.reject(new Error('HTTP 500')), get: async () => Promise.reject(new Error('HTTP 500')) };
    const d = { ...testDeps(), templates: broken };
    const refused = await protectObjects(admissionRequest('037-protect-DELETE-networkpolicies-default-deny-alice'), d);
    expect(refused).toMatchObject({ allowed: false, status: { code: 503, message: 'could not read NamespaceTemplate "security-defaults", which decides whether NetworkPolicy "default-deny" is protected (HTTP 500); retry' } });
    expect(await protectObjects(admissionRequest('038-protect-UPDATE-networkpolicies-default-deny-system_serviceaccount_furnish_system_furnish_reconciler'), d)).toMatchObject({ allowed: true });
  });

  it('without get(), finds the template in the list; subresources and unlabelled objects pass', async () => {
    const d = testDeps({ templates: [template(true)] });
    expect(await HANDLERS['protect-objects'](admissionRequest('037-protect-DELETE-networkpolicies-default-deny-alice'), d)).toMatchObject({ allowed: false, status: { code: 403 } });
    const status: AdmissionRequest = { ...admissionRequest('034-protect-UPDATE-networkpolicies-default-deny-alice'), subResource: 'status' };
    expect(await protectObjects(status, d)).toMatchObject({ allowed: true });
    const own = admissionRequest('034-protect-UPDATE-networkpolicies-default-deny-alice');
    delete own.oldObject!.metadata.labels;
    expect(await protectObjects(own, d)).toMatchObject({ allowed: true });
  });
});
