// What every verb shares: the request and reply, reading the request (dry run, manager, body,
// kind, name and namespace), NamespaceLifecycle, decode-time defaults, admission attributes.
import type { KubeObject } from '../../../../shared/kube/types.ts';
import type { AdmissionAttributes, Operation } from '../admission.ts';
import type { Authenticated } from '../authn.ts';
import { ApiError, badRequest, forbidden, notFound, statusError } from '../errors.ts';
import { isObject } from '../fieldsets.ts';
import type { WriteContext } from '../managed-fields.ts';
import { defaultAdmissionPolicy } from '../policy-objects.ts';
import { hasInvalidQuantity, normaliseQuantities } from '../quantity.ts';
import { sortQuotaLists } from '../quota-usage.ts';
import { apiVersionOf, groupResource, type ResourceType } from '../resources.ts';
import type { Sim } from '../sim.ts';
import { defaultNetworkPolicy, defaultSubjects } from '../validation.ts';

export interface ApiRequest {
  verb: string;
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
  query: URLSearchParams;
  body?: unknown;
  contentType?: string;
  /** The Accept header: a Table (tables.ts) or the object itself. */
  accept?: string;
  user: Authenticated;
  userAgent: string;
}

export interface ApiReply {
  status: number;
  body: unknown;
  warnings?: string[];
}

// --- small helpers -------------------------------------------------------------------------

export const isNamespaceType = (t: ResourceType): boolean => t.kind === 'Namespace' && t.group === '';
export const isCrdType = (t: ResourceType): boolean => t.kind === 'CustomResourceDefinition';
export const isQuotaType = (t: ResourceType): boolean => t.kind === 'ResourceQuota' && t.group === '';

export function dryRunOf(req: ApiRequest): boolean {
  const values = req.query.getAll('dryRun');
  if (values.some((v) => v !== 'All')) throw badRequest(`Invalid dry run value: ${values.join(',')}`);
  return values.length > 0;
}

/** The manager of a write: `?fieldManager=`, else the User-Agent up to its first `/`. */
export function managerOf(req: ApiRequest): string {
  return req.query.get('fieldManager') || req.userAgent.split('/')[0]!.slice(0, 128) || 'unknown';
}

export function writeContext(req: ApiRequest): WriteContext {
  return { type: req.type, manager: managerOf(req), ...(req.subresource ? { subresource: req.subresource } : {}) };
}

export function requestOptions(kind: 'CreateOptions' | 'UpdateOptions', req: ApiRequest): Record<string, unknown> {
  const options: Record<string, unknown> = { kind, apiVersion: 'meta.k8s.io/v1' };
  if (req.query.getAll('dryRun').length > 0) options.dryRun = req.query.getAll('dryRun');
  if (req.query.get('fieldManager')) options.fieldManager = req.query.get('fieldManager');
  if (req.query.get('fieldValidation')) options.fieldValidation = req.query.get('fieldValidation');
  return options;
}

export function bodyObject(req: ApiRequest): KubeObject {
  if (!isObject(req.body)) throw badRequest('the body of the request must be a JSON or YAML object');
  const obj = structuredClone(req.body) as KubeObject;
  if (!isObject(obj.metadata)) obj.metadata = {};
  return obj;
}

/** apiVersion and kind must be those of the URL when given; they are filled in when absent. */
export function checkKind(type: ResourceType, obj: KubeObject): void {
  const expected = apiVersionOf(type);
  if (obj.apiVersion && obj.apiVersion !== expected) {
    throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${expected})`);
  }
  if (obj.kind && obj.kind !== type.kind) throw badRequest(`the kind in the data (${obj.kind}) does not match the expected kind (${type.kind})`);
  obj.apiVersion = expected;
  obj.kind = type.kind;
}

export function checkNamespaceOfBody(req: ApiRequest, obj: KubeObject): void {
  if (!req.type.namespaced) {
    delete obj.metadata.namespace;
    return;
  }
  if (obj.metadata.namespace && obj.metadata.namespace !== req.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  obj.metadata.namespace = req.namespace;
}

export function checkNameOfBody(req: ApiRequest, obj: KubeObject): void {
  if (obj.metadata.name && obj.metadata.name !== req.name) {
    throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${req.name})`);
  }
  obj.metadata.name = req.name;
}

/** NamespaceLifecycle: no objects in a missing namespace, no new ones in a terminating one. */
export function checkNamespaceLifecycle(sim: Sim, req: ApiRequest, operation: Operation, name: string): void {
  if (!req.type.namespaced || !req.namespace) return;
  const namespace = sim.namespace(req.namespace);
  if (!namespace) throw notFound({ group: '', resource: 'namespaces' }, req.namespace);
  if (operation === 'CREATE' && namespace.metadata.deletionTimestamp) {
    const message = `unable to create new content in namespace ${req.namespace} because it is being terminated`;
    const error = forbidden(groupResource(req.type), name, message);
    error.status.details!.causes = [{ reason: 'NamespaceTerminating', message, field: 'metadata.namespace' }];
    throw error;
  }
}

