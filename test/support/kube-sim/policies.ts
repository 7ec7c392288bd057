// ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1) and webhook matchConditions, as
// kube-apiserver 1.32 evaluates them (k8s.io/apiserver/pkg/admission/plugin/policy/validating):
// every policy whose matchConstraints select the request, for each binding whose matchResources
// do: the policy's matchConditions, then its validations (variables computed lazily), each
// failure or evaluation error acted on by the binding's validationActions (Deny: the first one
// refuses the request; Warn: a warning; Audit: nothing here) and the policy's failurePolicy.
// Pure: the caller gives the objects, the request and an authorizer (cel.ts).
import type { KubeObject, LabelSelector, StringMap } from '../../../shared/kube/types.ts';
import { authorizerValue, evaluate, LazyMap, toCelValue, type Authorize, type Bindings, type UserInfo } from './cel.ts';
import { isNamespaceRequest, namespaceSelectorMatches, objectSelectorMatches, ruleMatches, type MatchRequest, type Rule } from './rules.ts';

export type { Authorize, AuthorizationAttributes, UserInfo } from './cel.ts';

export interface PolicyAttributes {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo: UserInfo;
  /** null on DELETE. */
  object: KubeObject | null;
  /** null on CREATE. */
  oldObject: KubeObject | null;
  /** The namespace a namespaced object is in; null for cluster-scoped objects and Namespaces themselves. */
  namespaceObject: KubeObject | null;
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  /** The object's name (a generated name once generateName has been applied). */
  name: string;
  /** The object's namespace; for a request on a Namespace, its name (as the real server sets it) when left out. */
  namespace?: string;
  kind: { group: string; version: string; kind: string };
  dryRun?: boolean;
  /** CreateOptions, UpdateOptions or DeleteOptions, as `request.options`. */
  options?: Record<string, unknown>;
}

export interface MatchCondition {
  name: string;
  expression: string;
}

export type PolicyDecision = { allowed: true; warnings: string[] } | {
  allowed: false;
  status: number;
  reason: string;
  message: string;
  /** The Status details kube-apiserver sends with the denial. */
  details: { name: string; group?: string; kind: string; causes: { message: string }[] };
};

interface NamedRule extends Rule {
  resourceNames?: string[];
}

interface MatchResources {
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  resourceRules?: NamedRule[];
  excludeResourceRules?: NamedRule[];
  matchPolicy?: 'Exact' | 'Equivalent';
}

interface PolicySpec {
  failurePolicy?: 'Fail' | 'Ignore';
  paramKind?: unknown;
  matchConstraints?: MatchResources;
  matchConditions?: MatchCondition[];
  variables?: { name: string; expression: string }[];
  validations?: { expression: string; message?: string; messageExpression?: string; reason?: string }[];
}

interface BindingSpec {
  policyName?: string;
  paramRef?: unknown;
  matchResources?: MatchResources;
  validationActions?: ('Deny' | 'Warn' | 'Audit')[];
}

/** A validation that did not pass (or could not be evaluated under failurePolicy Fail). */
interface Failure {
  message: string;
  reason: string;
}

const INVALID = 'Invalid';
/** MaxEvaluatedMessageExpressionSizeBytes. */
const MAX_MESSAGE_BYTES = 5 * 1024;

function matchRequest(a: PolicyAttributes): MatchRequest {
  return {
    operation: a.operation, group: a.resource.group, version: a.resource.version, resource: a.resource.resource,
    ...(a.subResource ? { subresource: a.subResource } : {}),
    ...(requestNamespace(a) ? { namespace: requestNamespace(a) } : {}),
    object: a.object, oldObject: a.oldObject,
  };
}

function requestNamespace(a: PolicyAttributes): string | undefined {
  return a.namespace ?? (isNamespaceRequest(a.resource) ? a.name : undefined);
}

function namedRulesMatch(rules: NamedRule[] | undefined, r: MatchRequest, name: string): boolean {
  return (rules ?? []).some((rule) => ruleMatches(rule, r) && (!rule.resourceNames?.length || rule.resourceNames.includes(name)));
}

/** matchConstraints / matchResources (matchPolicy Equivalent is Exact here: kube-sim serves one version per kind). */
function resourcesMatch(m: MatchResources, a: PolicyAttributes, storedNamespaceLabels: () => StringMap | undefined): boolean {
  const r = matchRequest(a);
  return namespaceSelectorMatches(m.namespaceSelector, r, storedNamespaceLabels) && objectSelectorMatches(m.objectSelector, r)
    && !namedRulesMatch(m.excludeResourceRules, r, a.name)
    && (!m.resourceRules?.length || namedRulesMatch(m.resourceRules, r, a.name));
}

