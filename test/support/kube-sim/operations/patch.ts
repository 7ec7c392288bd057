// patch: JSON, merge and strategic merge patches, and server-side apply (an apply of a missing
// object creates it).
import type { KubeObject } from '../../../../shared/kube/types.ts';
import { serverSideApply } from '../apply.ts';
import { ApiError, badRequest, notFound, unsupportedMediaType } from '../errors.ts';
import { isObject } from '../fieldsets.ts';
import { managersForApply, managersForWrite, recordUpdate, setManagedFields } from '../managed-fields.ts';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, PATCH_TYPES } from '../patch.ts';
import { groupResource } from '../resources.ts';
import type { Sim } from '../sim.ts';
import { commitCreate } from './create.ts';
import { type ApiReply, type ApiRequest, bodyObject, checkKind, checkQuantities, checkNameOfBody, checkNamespaceOfBody, liveOrNotFound, requestOptions, withDefaults, writeContext } from './request.ts';
import { checkResourceVersion, commitUpdate, prepareForUpdate, retriedOnRace } from './update.ts';

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
  checkQuantities(req.type, patched, 'patch');
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
  checkQuantities(req.type, config, 'apply', req.body);
  const force = req.query.get('force') === 'true';
  const ctx = writeContext(req);
  const live = sim.store.get(sim.keyOf(req.type), req.namespace, req.name!);
  if (!live) {
    if (req.subresource) throw notFound(groupResource(req.type), req.name!);
    // The applier owns what it applied, not the defaults the server then adds (a Namespace's name label).
    const created = serverSideApply(undefined, config, new Map(), ctx, force);
    const object = withDefaults(sim, req.type, created.object);
    setManagedFields(object, created.managers);
    return commitCreate(sim, req, object, requestOptions('CreateOptions', req));
  }
  checkResourceVersion(req, live, config);
  const applied = serverSideApply(live, config, managersForApply(live, ctx), ctx, force);
  const next = withDefaults(sim, req.type, prepareForUpdate(req.type, live, applied.object, req.subresource));
  setManagedFields(next, applied.managers);
  return commitUpdate(sim, req, live, next, requestOptions('UpdateOptions', req));
}
