// The verbs, with kube-apiserver's order of work for writes:
//   decode → NamespaceLifecycle → defaults → managedFields → mutating webhooks → server-set
//   fields → validation → validating webhooks → storage (skipped for dryRun=All)
// and its answers: 201 on create, 200 otherwise, no write (and no new resourceVersion) when an
// update or patch changes nothing.
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { admitMutating, admitValidating, type AdmissionAttributes, type Operation } from './admission.ts';
import type { Authenticated } from './authn.ts';
import { serverSideApply } from './apply.ts';
import { applySchema, establishedStatus, validateCrd } from './crd.ts';
import {
  alreadyExists, ApiError, badRequest, forbidden, methodNotSupported, notFound, preconditionConflict, staleConflict,
  successStatus, unsupportedMediaType,
} from './errors.ts';
import { deepEqual, isObject } from './fieldsets.ts';
import { managersForWrite, nowTime, recordUpdate, setManagedFields, type WriteContext } from './managed-fields.ts';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, PATCH_TYPES } from './patch.ts';
import { apiVersionOf, groupResource, type ResourceType } from './resources.ts';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { IMMORTAL_NAMESPACES, type Sim } from './sim.ts';
import { objectKey } from './store.ts';
import { normaliseQuantities } from './quantity.ts';
import { defaultSubjects, validateObject, validateUpdate } from './validation.ts';

export interface ApiRequest {
  verb: string;
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
  query: URLSearchParams;
  body?: unknown;
  contentType?: string;
  user: Authenticated;
  userAgent: string;
}

export interface ApiReply {
  status: number;
  body: unknown;
  warnings?: string[];
}

// --- small helpers -------------------------------------------------------------------------

const isNamespaceType = (t: ResourceType): boolean => t.kind === 'Namespace' && t.group === '';
const isCrdType = (t: ResourceType): boolean => t.kind === 'CustomResourceDefinition';

function dryRunOf(req: ApiRequest): boolean {
  const values = req.query.getAll('dryRun');
  if (values.some((v) => v !== 'All')) throw badRequest(`Invalid dry run value: ${values.join(',')}`);
  return values.length > 0;
}

/** The manager of a write: `?fieldManager=`, else the User-Agent up to its first `/`. */
export function managerOf(req: ApiRequest): string {
  return req.query.get('fieldManager') || req.userAgent.split('/')[0]!.slice(0, 128) || 'unknown';
}

function writeContext(req: ApiRequest): WriteContext {
  return { type: req.type, manager: managerOf(req), ...(req.subresource ? { subresource: req.subresource } : {}) };
}

function requestOptions(kind: 'CreateOptions' | 'UpdateOptions', req: ApiRequest): Record<string, unknown> {
  const options: Record<string, unknown> = { kind, apiVersion: 'meta.k8s.io/v1' };
  if (req.query.getAll('dryRun').length > 0) options.dryRun = req.query.getAll('dryRun');
  if (req.query.get('fieldManager')) options.fieldManager = req.query.get('fieldManager');
  if (req.query.get('fieldValidation')) options.fieldValidation = req.query.get('fieldValidation');
  return options;
}

function bodyObject(req: ApiRequest): KubeObject {
  if (!isObject(req.body)) throw badRequest('the body of the request must be a JSON or YAML object');
  const obj = structuredClone(req.body) as KubeObject;
  if (!isObject(obj.metadata)) obj.metadata = {};
  return obj;
}

