// kube-sim's ValidatingAdmissionPolicy evaluator (test/support/kube-sim/policies.ts): each
// semantic of kube-apiserver 1.32 it reproduces. Expected wording was captured from a real
// 1.32.0-rc.0 (test/fixtures/kube-apiserver-1.32/admission-policies.json).
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { admitByPolicies, matchConditionsMatch, type AuthorizationAttributes, type Authorize, type PolicyAttributes, type UserInfo } from '../../support/kube-sim/policies.ts';

type Spec = Record<string, unknown>;

const CONFIGMAP_RULE = { apiGroups: [''], apiVersions: ['v1'], operations: ['*'], resources: ['configmaps'] };

function policy(spec: Spec, name = 'p'): KubeObject {
  return { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec: { matchConstraints: { resourceRules: [CONFIGMAP_RULE] }, ...spec } };
}

function binding(spec: Spec = {}, name = 'b', policyName = 'p'): KubeObject {
  return { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name }, spec: { policyName, validationActions: ['Deny'], ...spec } };
}

const ALICE: UserInfo = { username: 'alice', groups: ['dev', 'system:authenticated'] };
const TEAM = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', labels: { env: 'prod' } } };

function configMap(labels: Record<string, string> = {}, data: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'team', labels }, data };
}

function write(overrides: Partial<PolicyAttributes> = {}): PolicyAttributes {
  return {
    operation: 'CREATE', userInfo: ALICE, object: configMap(), oldObject: null, namespaceObject: TEAM,
    resource: { group: '', version: 'v1', resource: 'configmaps' }, name: 'cm', namespace: 'team',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' }, ...overrides,
  };
}

function namespaceWrite(overrides: Partial<PolicyAttributes> = {}): PolicyAttributes {
  const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', labels: { env: 'prod' } } };
  return write({
    object: ns, oldObject: ns, namespaceObject: null, resource: { group: '', version: 'v1', resource: 'namespaces' },
    name: 'team', namespace: undefined, kind: { group: '', version: 'v1', kind: 'Namespace' }, operation: 'UPDATE', ...overrides,
  });
}

const nobody: Authorize = () => false;

/** Judges one request with one policy `p` (bound by `b` unless bindings are given). */
function judge(spec: Spec, attrs = write(), authorize = nobody, bindings = [binding()]) {
  return admitByPolicies({ policies: [policy(spec)], bindings }, attrs, authorize);
}

/** Whether `expression` holds for the request (a validation that denies when it does not). */
function holds(expression: string, attrs = write(), authorize = nobody): boolean | string {
  const d = judge({ validations: [{ expression }] }, attrs, authorize);
  if (d.allowed) return true;
  return d.message.includes('failed expression') ? false : d.message;
}

const DENIED = "configmaps \"cm\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ";

