// kube-sim serving ValidatingAdmissionPolicies (and, with admissionPolicies: false, not serving
// them, as 1.26): discovery, the server's defaults and validation wording, and 1.26's handling of
// webhook matchConditions (dropped with a warning; 400 with fieldValidation=Strict). Answers as
// captured in test/fixtures/kube-apiserver-1.32/admission-policies.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCluster, type SimCluster } from '../../support/kube-sim/index.ts';
import { call } from '../../kube-sim/helpers.ts';

const GV = '/apis/admissionregistration.k8s.io/v1';
const RULES = [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }];
const WEBHOOKS = {
  apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'mc' },
  webhooks: [{ name: 'mc.sim.dev', clientConfig: { url: 'https://127.0.0.1:1/x' }, rules: RULES, sideEffects: 'None', admissionReviewVersions: ['v1'], matchConditions: [{ name: 'never', expression: 'false' }] }],
};

let on: SimCluster;
let off: SimCluster;

beforeAll(async () => {
  [on, off] = await Promise.all([startCluster({ admissionPolicies: true }), startCluster({ admissionPolicies: false })]);
});

afterAll(async () => {
  await Promise.all([on?.stop(), off?.stop()]);
});

const served = async (c: SimCluster): Promise<string[]> => ((await call(c, 'GET', GV)).body.resources as { name: string }[]).map((r) => r.name);