/** apiVersion and kind must be those of the URL when given; they are filled in when absent. */
function checkKind(type: ResourceType, obj: KubeObject): void {
  const expected = apiVersionOf(type);
  if (obj.apiVersion && obj.apiVersion !== expected) {
    throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${expected})`);
  }
  if (obj.kind && obj.kind !== type.kind) throw badRequest(`the kind in the data (${obj.kind}) does not match the expected kind (${type.kind})`);
  obj.apiVersion = expected;
  obj.kind = type.kind;
}

function checkNamespaceOfBody(req: ApiRequest, obj: KubeObject): void {
  if (!req.type.namespaced) {
    delete obj.metadata.namespace;
    return;
  }
  if (obj.metadata.namespace && obj.metadata.namespace !== req.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  obj.metadata.namespace = req.namespace;
}

function checkNameOfBody(req: ApiRequest, obj: KubeObject): void {
  if (obj.metadata.name && obj.metadata.name !== req.name) {
    throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${req.name})`);
  }
  obj.metadata.name = req.name;
}

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
function generateName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i += 1) suffix += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  return `${prefix}${suffix}`;
}

/** NamespaceLifecycle: no objects in a missing namespace, no new ones in a terminating one. */
function checkNamespaceLifecycle(sim: Sim, req: ApiRequest, operation: Operation, name: string): void {
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
 * apiGroup, the namespace name label and phase (SetDefaults_Namespace).
 */
function applyDefaults(sim: Sim, type: ResourceType, obj: KubeObject): void {
  if (!type.crdName) {
    normaliseQuantities(type.group, type.kind, obj);
    defaultSubjects(type, obj);
  }
  if (!isNamespaceType(type)) return;
  // Like SetDefaults_Namespace: a generateName namespace has no name yet, so no name label either.
  if (sim.options.metadataNameLabel && obj.metadata.name) obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name! };
  if (!isObject(obj.spec)) obj.spec = {};
  obj.status = { phase: 'Active', ...(isObject(obj.status) ? obj.status : {}) };
}

/** What the strategies set on create after mutating admission (PrepareForCreate, BeforeCreate). */
function prepareForCreate(type: ResourceType, obj: KubeObject): KubeObject {
  let prepared = obj;
  if (type.crdName) prepared = applySchema(type, prepared);
  prepared.metadata.uid = randomUUID();
  prepared.metadata.creationTimestamp = nowTime();
  delete prepared.metadata.resourceVersion;
  delete prepared.metadata.deletionTimestamp;
  if (type.generation) prepared.metadata.generation = 1;
  else delete prepared.metadata.generation;
  // Custom objects with a status subresource are created without status (it is written through /status).
  if (type.crdName && type.statusSubresource) delete prepared.status;
  if (isNamespaceType(type)) prepared.spec = { ...(prepared.spec as object), finalizers: ['kubernetes'] };
  if (isCrdType(type)) {
    validateCrd(prepared);
    prepared.status = establishedStatus(prepared);
  }
  return type.crdName ? sortedKeys(prepared) : prepared;
}

/** Custom resources are unstructured maps on the server, which encodes them with keys sorted. */
function sortedKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortedKeys) as T;
  if (!isObject(value)) return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(Object.keys(record).sort().map((k) => [k, sortedKeys(record[k])])) as T;
}

/** Fields an update may not change, the status/main split, and generation (PrepareForUpdate). */
function prepareForUpdate(type: ResourceType, live: KubeObject, next: KubeObject, subresource: string | undefined): KubeObject {
  let prepared: KubeObject;
  if (subresource === 'status' && type.group === '' && type.plural === 'namespaces') {
    // The namespace status strategy keeps only the spec: labels and annotations change here too
    // (which is why admission must judge namespaces/status like the namespace).
    prepared = { ...structuredClone(next), spec: structuredClone(live.spec) };
  } else if (subresource === 'status') {
    prepared = { ...structuredClone(live), status: next.status };
    // The namespace status strategy resets only spec: label and annotation changes are kept.
    if (isNamespaceType(type)) prepared.metadata = structuredClone(next.metadata);
    prepared.metadata.managedFields = next.metadata.managedFields;
  } else {
    prepared = structuredClone(next);
    if (type.statusSubresource) {
      if (live.status === undefined) delete prepared.status;
      else prepared.status = structuredClone(live.status);
    }
  }
  const kept = ['uid', 'creationTimestamp', 'deletionTimestamp', 'generation', 'name', 'namespace'] as const;
  const target = prepared.metadata as Record<string, unknown>;
  for (const field of kept) {
    if (live.metadata[field] === undefined) Reflect.deleteProperty(target, field);
    else target[field] = live.metadata[field];
  }
  if (type.crdName && subresource !== 'status') prepared = applySchema(type, prepared);
  if (isNamespaceType(type) && !isObject(prepared.spec)) prepared.spec = live.spec;
  return type.crdName ? sortedKeys(prepared) : prepared;
}