describe('validations', () => {
  it('allows when every expression is true; the first false one denies with 422 Invalid and "failed expression: ..."', () => {
    expect(judge({ validations: [{ expression: 'true' }, { expression: "object.metadata.name == 'cm'" }] })).toEqual({ allowed: true, warnings: [] });
    expect(judge({ validations: [{ expression: 'true' }, { expression: ' 1 == 2 ' }, { expression: 'false', message: 'second' }] })).toEqual({
      allowed: false, status: 422, reason: 'Invalid', message: `${DENIED}failed expression: 1 == 2`,
      details: { name: 'cm', kind: 'configmaps', causes: [{ message: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: 1 == 2" }] },
    });
  });

  it('takes message, then messageExpression before it, and reason (Forbidden → 403)', () => {
    expect(judge({ validations: [{ expression: 'false', message: ' forbid label set ', reason: 'Forbidden' }] })).toMatchObject({ status: 403, reason: 'Forbidden', message: `${DENIED}forbid label set` });
    expect(judge({ validations: [{ expression: 'false', message: 'static', messageExpression: "'user ' + request.userInfo.username" }] })).toMatchObject({ message: `${DENIED}user alice` });
  });

  it('falls back to message when messageExpression fails, is not a string, spans lines, or asks the authorizer (not declared there)', () => {
    for (const messageExpression of ['object.nope', '1', "'a\\nb'", "authorizer.group('').resource('pods').check('get').reason()", "'  '"]) {
      expect(judge({ validations: [{ expression: 'false', message: 'static', messageExpression }] })).toMatchObject({ message: `${DENIED}static` });
    }
  });

  it('denies an evaluation error under failurePolicy Fail (the default) with cel-go\'s words, allows it under Ignore', () => {
    const spec = { validations: [{ expression: "object.metadata.labels['x'] == 'y'" }] };
    expect(judge(spec)).toMatchObject({ status: 422, reason: 'Invalid', message: `${DENIED}expression 'object.metadata.labels['x'] == 'y'' resulted in error: no such key: x` });
    expect(judge({ ...spec, failurePolicy: 'Ignore' })).toEqual({ allowed: true, warnings: [] });
  });
});

describe('variables', () => {
  it('are computed only when used (an unused failing variable changes nothing) and at most once', () => {
    let calls = 0;
    const counting: Authorize = () => { calls += 1; return true; };
    const variables = [{ name: 'broken', expression: 'object.nope' }, { name: 'may', expression: "authorizer.group('').resource('pods').check('get').allowed()" }];
    expect(judge({ variables, validations: [{ expression: 'variables.may' }, { expression: 'variables.may && true' }] }, write(), counting).allowed).toBe(true);
    expect(calls).toBe(1);
  });

  it('a failing variable fails the expression that uses it', () => {
    expect(judge({ variables: [{ name: 'v', expression: 'object.metadata.labels.x' }], validations: [{ expression: "variables.v == 'c'" }] }))
      .toMatchObject({ message: `${DENIED}expression 'variables.v == 'c'' resulted in error: composited variable "v" fails to evaluate: no such key: x` });
  });

  it('may use earlier variables', () => {
    const variables = [{ name: 'labels', expression: 'object.metadata.labels' }, { name: 'prod', expression: "'env' in variables.labels" }];
    expect(judge({ variables, validations: [{ expression: '!variables.prod' }] }, write({ object: configMap({ env: 'x' }) })).allowed).toBe(false);
    expect(judge({ variables, validations: [{ expression: '!variables.prod' }] }).allowed).toBe(true);
  });
});

describe('matchConstraints and matchResources', () => {
  const deny = { validations: [{ expression: 'false' }] };
  const matched = (constraints: Spec, attrs: PolicyAttributes) => !judge({ ...deny, matchConstraints: constraints }, attrs).allowed;
  const rule = (resources: string[], extra: Spec = {}) => ({ resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['*'], resources, ...extra }] });

  it('resources: `namespaces` not its subresources, `namespaces/status` only that one, `*` every resource, `*/*` everything', () => {
    const status = namespaceWrite({ subResource: 'status' });
    expect([matched(rule(['namespaces']), namespaceWrite()), matched(rule(['namespaces']), status)]).toEqual([true, false]);
    expect([matched(rule(['namespaces/status']), namespaceWrite()), matched(rule(['namespaces/status']), status), matched(rule(['namespaces/finalize']), status)]).toEqual([false, true, false]);
    expect([matched(rule(['*']), namespaceWrite()), matched(rule(['*']), status)]).toEqual([true, false]);
    expect([matched(rule(['*/*']), namespaceWrite()), matched(rule(['*/*']), status), matched(rule(['*/status']), status)]).toEqual([true, true, true]);
  });

  it('operations, scope (a Namespace is cluster-scoped) and resourceNames', () => {
    expect(matched(rule(['configmaps'], { operations: ['UPDATE'] }), write())).toBe(false);
    expect(matched(rule(['configmaps'], { operations: ['CREATE'] }), write())).toBe(true);
    expect(matched(rule(['*'], { scope: 'Namespaced' }), write())).toBe(true);
    expect(matched(rule(['*'], { scope: 'Namespaced' }), namespaceWrite())).toBe(false);
    expect(matched(rule(['*'], { scope: 'Cluster' }), namespaceWrite())).toBe(true);
    expect(matched(rule(['configmaps'], { resourceNames: ['other'] }), write())).toBe(false);
    expect(matched(rule(['configmaps'], { resourceNames: ['cm'] }), write())).toBe(true);
  });

  it('namespaceSelector: the namespace of a namespaced object; a Namespace\'s own new labels on CREATE/UPDATE, its stored ones on a subresource', () => {
    const prod = { ...rule(['*', '*/*']), namespaceSelector: { matchLabels: { env: 'prod' } } };
    expect(matched(prod, write())).toBe(true);
    expect(matched(prod, write({ namespaceObject: { ...TEAM, metadata: { name: 'team', labels: { env: 'dev' } } } }))).toBe(false);
    const relabelled = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', labels: { env: 'dev' } } };
    expect(matched(prod, namespaceWrite({ object: relabelled }))).toBe(false);
    expect(matched(prod, namespaceWrite({ object: relabelled, subResource: 'status' }))).toBe(true);
  });

  it('objectSelector: the new or the old object', () => {
    const selected = { ...rule(['configmaps']), objectSelector: { matchLabels: { team: 'a' } } };
    expect(matched(selected, write())).toBe(false);
    expect(matched(selected, write({ object: configMap({ team: 'a' }) }))).toBe(true);
    expect(matched(selected, write({ operation: 'DELETE', object: null, oldObject: configMap({ team: 'a' }) }))).toBe(true);
  });

  it('excludeResourceRules win over resourceRules', () => {
    expect(matched({ ...rule(['*']), excludeResourceRules: [{ apiGroups: [''], apiVersions: ['*'], operations: ['*'], resources: ['configmaps'] }] }, write())).toBe(false);
  });

  it('a binding\'s matchResources narrow what its policy matched', () => {
    const narrow = binding({ matchResources: { objectSelector: { matchLabels: { team: 'a' } } } });
    expect(judge(deny, write(), nobody, [narrow]).allowed).toBe(true);
    expect(judge(deny, write({ object: configMap({ team: 'a' }) }), nobody, [narrow]).allowed).toBe(false);
  });
});

describe('policy matchConditions', () => {
  const deny = { validations: [{ expression: 'false' }] };
  it('false leaves the request out; an error is the failurePolicy\'s', () => {
    expect(judge({ ...deny, matchConditions: [{ name: 'never', expression: 'false' }] }).allowed).toBe(true);
    expect(judge({ ...deny, matchConditions: [{ name: 'always', expression: 'true' }] }).allowed).toBe(false);
    expect(judge({ ...deny, matchConditions: [{ name: 'broken', expression: 'object.nope' }] })).toMatchObject({ message: `${DENIED}expression 'object.nope' resulted in error: no such key: nope` });
    expect(judge({ ...deny, failurePolicy: 'Ignore', matchConditions: [{ name: 'broken', expression: 'object.nope' }] }).allowed).toBe(true);
  });
});

describe('bindings and validationActions', () => {
  const deny = { validations: [{ expression: 'false', message: 'no' }] };
  it('a policy without a binding does nothing; a binding of a missing policy is ignored', () => {
    expect(judge(deny, write(), nobody, []).allowed).toBe(true);
    expect(judge(deny, write(), nobody, [binding({}, 'b', 'elsewhere')]).allowed).toBe(true);
  });

  it('Warn turns a failure into a warning, Audit into nothing, Deny and Warn both deny', () => {
    expect(judge(deny, write(), nobody, [binding({ validationActions: ['Warn'] })])).toEqual({ allowed: true, warnings: ["Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': no"] });
    expect(judge(deny, write(), nobody, [binding({ validationActions: ['Audit'] })])).toEqual({ allowed: true, warnings: [] });
    expect(judge(deny, write(), nobody, [binding({ validationActions: ['Warn', 'Deny'] })]).allowed).toBe(false);
  });

  it('the first denial in policy name order, then binding name order, answers', () => {
    const policies = [policy({ validations: [{ expression: 'false', message: 'from z' }] }, 'z'), policy({ validations: [{ expression: 'false', message: 'from a' }] }, 'a')];
    const d = admitByPolicies({ policies, bindings: [binding({}, 'bz', 'z'), binding({}, 'ba2', 'a'), binding({}, 'ba1', 'a')] }, write(), nobody);
    expect(d).toMatchObject({ message: "configmaps \"cm\" is forbidden: ValidatingAdmissionPolicy 'a' with binding 'ba1' denied request: from a" });
  });

  it('refuses, under failurePolicy Fail, a policy without matchConstraints and one with paramKind (kube-sim has no params)', () => {
    const none = admitByPolicies({ policies: [{ ...policy({ validations: [{ expression: 'true' }] }), spec: { validations: [{ expression: 'true' }] } }], bindings: [binding()] }, write(), nobody);
    expect(none).toMatchObject({ message: "configmaps \"cm\" is forbidden: ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: policy contained no match constraints, a required field" });
    expect(judge({ paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, validations: [{ expression: 'true' }] })).toMatchObject({ message: expect.stringContaining('kube-sim does not support paramKind') });
    expect(judge({ failurePolicy: 'Ignore', paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, validations: [{ expression: 'false' }] }).allowed).toBe(true);
  });

  it('names the object as the real server does: group-qualified resource, generateName when nameless', () => {
    const templates = write({ resource: { group: 'furnish.dev', version: 'v1', resource: 'namespacetemplates' }, name: '', object: { apiVersion: 'furnish.dev/v1', kind: 'NamespaceTemplate', metadata: { generateName: 't-' } } });
    const constraints = { resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'] }] };
    expect(judge({ matchConstraints: constraints, validations: [{ expression: 'false' }] }, templates)).toMatchObject({
      message: "namespacetemplates.furnish.dev \"t-\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: false",
      details: { name: 't-', group: 'furnish.dev', kind: 'namespacetemplates' },
    });
  });
});

describe('variables of an expression', () => {
  it('object is null on DELETE, oldObject on CREATE; params is null', () => {
    expect(holds('oldObject == null && object != null && params == null')).toBe(true);
    expect(holds('object == null && oldObject.metadata.name == "cm"', write({ operation: 'DELETE', object: null, oldObject: configMap() }))).toBe(true);
    expect(holds('object.metadata.name == "cm"', write({ operation: 'DELETE', object: null, oldObject: configMap() }))).toContain('no such key: metadata');
  });

  it('request: operation, userInfo, name, namespace, resource, kind, dryRun; subResource only on a subresource', () => {
    expect(holds("request.operation == 'CREATE' && request.userInfo.username == 'alice' && 'dev' in request.userInfo.groups && request.name == 'cm' && request.namespace == 'team'")).toBe(true);
    expect(holds("request.resource.resource == 'configmaps' && request.resource.group == '' && request.kind.kind == 'ConfigMap' && request.dryRun == false && !has(request.subResource)")).toBe(true);
    expect(holds('request.dryRun', write({ dryRun: true }))).toBe(true);
    expect(holds("request.subResource == 'status' && request.namespace == 'team'", namespaceWrite({ subResource: 'status' }))).toBe(true);
  });

  it('namespaceObject: the namespace of a namespaced object, null for a Namespace itself', () => {
    expect(holds("namespaceObject.metadata.labels.env == 'prod'")).toBe(true);
    expect(holds('namespaceObject == null', namespaceWrite())).toBe(true);
  });

  it('integers are int, JSON objects maps, ext strings and matches work', () => {
    const object = configMap({}, { replicas: 3, ratio: 0.5 });
    expect(holds('object.data.replicas + 1 == 4 && object.data.ratio == 0.5 && size(object.data) == 2', write({ object }))).toBe(true);
    expect(holds("'a, b'.split(',').map(s, s.trim()).join('-') == 'a-b' && 'AbC'.lowerAscii() == 'abc' && 'team'.indexOf('a') == 2 && 'team-x'.matches('^team-')")).toBe(true);
    expect(holds("object.metadata.labels.exists(k, k.startsWith('x')) || object.metadata.labels.all(k, k.endsWith('y'))")).toBe(true);
  });
});

describe('authorizer', () => {
  function recording(answer: boolean | { allowed: boolean; reason: string }) {
    const asked: [UserInfo, AuthorizationAttributes][] = [];
    const authorize: Authorize = (user, a) => { asked.push([user, a]); return answer; };
    return { asked, authorize };
  }

  it('asks the builder\'s attributes for the requester, and answers allowed() and reason()', () => {
    const { asked, authorize } = recording({ allowed: true, reason: 'RBAC: allowed by x' });
    expect(holds("authorizer.group('furnish.dev').resource('namespacetemplates').subresource('status').namespace('n').name('t').check('use').allowed()", write(), authorize)).toBe(true);
    expect(asked).toEqual([[ALICE, { group: 'furnish.dev', resource: 'namespacetemplates', subresource: 'status', namespace: 'n', name: 't', verb: 'use' }]]);
    expect(holds("authorizer.group('').resource('namespaces').check('optout').reason() == 'RBAC: allowed by x'", write(), authorize)).toBe(true);
    expect(asked[1]![1]).toEqual({ group: '', resource: 'namespaces', verb: 'optout' });
  });

  it('denies with allowed() false; requestResource is the request\'s own resource', () => {
    const { asked, authorize } = recording(false);
    expect(holds("authorizer.requestResource.check('create').allowed()", write(), authorize)).toBe(false);
    expect(asked[0]![1]).toEqual({ group: '', resource: 'configmaps', namespace: 'team', name: 'cm', verb: 'create' });
  });

  it('serviceAccount(ns, name) asks for that service account; path() a non-resource request', () => {
    const { asked, authorize } = recording(true);
    expect(holds("authorizer.serviceAccount('furnish-system', 'furnish-webhook').group('').resource('pods').check('get').allowed() && authorizer.path('/healthz').check('get').allowed()", write(), authorize)).toBe(true);
    expect(asked[0]![0]).toEqual({ username: 'system:serviceaccount:furnish-system:furnish-webhook', groups: ['system:serviceaccounts', 'system:serviceaccounts:furnish-system'] });
    expect(asked[1]![1]).toEqual({ group: '', resource: '', path: '/healthz', verb: 'get' });
  });

  it('cannot be forged from a map literal', () => {
    expect(holds("{'group': ''}.resource('pods').check('get').allowed()", write(), () => true)).toContain("found no matching overload for 'resource'");
  });
});

describe('matchConditionsMatch (webhooks)', () => {
  it('true when all hold; false when one is false, even if another errs; the error otherwise (several: [a, b])', () => {
    expect(matchConditionsMatch([{ name: 'a', expression: 'true' }, { name: 'b', expression: "request.userInfo.username == 'alice'" }], write(), nobody)).toBe(true);
    expect(matchConditionsMatch([{ name: 'a', expression: 'object.nope' }, { name: 'b', expression: 'false' }], write(), nobody)).toBe(false);
    expect(matchConditionsMatch([{ name: 'a', expression: 'object.x' }], write(), nobody)).toEqual(new Error("expression 'object.x' resulted in error: no such key: x"));
    expect(matchConditionsMatch([{ name: 'a', expression: 'object.x' }, { name: 'b', expression: 'object.y' }], write(), nobody))
      .toEqual(new Error("[expression 'object.x' resulted in error: no such key: x, expression 'object.y' resulted in error: no such key: y]"));
  });

  it('see object, oldObject, request and authorizer', () => {
    const allowAll: Authorize = () => true;
    expect(matchConditionsMatch([{ name: 'a', expression: "oldObject == null && object.metadata.name == 'cm' && request.operation == 'CREATE' && authorizer.group('').resource('pods').check('get').allowed()" }], write(), allowAll)).toBe(true);
  });
});
