// Object validation that clients of Furnish actually hit: names, label and annotation keys and
// values, the Event namespace rule, immutable roleRef. Messages are kube-apiserver's, word for word.
import type { KubeObject } from '../../../shared/kube/types.ts';
import { invalid, type FieldError } from './errors.ts';
import { isObject } from './fieldsets.ts';
import { admissionConfigurationErrors } from './policy-objects.ts';
import type { ResourceType } from './resources.ts';

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`;
const LABEL_VALUE = '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?';
const QUALIFIED_NAME = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';

const SUBDOMAIN_MESSAGE = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${DNS1123_SUBDOMAIN}')`;
const LABEL_MESSAGE = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '${DNS1123_LABEL}')`;
const LABEL_VALUE_MESSAGE = `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '${LABEL_VALUE}')`;
const QUALIFIED_NAME_MESSAGE = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${QUALIFIED_NAME}')`;

const whole = (pattern: string): RegExp => new RegExp(`^${pattern}$`);

/** Namespaces are DNS labels; RBAC objects are path segments; everything else DNS subdomains. */
function nameErrors(type: ResourceType, name: string): string[] {
  if (type.kind === 'Namespace' && !type.group) {
    const errors = whole(DNS1123_LABEL).test(name) ? [] : [LABEL_MESSAGE];
    if (name.length > 63) errors.unshift('must be no more than 63 characters');
    return errors;
  }
  if (type.group === 'rbac.authorization.k8s.io') {
    if (name === '.' || name === '..') return [`may not be '${name}'`];
    return /[/%]/.test(name) ? [`may not contain '${name.includes('/') ? '/' : '%'}'`] : [];
  }
  const errors = whole(DNS1123_SUBDOMAIN).test(name) ? [] : [SUBDOMAIN_MESSAGE];
  if (name.length > 253) errors.unshift('must be no more than 253 characters');
  return errors;
}