function specChanged(type: ResourceType, live: KubeObject, next: KubeObject): boolean {
  const strip = (o: KubeObject): Record<string, unknown> => {
    const { metadata: _m, status, ...rest } = o;
    return type.statusSubresource ? rest : { ...rest, status };
  };
  return !deepEqual(strip(live), strip(next));
}

function admissionAttributes(req: ApiRequest, operation: Operation, object: KubeObject | null, oldObject: KubeObject | null, options: Record<string, unknown>, dryRun: boolean): AdmissionAttributes {
  const name = (object ?? oldObject)?.metadata.name ?? req.name;
  return {
    operation, type: req.type, object, oldObject, user: req.user, dryRun, options,
    ...(req.subresource ? { subresource: req.subresource } : {}),
    ...(req.namespace ? { namespace: req.namespace } : {}),
    ...(name ? { name } : {}),
  };
}

// --- reads ---------------------------------------------------------------------------------

export function getObject(sim: Sim, req: ApiRequest): ApiReply {
  const obj = sim.store.get(sim.keyOf(req.type), req.namespace, req.name!);
  if (!obj) throw notFound(groupResource(req.type), req.name!);
  return { status: 200, body: obj };
}

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

function decodeContinue(token: string | null): string | undefined {
  if (!token) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as ContinueToken;
    if (parsed.v !== 'meta.k8s.io/v1' || typeof parsed.start !== 'string') throw new Error('bad version');
    return parsed.start;
  } catch {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
}

