// create: generateName, the create strategy (PrepareForCreate), and the create pipeline that
// server-side apply of a missing object shares.
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../../../shared/kube/types.ts';
import { admitMutating, admitValidating } from '../admission.ts';
import { applySchema, establishedStatus, validateCrd } from '../crd.ts';
import { alreadyExists, methodNotSupported } from '../errors.ts';
import { managersForWrite, nowTime, recordUpdate, setManagedFields } from '../managed-fields.ts';
import { groupResource, type ResourceType } from '../resources.ts';
import type { Sim } from '../sim.ts';
import { validateObject } from '../validation.ts';
import { admissionAttributes, type ApiReply, type ApiRequest, applyDefaults, bodyObject, checkKind, checkQuantities, checkNamespaceLifecycle, checkNamespaceOfBody, dropUnknownWebhookFields, dryRunOf, isCrdType, isNamespaceType, isQuotaType, requestOptions, sortedKeys, withDefaults, writeContext } from './request.ts';

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
function generateName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i += 1) suffix += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  return `${prefix}${suffix}`;
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
  // A quota starts with an empty status (a Go struct: `{}`), which the quota controller fills.
  if (isQuotaType(type)) prepared.status = {};
  if (isNamespaceType(type)) {
    prepared.spec = { ...(prepared.spec as object), finalizers: ['kubernetes'] };
    // namespaceStrategy.PrepareForCreate: the status is the server's, whatever the request says (conditions too).
    prepared.status = { phase: 'Active' };
  }
  if (isCrdType(type)) {
    validateCrd(prepared);
    prepared.status = establishedStatus(prepared);
  }
  return type.crdName ? sortedKeys(prepared) : prepared;
}

export async function createObject(sim: Sim, req: ApiRequest): Promise<ApiReply> {
  if (req.subresource) throw methodNotSupported(groupResource(req.type), 'create');
  const obj = bodyObject(req);
  checkKind(req.type, obj);
  checkQuantities(req.type, obj, 'body');
  checkNamespaceOfBody(req, obj);
  const managers = recordUpdate(undefined, withDefaults(sim, req.type, obj), managersForWrite(undefined, obj), writeContext(req));
  setManagedFields(obj, managers);
  return commitCreate(sim, req, obj, requestOptions('CreateOptions', req));
}

/** The create pipeline from NamespaceLifecycle on; `obj` already carries its managedFields. */
export async function commitCreate(sim: Sim, req: ApiRequest, obj: KubeObject, options: Record<string, unknown>): Promise<ApiReply> {
  const dryRun = dryRunOf(req);
  const warnings = dropUnknownWebhookFields(sim, req, obj);
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