function qualifiedNameErrors(key: string): string[] {
  const parts = key.split('/');
  if (parts.length > 2) return [`a qualified name ${QUALIFIED_NAME_MESSAGE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  const [prefix, name] = parts.length === 2 ? parts : [undefined, parts[0]!];
  const errors: string[] = [];
  if (prefix !== undefined && (!whole(DNS1123_SUBDOMAIN).test(prefix) || prefix.length > 253)) errors.push(`prefix part ${SUBDOMAIN_MESSAGE}`);
  if (!name) errors.push('name part must be non-empty');
  else if (name.length > 63) errors.push('name part must be no more than 63 characters');
  else if (!whole(QUALIFIED_NAME).test(name)) errors.push(QUALIFIED_NAME_MESSAGE);
  return errors;
}

function metadataErrors(type: ResourceType, obj: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const name = obj.metadata.name ?? '';
  if (!name) {
    errors.push({ type: 'FieldValueRequired', field: 'metadata.name', detail: 'name or generateName is required' });
  } else {
    for (const detail of nameErrors(type, name)) errors.push({ type: 'FieldValueInvalid', field: 'metadata.name', detail, value: name });
  }
  for (const [key, value] of Object.entries(obj.metadata.labels ?? {})) {
    for (const detail of qualifiedNameErrors(key)) errors.push({ type: 'FieldValueInvalid', field: 'metadata.labels', detail, value: key });
    if (typeof value !== 'string' || value.length > 63 || !whole(LABEL_VALUE).test(value)) {
      const detail = typeof value === 'string' && value.length > 63 ? 'must be no more than 63 characters' : LABEL_VALUE_MESSAGE;
      errors.push({ type: 'FieldValueInvalid', field: `metadata.labels`, detail, value });
    }
  }
  for (const key of Object.keys(obj.metadata.annotations ?? {})) {
    for (const detail of qualifiedNameErrors(key.toLowerCase())) errors.push({ type: 'FieldValueInvalid', field: 'metadata.annotations', detail, value: key });
  }
  return errors;
}

/** core/v1 Events: involvedObject.namespace must equal the Event's namespace (or be empty in "default"). */
function eventErrors(obj: KubeObject): FieldError[] {
  const involved = (obj.involvedObject ?? {}) as { namespace?: string };
  const involvedNamespace = involved.namespace ?? '';
  const namespace = obj.metadata.namespace ?? '';
  const mismatch = involvedNamespace === '' ? namespace !== '' && namespace !== 'default' : involvedNamespace !== namespace;
  return mismatch ? [{ type: 'FieldValueInvalid', field: 'involvedObject.namespace', detail: 'does not match event.namespace', value: involvedNamespace }] : [];
}

const SUBJECT_KINDS = ['ServiceAccount', 'User', 'Group'];
const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** rbac/v1 Subjects (ValidateRoleBindingSubject): a name always, a known kind, its apiGroup; a ClusterRoleBinding's ServiceAccount needs a namespace. */
function subjectErrors(obj: KubeObject, clusterScoped: boolean): FieldError[] {
  const subjects = Array.isArray(obj.subjects) ? (obj.subjects as Array<Record<string, unknown>>) : [];
  return subjects.flatMap((s, i): FieldError[] => {
    const at = `subjects[${i}]`;
    const errors: FieldError[] = [];
    if (!s.name) errors.push({ type: 'FieldValueRequired', field: `${at}.name`, detail: '' });
    const kind = String(s.kind ?? '');
    if (!SUBJECT_KINDS.includes(kind)) {
      errors.push({ type: 'FieldValueNotSupported', field: `${at}.kind`, detail: `supported values: ${SUBJECT_KINDS.map((k) => `"${k}"`).join(', ')}`, value: kind });
    } else if (kind === 'ServiceAccount') {
      if (s.apiGroup) errors.push({ type: 'FieldValueNotSupported', field: `${at}.apiGroup`, detail: 'supported values: ""', value: s.apiGroup });
      if (clusterScoped && !s.namespace) errors.push({ type: 'FieldValueRequired', field: `${at}.namespace`, detail: '' });
    } else if (s.apiGroup !== RBAC_GROUP) {
      errors.push({ type: 'FieldValueNotSupported', field: `${at}.apiGroup`, detail: `supported values: "${RBAC_GROUP}"`, value: s.apiGroup });
    }
    return errors;
  });
}

/** SetDefaults_NetworkPolicy: ports without a protocol get TCP; no policyTypes: Ingress, and Egress when it has egress rules. */
export function defaultNetworkPolicy(type: ResourceType, obj: KubeObject): void {
  if (type.group !== 'networking.k8s.io' || type.kind !== 'NetworkPolicy' || !isObject(obj.spec)) return;
  const spec = obj.spec;
  for (const rule of [...asList(spec.ingress), ...asList(spec.egress)]) {
    for (const port of asList(isObject(rule) ? rule.ports : undefined)) if (isObject(port) && !port.protocol) port.protocol = 'TCP';
  }
  if (asList(spec.policyTypes).length === 0) spec.policyTypes = asList(spec.egress).length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** SetDefaults_Subject: User and Group subjects get apiGroup rbac.authorization.k8s.io. */
export function defaultSubjects(type: ResourceType, obj: KubeObject): void {
  if (type.group !== RBAC_GROUP || !Array.isArray(obj.subjects)) return;
  for (const s of obj.subjects as Array<Record<string, unknown>>) {
    if ((s.kind === 'User' || s.kind === 'Group') && !s.apiGroup) s.apiGroup = RBAC_GROUP;
  }
}

const KIND_RULES: Record<string, (obj: KubeObject) => FieldError[]> = {
  Event: eventErrors,
  RoleBinding: (o) => subjectErrors(o, false),
  ClusterRoleBinding: (o) => subjectErrors(o, true),
};

export function validateObject(type: ResourceType, obj: KubeObject): void {
  const rules = type.group === '' || type.group === RBAC_GROUP ? KIND_RULES[type.kind] : undefined;
  const errors = [...metadataErrors(type, obj), ...(rules?.(obj) ?? []), ...admissionConfigurationErrors(type, obj)];
  if (errors.length > 0) throw invalid(type.group, type.kind, obj.metadata.name ?? '', errors);
}

export function validateUpdate(type: ResourceType, live: KubeObject, next: KubeObject): void {
  const errors: FieldError[] = [];
  if ((type.kind === 'RoleBinding' || type.kind === 'ClusterRoleBinding') && JSON.stringify(live.roleRef) !== JSON.stringify(next.roleRef)) {
    errors.push({ type: 'FieldValueInvalid', field: 'roleRef', detail: 'cannot change roleRef', value: next.roleRef });
  }
  if (errors.length > 0) throw invalid(type.group, type.kind, next.metadata.name ?? '', errors);
  validateObject(type, next);
}