function encodeContinue(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${lastKey}\u0000` })).toString('base64url');
}

/** The objects a list or watch selects, in key order. */
export function selectObjects(sim: Sim, req: ApiRequest): KubeObject[] {
  const labels = parseLabelSelector(req.query.get('labelSelector') ?? undefined);
  const fields = parseFieldSelector(req.query.get('fieldSelector') ?? undefined, req.type.kind);
  return sim.store.list(sim.keyOf(req.type), req.type.namespaced ? req.namespace : undefined, (o) => matchesLabels(labels, o.metadata.labels) && matchesFields(fields, o));
}

/** Built-in lists carry items without apiVersion and kind, as typed lists do; custom ones keep them. */
export function listItem(type: ResourceType, obj: KubeObject): unknown {
  if (type.crdName) return obj;
  const { apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}

export function listObjects(sim: Sim, req: ApiRequest): ApiReply {
  const rv = sim.store.currentResourceVersion();
  const start = decodeContinue(req.query.get('continue'));
  const all = selectObjects(sim, req);
  const afterStart = start === undefined ? all : all.filter((o) => objectKey(o.metadata.namespace, o.metadata.name!) >= start);
  const limit = Number(req.query.get('limit') ?? 0);
  const page = limit > 0 ? afterStart.slice(0, limit) : afterStart;
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  if (page.length < afterStart.length) {
    const last = page[page.length - 1]!;
    metadata.continue = encodeContinue(rv, objectKey(last.metadata.namespace, last.metadata.name!));
    if (!req.query.get('labelSelector') && !req.query.get('fieldSelector')) metadata.remainingItemCount = afterStart.length - page.length;
  }
  return {
    status: 200,
    body: { kind: req.type.listKind, apiVersion: apiVersionOf(req.type), metadata, items: page.map((o) => listItem(req.type, o)) },
  };
}

// --- create --------------------------------------------------------------------------------

export async function createObject(sim: Sim, req: ApiRequest): Promise<ApiReply> {
  if (req.subresource) throw methodNotSupported(groupResource(req.type), 'create');
  const obj = bodyObject(req);
  checkKind(req.type, obj);
  checkNamespaceOfBody(req, obj);
  const managers = recordUpdate(undefined, withDefaults(sim, req.type, obj), managersForWrite(undefined, obj), writeContext(req));
  setManagedFields(obj, managers);
  return commitCreate(sim, req, obj, requestOptions('CreateOptions', req));
}

function withDefaults(sim: Sim, type: ResourceType, obj: KubeObject): KubeObject {
  applyDefaults(sim, type, obj);
  return obj;
}

/** The create pipeline from NamespaceLifecycle on; `obj` already carries its managedFields. */
async function commitCreate(sim: Sim, req: ApiRequest, obj: KubeObject, options: Record<string, unknown>): Promise<ApiReply> {
  const dryRun = dryRunOf(req);
  const warnings: string[] = [];
  const env = sim.admissionEnvironment(warnings);
  checkNamespaceLifecycle(sim, req, 'CREATE', obj.metadata.name ?? '');
  applyDefaults(sim, req.type, obj);
  // Mutating webhooks see the object before the server sets uid and creationTimestamp.
  const forMutation = structuredClone(obj);
  if (!req.type.crdName) forMutation.metadata.creationTimestamp = null;
  const mutated = (await admitMutating(admissionAttributes(req, 'CREATE', forMutation, null, options, dryRun), env))!;
  if (!req.type.crdName && mutated.metadata.creationTimestamp === null) delete mutated.metadata.creationTimestamp;
  // Like the real server's BeforeCreate: generateName becomes a name after mutating admission, so
  // mutating webhooks see neither the name nor (for a namespace) the name label.
  if (!mutated.metadata.name && mutated.metadata.generateName) mutated.metadata.name = generateName(mutated.metadata.generateName);
  applyDefaults(sim, req.type, mutated);
  validateObject(req.type, mutated);
  const prepared = prepareForCreate(req.type, mutated);
  await admitValidating(admissionAttributes(req, 'CREATE', prepared, null, options, dryRun), env);
  const key = sim.keyOf(req.type);
  if (req.type.crdName) sim.store.unstructured.add(key);
  if (sim.store.get(key, prepared.metadata.namespace, prepared.metadata.name!)) throw alreadyExists(groupResource(req.type), prepared.metadata.name!);
  const stored = dryRun ? prepared : sim.store.create(key, prepared);
  return { status: 201, body: stored, warnings };
}

// --- update, patch, apply ------------------------------------------------------------------

function liveOrNotFound(sim: Sim, req: ApiRequest): KubeObject {
  const live = sim.store.get(sim.keyOf(req.type), req.namespace, req.name!);
  if (!live) throw notFound(groupResource(req.type), req.name!);
  return live;
}

function checkResourceVersion(req: ApiRequest, live: KubeObject, sent: KubeObject): void {
  const rv = sent.metadata.resourceVersion;
  if (rv && rv !== live.metadata.resourceVersion) throw staleConflict(groupResource(req.type), req.name!);
}

/**
 * Another write committed while this one was in admission (which awaits webhooks). etcd's
 * compare-and-swap refuses such a write; kube-apiserver's GuaranteedUpdate then runs the update
 * again on the fresh object, where a resourceVersion the client sent is stale: 409 Conflict.
 */
class LostRace extends Error {}

const MAX_UPDATE_ATTEMPTS = 16;

function retriedOnRace(once: (sim: Sim, req: ApiRequest) => Promise<ApiReply>): (sim: Sim, req: ApiRequest) => Promise<ApiReply> {
  return async (sim, req) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await once(sim, req);
      } catch (e) {
        if (!(e instanceof LostRace)) throw e;
        if (attempt >= MAX_UPDATE_ATTEMPTS) throw staleConflict(groupResource(req.type), req.name!);
      }
    }
  };
}

export const updateObject = retriedOnRace(updateOnce);

async function updateOnce(sim: Sim, req: ApiRequest): Promise<ApiReply> {
  const obj = bodyObject(req);
  checkKind(req.type, obj);
  checkNamespaceOfBody(req, obj);
  checkNameOfBody(req, obj);
  const live = liveOrNotFound(sim, req);
  checkResourceVersion(req, live, obj);
  const next = withDefaults(sim, req.type, prepareForUpdate(req.type, live, obj, req.subresource));
  setManagedFields(next, recordUpdate(live, next, managersForWrite(live, obj), writeContext(req)));
  return commitUpdate(sim, req, live, next, requestOptions('UpdateOptions', req));
}

function patchedObject(req: ApiRequest, live: KubeObject): KubeObject {
  const contentType = (req.contentType ?? '').split(';')[0]!.trim();
  const base = live as unknown as Record<string, unknown>;
  switch (contentType) {
    case PATCH_TYPES.json:
      return applyJsonPatch(base, req.body) as unknown as KubeObject;
    case PATCH_TYPES.merge:
      return applyMergePatch(base, req.body) as KubeObject;
    case PATCH_TYPES.strategic:
      if (!req.type.strategicMerge) throw unsupportedMediaType(contentType);
      return applyStrategicMergePatch(base, req.body, req.type.merge) as KubeObject;
    default:
      throw unsupportedMediaType(contentType);
  }
}

export const patchObject = retriedOnRace(patchOnce);

async function patchOnce(sim: Sim, req: ApiRequest): Promise<ApiReply> {
  const contentType = (req.contentType ?? '').split(';')[0]!.trim();
  if (contentType === PATCH_TYPES.apply) return applyObject(sim, req);
  if (req.query.get('force')) throw badRequest('force may not be set for non-apply patches');
  const live = liveOrNotFound(sim, req);
  const patched = patchedObject(req, live);
  if (!isObject(patched) || !isObject(patched.metadata)) throw badRequest('the patch must leave an object with metadata');
  checkResourceVersion(req, live, patched);
  patched.apiVersion = live.apiVersion;
  patched.kind = live.kind;
  const next = withDefaults(sim, req.type, prepareForUpdate(req.type, live, patched, req.subresource));
  setManagedFields(next, recordUpdate(live, next, managersForWrite(live, patched), writeContext(req)));
  return commitUpdate(sim, req, live, next, requestOptions('UpdateOptions', req));
}

function applyConfiguration(req: ApiRequest): KubeObject {
  if (!req.query.get('fieldManager')) {
    throw new ApiError({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 422, reason: 'Invalid',
      message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      details: { group: 'meta.k8s.io', kind: 'PatchOptions', causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }] },
    });
  }
  const force = req.query.get('force');
  if (force !== null && force !== 'true' && force !== 'false') throw badRequest(`invalid force value: ${force}`);
  const config = bodyObject(req);
  if (!config.apiVersion || !config.kind) throw badRequest(`error decoding YAML: Object 'Kind' is missing in '${JSON.stringify(req.body)}'`);
  checkKind(req.type, config);
  checkNameOfBody(req, config);
  checkNamespaceOfBody(req, config);
  if (config.metadata.managedFields !== undefined) throw badRequest('metadata.managedFields must be nil');
  return config;
}

async function applyObject(sim: Sim, req: ApiRequest): Promise<ApiReply> {
  const config = applyConfiguration(req);
  const force = req.query.get('force') === 'true';
  const ctx = writeContext(req);
  const live = sim.store.get(sim.keyOf(req.type), req.namespace, req.name!);
  if (!live) {
    if (req.subresource) throw notFound(groupResource(req.type), req.name!);
    const created = serverSideApply(undefined, withDefaults(sim, req.type, config), new Map(), ctx, force);
    setManagedFields(created.object, created.managers);
    return commitCreate(sim, req, created.object, requestOptions('CreateOptions', req));
  }
  checkResourceVersion(req, live, config);
  const applied = serverSideApply(live, config, managersForWrite(live, live), ctx, force);
  const next = withDefaults(sim, req.type, prepareForUpdate(req.type, live, applied.object, req.subresource));
  setManagedFields(next, applied.managers);
  return commitUpdate(sim, req, live, next, requestOptions('UpdateOptions', req));
}

/** The update pipeline from mutating admission on; `next` already carries its managedFields. */
async function commitUpdate(sim: Sim, req: ApiRequest, live: KubeObject, next: KubeObject, options: Record<string, unknown>): Promise<ApiReply> {
  const dryRun = dryRunOf(req);
  const warnings: string[] = [];
  const env = sim.admissionEnvironment(warnings);
  checkNamespaceLifecycle(sim, req, 'UPDATE', req.name!);
  next.metadata.resourceVersion = live.metadata.resourceVersion;
  const mutated = (await admitMutating(admissionAttributes(req, 'UPDATE', next, live, options, dryRun), env))!;
  const prepared = withDefaults(sim, req.type, prepareForUpdate(req.type, live, mutated, undefined));
  if (req.subresource === 'status') prepared.status = mutated.status;
  if (req.type.generation && specChanged(req.type, live, prepared)) prepared.metadata.generation = (live.metadata.generation ?? 0) + 1;
  validateUpdate(req.type, live, prepared);
  await admitValidating(admissionAttributes(req, 'UPDATE', prepared, live, options, dryRun), env);
  if (deepEqual(prepared, live)) return { status: 200, body: live, warnings };
  if (dryRun) return { status: 200, body: prepared, warnings };
  const key = sim.keyOf(req.type);
  if (sim.store.get(key, live.metadata.namespace, live.metadata.name!)?.metadata.resourceVersion !== live.metadata.resourceVersion) throw new LostRace();
  if (prepared.metadata.deletionTimestamp && (prepared.metadata.finalizers ?? []).length === 0) {
    return { status: 200, body: sim.store.delete(key, prepared.metadata.namespace, prepared.metadata.name!), warnings };
  }
  return { status: 200, body: sim.store.update(key, prepared), warnings };
}

// --- delete --------------------------------------------------------------------------------

interface DeleteOptions {
  propagationPolicy?: string;
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
  dryRun?: string[];
}

function deleteOptions(req: ApiRequest): { options: DeleteOptions; echo: Record<string, unknown> } {
  const body = (isObject(req.body) ? req.body : {}) as DeleteOptions;
  const options: DeleteOptions = { ...body };
  if (req.query.get('propagationPolicy')) options.propagationPolicy = req.query.get('propagationPolicy')!;
  if (req.query.get('gracePeriodSeconds')) options.gracePeriodSeconds = Number(req.query.get('gracePeriodSeconds'));
  if (req.query.getAll('dryRun').length > 0) options.dryRun = req.query.getAll('dryRun');
  const echo: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' };
  if (options.gracePeriodSeconds !== undefined) echo.gracePeriodSeconds = options.gracePeriodSeconds;
  if (options.preconditions) echo.preconditions = options.preconditions;
  if (options.propagationPolicy) echo.propagationPolicy = options.propagationPolicy;
  if (options.dryRun) echo.dryRun = options.dryRun;
  return { options, echo };
}

function checkPreconditions(req: ApiRequest, live: KubeObject, options: DeleteOptions): void {
  const { uid, resourceVersion } = options.preconditions ?? {};
  if (uid && uid !== live.metadata.uid) {
    throw preconditionConflict(groupResource(req.type), req.name!, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${live.metadata.uid}`);
  }
  if (resourceVersion && resourceVersion !== live.metadata.resourceVersion) {
    throw preconditionConflict(groupResource(req.type), req.name!, `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${live.metadata.resourceVersion}`);
  }
}