/**
 * The `request` variable: the fields of an admission.k8s.io/v1 AdmissionRequest kube-apiserver's
 * type declares (BuildRequestType: no uid, object or oldObject), empty ones left out.
 */
export function requestOf(a: PolicyAttributes): Record<string, unknown> {
  const namespace = requestNamespace(a);
  const { username, uid, groups, extra } = a.userInfo;
  const userInfo = {
    ...(username ? { username } : {}), ...(uid ? { uid } : {}), ...(groups?.length ? { groups } : {}), ...(extra && Object.keys(extra).length ? { extra } : {}),
  };
  return {
    kind: a.kind, resource: a.resource, ...(a.subResource ? { subResource: a.subResource } : {}),
    requestKind: a.kind, requestResource: a.resource, ...(a.subResource ? { requestSubResource: a.subResource } : {}),
    ...(a.name ? { name: a.name } : {}), ...(namespace ? { namespace } : {}),
    operation: a.operation, userInfo, dryRun: a.dryRun ?? false, ...(a.options ? { options: a.options } : {}),
  };
}

/** The variables every expression sees (variables.* added per policy). */
function bindingsOf(a: PolicyAttributes, authorize: Authorize): Bindings {
  const request = requestOf(a);
  const requestResource = {
    group: a.resource.group, resource: a.resource.resource,
    ...(a.subResource ? { subresource: a.subResource } : {}),
    ...(requestNamespace(a) ? { namespace: requestNamespace(a) } : {}),
    ...(a.name ? { name: a.name } : {}),
  };
  return {
    object: toCelValue(a.object), oldObject: toCelValue(a.oldObject), request: toCelValue(request),
    namespaceObject: toCelValue(a.namespaceObject), params: null,
    authorizer: authorizerValue(a.userInfo, authorize, requestResource),
  };
}

function resultError(expression: string, error: Error): Error {
  return error.message.startsWith('compilation error: ') ? error : new Error(`expression '${expression}' resulted in error: ${error.message}`);
}

/** `variables`: each computed at its first use, at most once (an error fails every expression that uses it). */
function withVariables(bindings: Bindings, variables: PolicySpec['variables']): Bindings {
  const all: Bindings = { ...bindings };
  all.variables = new LazyMap((variables ?? []).map((v) => [v.name, () => {
    const value = evaluate(v.expression, all);
    if (value instanceof Error) throw new Error(`composited variable "${v.name}" fails to evaluate: ${value.message}`);
    return value;
  }]));
  return all;
}

/**
 * kube-apiserver's matchConditions: any false → false (even when another errored); otherwise
 * any error → an Error (several: `[a, b]`, as utilerrors.NewAggregate); otherwise true.
 */
function conditionsMatch(conditions: MatchCondition[], bindings: Bindings): boolean | Error {
  const errors: string[] = [];
  for (const condition of conditions) {
    const result = evaluate(condition.expression, bindings);
    if (result instanceof Error) errors.push(resultError(condition.expression, result).message);
    else if (result === false) return false;
    else if (result !== true) errors.push(`expression '${condition.expression}' resulted in non-boolean value`);
  }
  if (errors.length === 0) return true;
  return new Error(errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);
}

/** A webhook's matchConditions (ValidatingWebhook, MutatingWebhook): object, oldObject, request, authorizer (namespaceObject: null). */
export function matchConditionsMatch(conditions: MatchCondition[], attrs: PolicyAttributes, authorize: Authorize): boolean | Error {
  const { object, oldObject, request, authorizer } = bindingsOf(attrs, authorize);
  return conditionsMatch(conditions, { object, oldObject, request, authorizer, namespaceObject: null });
}

/** The message of a failed validation: messageExpression's string, else message, else the expression. */
function failureMessage(v: NonNullable<PolicySpec['validations']>[number], bindings: Bindings): string {
  if (v.messageExpression) {
    // messageExpression has no authorizer (kube-apiserver does not declare it there).
    const { authorizer: _, ...withoutAuthorizer } = bindings;
    const value = evaluate(v.messageExpression, withoutAuthorizer);
    if (typeof value === 'string') {
      const message = value.trim();
      if (message !== '' && !message.includes('\n') && Buffer.byteLength(message) <= MAX_MESSAGE_BYTES) return message;
    }
  }
  return v.message?.trim() || `failed expression: ${v.expression.trim()}`;
}