describe('with admission policies (1.30+)', () => {
  it('lists both kinds in discovery and stores them with the server\'s defaults', async () => {
    expect(await served(on)).toEqual(expect.arrayContaining(['validatingadmissionpolicies', 'validatingadmissionpolicies/status', 'validatingadmissionpolicybindings']));
    const created = await call(on, 'POST', `${GV}/validatingadmissionpolicies`, { body: { metadata: { name: 'p' }, spec: { matchConstraints: { resourceRules: RULES }, validations: [{ expression: 'true' }] } } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      kind: 'ValidatingAdmissionPolicy', metadata: { generation: 1 }, status: {},
      spec: { failurePolicy: 'Fail', matchConstraints: { matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, resourceRules: [{ ...RULES[0], scope: '*' }] } },
    });
    expect((await call(on, 'GET', `${GV}/validatingadmissionpolicies/p`)).status).toBe(200);
  });

  it('refuses invalid policies and bindings in the server\'s words', async () => {
    const invalid = async (plural: string, body: unknown) => (await call(on, 'POST', `${GV}/${plural}`, { body })).body.message as string;
    expect(await invalid('validatingadmissionpolicies', { metadata: { name: 'bad2' }, spec: { matchConstraints: { resourceRules: RULES } } }))
      .toBe('ValidatingAdmissionPolicy.admissionregistration.k8s.io "bad2" is invalid: [spec.validations: Required value: validations or auditAnnotations must contain at least one item, spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item]');
    expect(await invalid('validatingadmissionpolicies', { metadata: { name: 'bad3' }, spec: { validations: [{ expression: 'true' }] } }))
      .toBe('ValidatingAdmissionPolicy.admissionregistration.k8s.io "bad3" is invalid: spec.matchConstraints: Required value');
    expect(await invalid('validatingadmissionpolicies', { metadata: { name: 'bad1' }, spec: { matchConstraints: { resourceRules: RULES }, validations: [{ expression: 'object.(' }] } }))
      .toMatch(/^ValidatingAdmissionPolicy.admissionregistration.k8s.io "bad1" is invalid: spec.validations\[0\].expression: Invalid value: "object.\(": compilation failed: ERROR: /);
    expect(await invalid('validatingadmissionpolicybindings', { metadata: { name: 'bad6' }, spec: { policyName: 'x' } }))
      .toBe('ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "bad6" is invalid: spec.validationActions: Required value: at least one validation action is required');
    expect(await invalid('validatingadmissionpolicybindings', { metadata: { name: 'bad7' }, spec: { validationActions: ['Deny'] } }))
      .toBe('ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "bad7" is invalid: spec.policyName: Required value');
  });

  it('refuses CEL the server\'s compiler refuses: undeclared variables, fields request and variables do not declare', async () => {
    const policyWith = (expression: string) => ({ metadata: { name: 'probe-p' }, spec: { matchConstraints: { resourceRules: RULES }, variables: [{ name: 'v', expression: 'true' }], validations: [{ expression }] } });
    const refused = async (expression: string) => (await call(on, 'POST', `${GV}/validatingadmissionpolicies?dryRun=All`, { body: policyWith(expression) })).body.message as string;
    const prefix = (expression: string) => `ValidatingAdmissionPolicy.admissionregistration.k8s.io "probe-p" is invalid: spec.validations[0].expression: Invalid value: ${JSON.stringify(expression)}: compilation failed: `;
    expect(await refused('params == null')).toBe(`${prefix('params == null')}ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params == null\n | ^`);
    expect(await refused('variables.nope')).toBe(`${prefix('variables.nope')}ERROR: <input>:1:10: undefined field 'nope'\n | variables.nope\n | .........^`);
    expect(await refused("request.userInfo.foo == ''")).toBe(`${prefix("request.userInfo.foo == ''")}ERROR: <input>:1:17: undefined field 'foo'\n | request.userInfo.foo == ''\n | ................^`);
    const message = { ...policyWith('false'), spec: { ...policyWith('false').spec, validations: [{ expression: 'false', messageExpression: "authorizer.group('').resource('pods').check('get').reason()" }] } };
    expect((await call(on, 'POST', `${GV}/validatingadmissionpolicies?dryRun=All`, { body: message })).body.message).toContain("spec.validations[0].messageExpression: Invalid value: \"authorizer.group('').resource('pods').check('get').reason()\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'authorizer' (in container '')");
    const webhookWith = (expression: string) => ({ ...WEBHOOKS, metadata: { name: 'probe-x' }, webhooks: [{ ...WEBHOOKS.webhooks[0], matchConditions: [{ name: 'm', expression }] }] });
    expect((await call(on, 'POST', `${GV}/validatingwebhookconfigurations?dryRun=All`, { body: webhookWith("request.uid == ''") })).body.message)
      .toBe(`ValidatingWebhookConfiguration.admissionregistration.k8s.io "probe-x" is invalid: webhooks[0].matchConditions[0].expression: Invalid value: "request.uid == ''": compilation failed: ERROR: <input>:1:8: undefined field 'uid'\n | request.uid == ''\n | .......^`);
    for (const compiles of ['namespaceObject == null', "authorizer.group('').resource('pods').check('get').allowed()"]) {
      expect((await call(on, 'POST', `${GV}/validatingwebhookconfigurations?dryRun=All`, { body: webhookWith(compiles) })).status).toBe(201);
    }
  });

  it('keeps webhook matchConditions', async () => {
    const created = await call(on, 'POST', `${GV}/validatingwebhookconfigurations`, { body: WEBHOOKS });
    expect([created.status, created.body.webhooks[0].matchConditions, created.headers.warning]).toEqual([201, WEBHOOKS.webhooks[0]!.matchConditions, undefined]);
  });
});

describe('without admission policies (as 1.26)', () => {
  it('serves neither kind', async () => {
    expect(await served(off)).toEqual(['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']);
    expect((await call(off, 'GET', `${GV}/validatingadmissionpolicies`)).body).toMatchObject({ code: 404, message: 'the server could not find the requested resource' });
  });

  it('drops webhook matchConditions with 1.26\'s warning; refuses them with fieldValidation=Strict', async () => {
    const created = await call(off, 'POST', `${GV}/validatingwebhookconfigurations`, { body: WEBHOOKS });
    expect([created.status, created.body.webhooks[0].matchConditions, created.headers.warning]).toEqual([201, undefined, '299 - "unknown field \\"webhooks[0].matchConditions\\""']);
    const strict = await call(off, 'POST', `${GV}/validatingwebhookconfigurations?fieldValidation=Strict`, { body: { ...WEBHOOKS, metadata: { name: 'mc2' } } });
    expect([strict.status, strict.body.message]).toEqual([400, 'ValidatingWebhookConfiguration in version "v1" cannot be handled as a ValidatingWebhookConfiguration: strict decoding error: unknown field "webhooks[0].matchConditions"']);
  });
});