/**
 * Defaulting that runs on decode: quantities in canonical form (built-in kinds), RBAC subjects'
 * apiGroup, a NetworkPolicy's port protocols and policyTypes, a quota's resource lists in key
 * order, the namespace name label and phase (SetDefaults_Namespace).
 */
export function applyDefaults(sim: Sim, type: ResourceType, obj: KubeObject): void {
  if (!type.crdName) {
    normaliseQuantities(type.group, type.kind, obj);
    defaultSubjects(type, obj);
    defaultNetworkPolicy(type, obj);
    defaultAdmissionPolicy(type, obj);
  }
  if (isQuotaType(type)) sortQuotaLists(obj);
  if (!isNamespaceType(type)) return;
  // Like SetDefaults_Namespace: a generateName namespace has no name yet, so no name label either.
  if (sim.options.metadataNameLabel && obj.metadata.name) obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name! };
  if (!isObject(obj.spec)) obj.spec = {};
  obj.status = { phase: 'Active', ...(isObject(obj.status) ? obj.status : {}) };
}

const WEBHOOK_CONFIGURATIONS = new Set(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);

/**
 * A server without in-tree policies (1.26) does not know webhooks' `matchConditions`: it drops
 * them with a warning `unknown field "webhooks[0].matchConditions"` (none with
 * fieldValidation=Ignore; 400 with Strict). Returns the warnings.
 */
export function dropUnknownWebhookFields(sim: Sim, req: ApiRequest, obj: KubeObject): string[] {
  if (sim.options.admissionPolicies || req.type.group !== 'admissionregistration.k8s.io' || !WEBHOOK_CONFIGURATIONS.has(req.type.kind)) return [];
  const webhooks = Array.isArray(obj.webhooks) ? (obj.webhooks as Record<string, unknown>[]) : [];
  const unknown = webhooks.flatMap((w, i) => (isObject(w) && 'matchConditions' in w ? [`unknown field "webhooks[${i}].matchConditions"`] : []));
  if (unknown.length === 0) return [];
  const validation = req.query.get('fieldValidation');
  if (validation === 'Strict') throw badRequest(`${req.type.kind} in version "${req.type.version}" cannot be handled as a ${req.type.kind}: strict decoding error: ${unknown.join(', ')}`);
  for (const w of webhooks) if (isObject(w)) delete w.matchConditions;
  return validation === 'Ignore' ? [] : unknown;
}

/** Custom resources are unstructured maps on the server, which encodes them with keys sorted. */
export function sortedKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortedKeys) as T;
  if (!isObject(value)) return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(Object.keys(record).sort().map((k) => [k, sortedKeys(record[k])])) as T;
}

export function admissionAttributes(req: ApiRequest, operation: Operation, object: KubeObject | null, oldObject: KubeObject | null, options: Record<string, unknown>, dryRun: boolean): AdmissionAttributes {
  const name = (object ?? oldObject)?.metadata.name ?? req.name;
  return {
    operation, type: req.type, object, oldObject, user: req.user, dryRun, options,
    ...(req.subresource ? { subresource: req.subresource } : {}),
    ...(req.namespace ? { namespace: req.namespace } : {}),
    ...(name ? { name } : {}),
  };
}

/** kube-apiserver's words for a quantity that does not parse (resource.ParseQuantity). */
const QUANTITY_SYNTAX = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/**
 * A built-in object whose quantities do not all parse cannot be decoded, and the real server says
 * so in the words of where it failed: a create or update body, 400; a server-side apply, 500 (the
 * conversion of the applied object); a patch, 422 on the patched object
 * (test/fixtures/kube-apiserver-1.26/api/quantity-invalid-*.http).
 */
export function checkQuantities(type: ResourceType, obj: KubeObject, how: 'body' | 'apply' | 'patch', sent?: unknown): void {
  if (type.crdName || !hasInvalidQuantity(type.group, type.kind, obj)) return;
  const gv = `${type.group}/${type.version}`;
  if (how === 'body') throw badRequest(`${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: ${QUANTITY_SYNTAX}`);
  // An apply names the namespace its body gave (none: empty), before the URL's is filled in.
  const namespace = isObject(sent) && isObject(sent.metadata) && typeof sent.metadata.namespace === 'string' ? sent.metadata.namespace : '';
  if (how === 'apply') throw statusError(500, `failed to convert new object (${namespace}/${obj.metadata.name ?? ''}; ${gv}, Kind=${type.kind}) to proper version: unable to convert unstructured object to ${gv}, Kind=${type.kind}: ${QUANTITY_SYNTAX}`);
  const value = `Invalid value: ${JSON.stringify(JSON.stringify(obj))}: ${QUANTITY_SYNTAX}`;
  throw new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: ` "" is invalid: patch: ${value}`, reason: 'Invalid', details: { causes: [{ reason: 'FieldValueInvalid', message: value, field: 'patch' }] }, code: 422 });
}

export function withDefaults(sim: Sim, type: ResourceType, obj: KubeObject): KubeObject {
  applyDefaults(sim, type, obj);
  return obj;
}

export function liveOrNotFound(sim: Sim, req: ApiRequest): KubeObject {
  const live = sim.store.get(sim.keyOf(req.type), req.namespace, req.name!);
  if (!live) throw notFound(groupResource(req.type), req.name!);
  return live;
}