/** Hooks the controllers register: what happens after a namespace starts terminating or an object is gone. */
export interface DeletionHooks {
  namespaceTerminating(name: string): void;
  deleted(type: ResourceType, obj: KubeObject, propagationPolicy: string | undefined): void;
}

export async function deleteObject(sim: Sim, req: ApiRequest, hooks: DeletionHooks): Promise<ApiReply> {
  const live = liveOrNotFound(sim, req);
  const { options, echo } = deleteOptions(req);
  return deleteOne(sim, req, live, options, echo, hooks);
}

/** `inCollection`: part of a deletecollection, whose admission requests carry no name (as kube-apiserver's). */
async function deleteOne(sim: Sim, req: ApiRequest, live: KubeObject, options: DeleteOptions, echo: Record<string, unknown>, hooks: DeletionHooks, inCollection = false): Promise<ApiReply> {
  const dryRun = dryRunOf(req);
  const name = live.metadata.name!;
  if (isNamespaceType(req.type) && IMMORTAL_NAMESPACES.has(name)) {
    throw forbidden(groupResource(req.type), name, 'this namespace may not be deleted');
  }
  checkPreconditions({ ...req, name }, live, options);
  const warnings: string[] = [];
  const env = sim.admissionEnvironment(warnings);
  const attributes = admissionAttributes({ ...req, name }, 'DELETE', null, live, echo, dryRun);
  if (inCollection) delete attributes.name;
  await admitMutating(attributes, env);
  await admitValidating(attributes, env);
  const key = sim.keyOf(req.type);
  const terminating = (): KubeObject => {
    const marked = structuredClone(live);
    marked.metadata.deletionTimestamp ??= nowTime();
    if (marked.metadata.deletionGracePeriodSeconds === undefined) marked.metadata.deletionGracePeriodSeconds = 0;
    if (isNamespaceType(req.type)) {
      delete marked.metadata.deletionGracePeriodSeconds;
      marked.status = { ...(marked.status as object), phase: 'Terminating' };
    }
    return marked;
  };
  if (isNamespaceType(req.type)) {
    if (dryRun) return { status: 200, body: terminating(), warnings };
    const stored = live.metadata.deletionTimestamp ? live : sim.store.update(key, terminating());
    hooks.namespaceTerminating(name);
    return { status: 200, body: stored, warnings };
  }
  if ((live.metadata.finalizers ?? []).length > 0) {
    if (dryRun || live.metadata.deletionTimestamp) return { status: 200, body: dryRun ? terminating() : live, warnings };
    return { status: 200, body: sim.store.update(key, terminating()), warnings };
  }
  if (!dryRun) {
    const removed = sim.store.delete(key, live.metadata.namespace, name)!;
    hooks.deleted(req.type, removed, options.propagationPolicy);
  }
  const details = { name, ...(req.type.group ? { group: req.type.group } : {}), kind: req.type.plural, uid: live.metadata.uid! };
  return { status: 200, body: successStatus(details), warnings };
}

export async function deleteCollection(sim: Sim, req: ApiRequest, hooks: DeletionHooks): Promise<ApiReply> {
  if (isNamespaceType(req.type)) throw methodNotSupported(groupResource(req.type), 'deletecollection');
  const { options, echo } = deleteOptions(req);
  const deleted: unknown[] = [];
  const warnings: string[] = [];
  for (const live of selectObjects(sim, req)) {
    const reply = await deleteOne(sim, { ...req, name: live.metadata.name! }, live, options, echo, hooks, true);
    warnings.push(...(reply.warnings ?? []));
    deleted.push(listItem(req.type, live));
  }
  return {
    status: 200,
    body: { kind: req.type.listKind, apiVersion: apiVersionOf(req.type), metadata: { resourceVersion: String(sim.store.currentResourceVersion()) }, items: deleted },
    warnings,
  };
}

