// `<resource>/scale` (Deployments): an autoscaling/v1 Scale read from and written to the object's
// spec.replicas, as kube-apiserver's scale REST does. Admission sees the Scale, not the object
// (kind autoscaling/v1 Scale, resource apps/v1 deployments, subResource scale), and the Scale
// carries only name, namespace, uid, resourceVersion and creationTimestamp: no labels, so an
// objectSelector never matches it (what protect-objects' separate scale webhook is for).
import type { KubeObject } from '../../../../shared/kube/types.ts';
import { admitMutating, admitValidating } from '../admission.ts';
import { badRequest, invalid, staleConflict, unsupportedMediaType } from '../errors.ts';
import { isObject } from '../fieldsets.ts';
import { managersForWrite, recordUpdate, setManagedFields } from '../managed-fields.ts';
import { applyJsonPatch, applyMergePatch, PATCH_TYPES } from '../patch.ts';
import { groupResource } from '../resources.ts';
import type { Sim } from '../sim.ts';
import { admissionAttributes, type ApiReply, type ApiRequest, bodyObject, checkNamespaceLifecycle, dryRunOf, liveOrNotFound, requestOptions, writeContext } from './request.ts';
import { LostRace, retriedOnRace } from './update.ts';

const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

interface Scalable extends KubeObject {
  spec?: { replicas?: number; selector?: { matchLabels?: Record<string, string> } };
  status?: { replicas?: number };
}

/** scaleFromDeployment: what GET returns and what admission sees. */
export function scaleOf(o: KubeObject): KubeObject {
  const { metadata, spec, status } = o as Scalable;
  const selector = Object.entries(spec?.selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
  return {
    apiVersion: 'autoscaling/v1', kind: 'Scale',
    metadata: {
      name: metadata.name, namespace: metadata.namespace, uid: metadata.uid, resourceVersion: metadata.resourceVersion,
      creationTimestamp: metadata.creationTimestamp ?? null,
    },
    spec: { replicas: spec?.replicas ?? 0 },
    status: { replicas: status?.replicas ?? 0, ...(selector ? { selector } : {}) },
  } as KubeObject;
}

function sentScale(req: ApiRequest, current: KubeObject): KubeObject {
  if (req.verb === 'update') return bodyObject(req);
  const contentType = (req.contentType ?? '').split(';')[0]!.trim();
  const base = current as unknown as Record<string, unknown>;
  // A Scale has no lists: a strategic merge patch is a merge patch.
  if (contentType === PATCH_TYPES.json) return applyJsonPatch(base, req.body) as unknown as KubeObject;
  if (contentType === PATCH_TYPES.merge || contentType === PATCH_TYPES.strategic) return applyMergePatch(base, req.body) as KubeObject;
  throw unsupportedMediaType(contentType);
}

function replicasOf(scale: KubeObject, name: string): number {
  const replicas = (scale as { spec?: { replicas?: unknown } }).spec?.replicas;
  if (typeof replicas === 'number' && Number.isInteger(replicas) && replicas >= 0) return replicas;
  throw invalid('autoscaling', 'Scale', name, [{ type: 'FieldValueInvalid', field: 'spec.replicas', detail: 'must be greater than or equal to 0', value: replicas }]);
}

export const scaleObject = retriedOnRace(scaleOnce);

async function scaleOnce(sim: Sim, req: ApiRequest): Promise<ApiReply> {
  const live = liveOrNotFound(sim, req);
  const current = scaleOf(live);
  if (req.verb === 'get') return { status: 200, body: current };
  if (req.verb !== 'update' && req.verb !== 'patch') throw badRequest(`${req.verb} is not supported on ${req.type.plural}/scale`);
  const sent = sentScale(req, current);
  if (!isObject(sent) || !isObject(sent.metadata)) throw badRequest('the body of the request must be a Scale');
  const rv = sent.metadata.resourceVersion;
  if (rv && rv !== live.metadata.resourceVersion) throw staleConflict(groupResource(req.type), req.name!);
  const name = req.name!;
  const wanted = { ...current, spec: { replicas: replicasOf(sent, name) } } as KubeObject;
  const dryRun = dryRunOf(req);
  const warnings: string[] = [];
  const env = sim.admissionEnvironment(warnings);
  checkNamespaceLifecycle(sim, req, 'UPDATE', name);
  const options = requestOptions('UpdateOptions', req);
  const attributes = (object: KubeObject) => ({ ...admissionAttributes(req, 'UPDATE', object, current, options, dryRun), kind: SCALE_KIND });
  const mutated = (await admitMutating(attributes(wanted), env))!;
  const replicas = replicasOf(mutated, name);
  await admitValidating(attributes({ ...mutated, spec: { replicas } } as KubeObject), env);
  const next = structuredClone(live) as Scalable;
  next.spec = { ...next.spec, replicas };
  if (replicas === (live as Scalable).spec?.replicas) return { status: 200, body: current, warnings };
  if (req.type.generation) next.metadata.generation = (live.metadata.generation ?? 0) + 1;
  setManagedFields(next, recordUpdate(live, next, managersForWrite(live, next), writeContext(req)));
  if (dryRun) return { status: 200, body: scaleOf(next), warnings };
  const key = sim.keyOf(req.type);
  if (sim.store.get(key, live.metadata.namespace, name)?.metadata.resourceVersion !== live.metadata.resourceVersion) throw new LostRace();
  return { status: 200, body: scaleOf(sim.store.update(key, next)), warnings };
}
