// delete and deletecollection: options and preconditions, finalizers, namespaces terminating.
import type { KubeObject } from '../../../../shared/kube/types.ts';
import { admitMutating, admitValidating } from '../admission.ts';
import { forbidden, methodNotSupported, preconditionConflict, successStatus } from '../errors.ts';
import { isObject } from '../fieldsets.ts';
import { nowTime } from '../managed-fields.ts';
import { apiVersionOf, groupResource, type ResourceType } from '../resources.ts';
import { IMMORTAL_NAMESPACES, type Sim } from '../sim.ts';
import { listItem, selectObjects } from './read.ts';
import { admissionAttributes, type ApiReply, type ApiRequest, dryRunOf, isNamespaceType, liveOrNotFound } from './request.ts';

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

/** As the API server's BeforeDelete checks them: the conflict names the Kind, not the resource (fixtures delete-uid-*). */
function checkPreconditions(req: ApiRequest, live: KubeObject, options: DeleteOptions): void {
  const { uid, resourceVersion } = options.preconditions ?? {};
  const gk = { group: req.type.group, resource: req.type.kind };
  if (uid && uid !== live.metadata.uid) {
    throw preconditionConflict(gk, req.name!, `the UID in the precondition (${uid}) does not match the UID in record (${live.metadata.uid}). The object might have been deleted and then recreated`);
  }
  if (resourceVersion && resourceVersion !== live.metadata.resourceVersion) {
    throw preconditionConflict(gk, req.name!, `the ResourceVersion in the precondition (${resourceVersion}) does not match the ResourceVersion in record (${live.metadata.resourceVersion}). The object might have been modified`);
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
