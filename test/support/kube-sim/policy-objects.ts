// ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding objects as kube-apiserver 1.32
// stores them: defaults (failurePolicy Fail; matchPolicy Equivalent, empty selectors and scope `*`
// in match resources) and the validation clients hit (required fields; CEL, webhooks'
// matchConditions too, that does not compile as far as cel-check.ts can tell: `1` as a
// validation, say, is accepted here, refused there).
import type { KubeObject } from '../../../shared/kube/types.ts';
import { compileErrors, declarations } from './cel-check.ts';
import type { FieldError } from './errors.ts';
import { isObject } from './fieldsets.ts';
import type { ResourceType } from './resources.ts';

const ADMISSION = 'admissionregistration.k8s.io';
const isPolicy = (t: ResourceType): boolean => t.group === ADMISSION && t.kind === 'ValidatingAdmissionPolicy';
const isBinding = (t: ResourceType): boolean => t.group === ADMISSION && t.kind === 'ValidatingAdmissionPolicyBinding';

function defaultMatchResources(m: unknown): void {
  if (!isObject(m)) return;
  m.matchPolicy ??= 'Equivalent';
  m.namespaceSelector ??= {};
  m.objectSelector ??= {};
  for (const rules of [m.resourceRules, m.excludeResourceRules]) {
    for (const rule of Array.isArray(rules) ? rules : []) if (isObject(rule)) rule.scope ??= '*';
  }
}

/** SetDefaults_ValidatingAdmissionPolicy(Spec), SetDefaults_MatchResources. */
export function defaultAdmissionPolicy(type: ResourceType, obj: KubeObject): void {
  if (!isPolicy(type) && !isBinding(type)) return;
  if (!isObject(obj.spec)) obj.spec = {};
  const spec = obj.spec as Record<string, unknown>;
  if (isPolicy(type)) {
    spec.failurePolicy ??= 'Fail';
    defaultMatchResources(spec.matchConstraints);
    obj.status ??= {};
  } else {
    defaultMatchResources(spec.matchResources);
  }
}

const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isObject) : []);

type Field = [field: string, expression: unknown, kind: 'policy' | 'message'];

/** `Invalid value: "object.(": compilation failed: ERROR: ...` for every expression that does not compile (cel-check.ts). */
function expressionErrors(spec: Record<string, unknown>): FieldError[] {
  const variableNames = list(spec.variables).map((v) => String(v.name));
  const fields: Field[] = [
    ...list(spec.validations).flatMap((v, i): Field[] => [[`spec.validations[${i}].expression`, v.expression, 'policy'], [`spec.validations[${i}].messageExpression`, v.messageExpression, 'message']]),
    ...list(spec.variables).map((v, i): Field => [`spec.variables[${i}].expression`, v.expression, 'policy']),
    ...list(spec.matchConditions).map((v, i): Field => [`spec.matchConditions[${i}].expression`, v.expression, 'policy']),
  ];
  return fields.flatMap(([field, expression, kind]) => {
    if (typeof expression !== 'string') return [];
    const errors = compileErrors(expression, declarations(kind, variableNames, spec.paramKind !== undefined));
    return errors ? [{ type: 'FieldValueInvalid', field, value: expression, detail: `compilation failed: ${errors}` } as FieldError] : [];
  });
}

function policyErrors(spec: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  if (!isObject(spec.matchConstraints)) errors.push({ type: 'FieldValueRequired', field: 'spec.matchConstraints', detail: '' });
  if (list(spec.validations).length === 0 && list(spec.auditAnnotations).length === 0) {
    const detail = 'validations or auditAnnotations must contain at least one item';
    errors.push({ type: 'FieldValueRequired', field: 'spec.validations', detail }, { type: 'FieldValueRequired', field: 'spec.auditAnnotations', detail });
  }
  return [...errors, ...expressionErrors(spec)];
}

function bindingErrors(spec: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  if (!spec.policyName) errors.push({ type: 'FieldValueRequired', field: 'spec.policyName', detail: '' });
  if (!Array.isArray(spec.validationActions) || spec.validationActions.length === 0) {
    errors.push({ type: 'FieldValueRequired', field: 'spec.validationActions', detail: 'at least one validation action is required' });
  }
  return errors;
}

/** Webhooks' matchConditions compile with object, oldObject, request, namespaceObject and authorizer. */
function webhookErrors(obj: KubeObject): FieldError[] {
  return list(obj.webhooks).flatMap((w, i) => list(w.matchConditions).flatMap((c, j): FieldError[] => {
    const errors = typeof c.expression === 'string' ? compileErrors(c.expression, declarations('webhook')) : undefined;
    return errors ? [{ type: 'FieldValueInvalid', field: `webhooks[${i}].matchConditions[${j}].expression`, value: c.expression, detail: `compilation failed: ${errors}` }] : [];
  }));
}

/** What the server refuses in a policy, a binding or a webhook configuration (its CEL). */
export function admissionConfigurationErrors(type: ResourceType, obj: KubeObject): FieldError[] {
  const spec = isObject(obj.spec) ? obj.spec : {};
  if (isPolicy(type)) return policyErrors(spec);
  if (isBinding(type)) return bindingErrors(spec);
  return type.group === ADMISSION && type.kind.endsWith('WebhookConfiguration') ? webhookErrors(obj) : [];
}