/** The policy's failures for this request: [] when it allows (or its matchConditions leave the request out). */
function validate(spec: PolicySpec, bindings: Bindings): Failure[] {
  const onError = (error: Error): Failure[] => (spec.failurePolicy === 'Ignore' ? [] : [{ message: error.message, reason: INVALID }]);
  const all = withVariables(bindings, spec.variables);
  const matched = conditionsMatch(spec.matchConditions ?? [], all);
  if (matched instanceof Error) return onError(matched);
  if (!matched) return [];
  return (spec.validations ?? []).flatMap((v) => {
    const result = evaluate(v.expression, all);
    if (result instanceof Error) return onError(resultError(v.expression, result));
    if (result === true) return [];
    return [{ message: failureMessage(v, all), reason: v.reason ?? INVALID }];
  });
}

function byName(x: KubeObject, y: KubeObject): number {
  return (x.metadata.name ?? '') < (y.metadata.name ?? '') ? -1 : 1;
}

/** reasonToCode of the validating policy plugin. */
function codeOf(reason: string): number {
  return { Forbidden: 403, Unauthorized: 401, RequestEntityTooLarge: 413 }[reason] ?? 422;
}

/** As admission.NewForbidden names the object: its name, else generateName, else `Unknown`. */
function objectName(a: PolicyAttributes): string {
  return a.name || a.object?.metadata.name || a.object?.metadata.generateName || 'Unknown';
}

function denial(a: PolicyAttributes, text: string, reason: string): PolicyDecision {
  const { group, resource } = a.resource;
  const name = objectName(a);
  return {
    allowed: false, status: codeOf(reason), reason,
    message: `${group ? `${resource}.${group}` : resource} "${name}" is forbidden: ${text}`,
    details: { name, ...(group ? { group } : {}), kind: resource, causes: [{ message: text }] },
  };
}

/**
 * Every ValidatingAdmissionPolicy and binding, in name order, judged against one request; the
 * first Deny refuses it with kube-apiserver's status, reason and message. A binding whose policy
 * does not exist is ignored (as the real server does); a policy with paramKind is a configuration
 * error subject to its failurePolicy (kube-sim has no params).
 */
export function admitByPolicies(objects: { policies: KubeObject[]; bindings: KubeObject[] }, attrs: PolicyAttributes, authorize: Authorize): PolicyDecision {
  const warnings: string[] = [];
  const storedNamespaceLabels = (): StringMap | undefined => (isNamespaceRequest(attrs.resource) ? attrs.oldObject : attrs.namespaceObject)?.metadata.labels;
  let bindings: Bindings | undefined;
  for (const policy of [...objects.policies].sort(byName)) {
    const spec = (policy.spec ?? {}) as PolicySpec;
    const denied = (text: string, reason = INVALID): PolicyDecision => denial(attrs, `ValidatingAdmissionPolicy '${policy.metadata.name}' ${text}`, reason);
    if (!spec.matchConstraints) {
      if (spec.failurePolicy !== 'Ignore') return denied('denied request: failed to configure policy: policy contained no match constraints, a required field');
      continue;
    }
    if (!resourcesMatch(spec.matchConstraints, attrs, storedNamespaceLabels)) continue;
    let failures: Failure[] | undefined;
    for (const binding of objects.bindings.filter((b) => (b.spec as BindingSpec | undefined)?.policyName === policy.metadata.name).sort(byName)) {
      const bspec = binding.spec as BindingSpec;
      if (bspec.matchResources && !resourcesMatch(bspec.matchResources, attrs, storedNamespaceLabels)) continue;
      const who = `with binding '${binding.metadata.name}'`;
      if (spec.paramKind !== undefined) {
        if (spec.failurePolicy !== 'Ignore') return denied(`${who} denied request: failed to configure binding: kube-sim does not support paramKind (params are always null)`);
        continue;
      }
      bindings ??= bindingsOf(attrs, authorize);
      failures ??= validate(spec, bindings);
      for (const failure of failures) {
        if (bspec.validationActions?.includes('Deny')) return denied(`${who} denied request: ${failure.message}`, failure.reason);
        if (bspec.validationActions?.includes('Warn')) warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policy.metadata.name}' ${who}: ${failure.message}`);
      }
    }
  }
  return { allowed: true, warnings };
}
