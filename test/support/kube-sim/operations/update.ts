// update (PUT): the update strategy (PrepareForUpdate), optimistic concurrency, retry on a write
// lost in admission, and the update pipeline that patch and apply share.
import type { KubeObject } from '../../../../shared/kube/types.ts';
import { admitMutating, admitValidating } from '../admission.ts';
import { applySchema } from '../crd.ts';
import { staleConflict } from '../errors.ts';
import { deepEqual, isObject } from '../fieldsets.ts';
import { managersForWrite, recordUpdate, setManagedFields } from '../managed-fields.ts';
import { groupResource, type ResourceType } from '../resources.ts';
import type { Sim } from '../sim.ts';
import { validateUpdate } from '../validation.ts';
import { admissionAttributes, type ApiReply, type ApiRequest, bodyObject, checkKind, checkQuantities, checkNameOfBody, checkNamespaceLifecycle, checkNamespaceOfBody, dropUnknownWebhookFields, dryRunOf, isNamespaceType, liveOrNotFound, requestOptions, sortedKeys, withDefaults, writeContext } from './request.ts';

/** A metadata field that a kind's status strategy sets back to the live object's value. */
export type StatusResetField = 'labels' | 'annotations' | 'ownerReferences' | 'finalizers' | 'deletionTimestamp' | 'generation';

/** metav1.ResetObjectMetaForStatus (k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go), less selfLink, which kube-sim never sets. */
const RESET_OBJECT_META_FOR_STATUS: readonly StatusResetField[] = ['deletionTimestamp', 'generation', 'labels', 'annotations', 'finalizers', 'ownerReferences'];

/**
 * An update through `<plural>/status` of a built-in kind: the status strategy's PrepareForUpdate
 * (kube-apiserver 1.26.3, unchanged in 1.32) sets the spec back to the live object's, and only
 * these metadata fields: every other metadata change the request sends is stored. One entry per
 * built-in kind kube-sim serves with a status subresource (a unit test checks there is one).
 * deletionTimestamp and generation are the live object's on every update anyway (rest.BeforeUpdate).
 * Custom resources are not here: their status strategy keeps only status and managedFields.
 */
export const STATUS_STRATEGY_RESETS: Readonly<Record<string, readonly StatusResetField[]>> = {
  // pkg/registry/core/namespace/strategy.go, namespaceStatusStrategy: spec only (so admission must judge namespaces/status like the namespace).
  Namespace: [],
  // pkg/registry/core/resourcequota/strategy.go, resourcequotaStatusStrategy: spec only.
  ResourceQuota: [],
  // pkg/registry/core/pod/strategy.go, podStatusStrategy: spec, deletionTimestamp, ownerReferences.
  Pod: ['deletionTimestamp', 'ownerReferences'],
  // pkg/registry/apps/deployment/strategy.go, deploymentStatusStrategy: spec, labels.
  Deployment: ['labels'],
  // pkg/registry/admissionregistration/validatingadmissionpolicy/strategy.go, validatingAdmissionPolicyStatusStrategy: spec, ResetObjectMetaForStatus(new, old).
  ValidatingAdmissionPolicy: RESET_OBJECT_META_FOR_STATUS,
  // staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition/strategy.go, statusStrategy: spec; its ResetObjectMetaForStatus(new, new) resets nothing (the CRD finalizer drops its finalizer through /status).
  CustomResourceDefinition: [],
};

/** The metadata fields a status update of this kind sets back to the live object's; undefined for custom resources. */
export function statusStrategyResets(type: ResourceType): readonly StatusResetField[] | undefined {
  return type.crdName ? undefined : STATUS_STRATEGY_RESETS[type.kind];
}

/** Fields an update may not change, the status/main split, and generation (PrepareForUpdate). */
export function prepareForUpdate(type: ResourceType, live: KubeObject, next: KubeObject, subresource: string | undefined): KubeObject {
  let prepared: KubeObject;
  const resets = subresource === 'status' ? statusStrategyResets(type) : undefined;
  if (resets) {
    // A built-in kind's status strategy: the spec and the fields of its table entry are the live object's.
    prepared = structuredClone(next);
    keepLive(prepared as unknown as Record<string, unknown>, live as unknown as Record<string, unknown>, ['spec']);
    keepLive(prepared.metadata as Record<string, unknown>, live.metadata as Record<string, unknown>, resets);
  } else if (subresource === 'status') {
    // customresource/status_strategy.go: the live object with the request's status and managedFields.
    prepared = { ...structuredClone(live), status: next.status };
    prepared.metadata.managedFields = next.metadata.managedFields;
  } else {
    prepared = structuredClone(next);
    if (type.statusSubresource) {
      if (live.status === undefined) delete prepared.status;
      else prepared.status = structuredClone(live.status);
    }
  }
  keepLive(prepared.metadata as Record<string, unknown>, live.metadata as Record<string, unknown>,
    ['uid', 'creationTimestamp', 'deletionTimestamp', 'generation', 'name', 'namespace']);
  if (type.crdName && subresource !== 'status') prepared = applySchema(type, prepared);
  if (isNamespaceType(type) && !isObject(prepared.spec)) prepared.spec = live.spec;
  // spec.finalizers change only through namespaces/finalize (the namespace strategy keeps them on other updates).
  if (isNamespaceType(type) && subresource !== 'finalize') keepSpecFinalizers(prepared, live);
  return type.crdName ? sortedKeys(prepared) : prepared;
}

/** Each field of `target` becomes (a copy of) the live one's, or goes where the live object has none. */
function keepLive(target: Record<string, unknown>, live: Record<string, unknown>, fields: readonly string[]): void {
  for (const field of fields) {
    if (live[field] === undefined) Reflect.deleteProperty(target, field);
    else target[field] = structuredClone(live[field]);
  }
}

function keepSpecFinalizers(prepared: KubeObject, live: KubeObject): void {
  const finalizers = (live.spec as { finalizers?: unknown } | undefined)?.finalizers;
  const spec = { ...(prepared.spec as Record<string, unknown>) };
  if (finalizers === undefined) delete spec.finalizers;
  else spec.finalizers = structuredClone(finalizers);
  prepared.spec = spec;
}

function specChanged(type: ResourceType, live: KubeObject, next: KubeObject): boolean {
  const strip = (o: KubeObject): Record<string, unknown> => {
    const { metadata: _m, status, ...rest } = o;
    return type.statusSubresource ? rest : { ...rest, status };
  };
  return !deepEqual(strip(live), strip(next));
}

export function checkResourceVersion(req: ApiRequest, live: KubeObject, sent: KubeObject): void {
  const rv = sent.metadata.resourceVersion;
  if (rv && rv !== live.metadata.resourceVersion) throw staleConflict(groupResource(req.type), req.name!);
}

/**
 * Another write committed while this one was in admission (which awaits webhooks). etcd's
 * compare-and-swap refuses such a write; kube-apiserver's GuaranteedUpdate then runs the update
 * again on the fresh object, where a resourceVersion the client sent is stale: 409 Conflict.
 */
export class LostRace extends Error {}

const MAX_UPDATE_ATTEMPTS = 16;

export function retriedOnRace(once: (sim: Sim, req: ApiRequest) => Promise<ApiReply>): (sim: Sim, req: ApiRequest) => Promise<ApiReply> {
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

/**
 * An update that leaves a deleted object without finalizers deletes it (ShouldDeleteDuringUpdate),
 * even when it changes nothing; a namespace also needs its spec.finalizers empty, which the
 * namespace controller's namespaces/finalize does once the namespace's content is gone.
 */
function emptiedByUpdate(type: ResourceType, prepared: KubeObject): boolean {
  if (!prepared.metadata.deletionTimestamp || (prepared.metadata.finalizers ?? []).length > 0) return false;
  return !isNamespaceType(type) || ((prepared.spec as { finalizers?: unknown[] } | undefined)?.finalizers ?? []).length === 0;
}

export const updateObject = retriedOnRace(updateOnce);

async function updateOnce(sim: Sim, req: ApiRequest): Promise<ApiReply> {
  const obj = bodyObject(req);
  checkKind(req.type, obj);
  checkQuantities(req.type, obj, 'body');
  checkNamespaceOfBody(req, obj);
  checkNameOfBody(req, obj);
  const live = liveOrNotFound(sim, req);
  checkResourceVersion(req, live, obj);
  const next = withDefaults(sim, req.type, prepareForUpdate(req.type, live, obj, req.subresource));
  setManagedFields(next, recordUpdate(live, next, managersForWrite(live, obj), writeContext(req)));
  return commitUpdate(sim, req, live, next, requestOptions('UpdateOptions', req));
}

/** The update pipeline from mutating admission on; `next` already carries its managedFields. */
export async function commitUpdate(sim: Sim, req: ApiRequest, live: KubeObject, next: KubeObject, options: Record<string, unknown>): Promise<ApiReply> {
  const dryRun = dryRunOf(req);
  const warnings = dropUnknownWebhookFields(sim, req, next);
  const env = sim.admissionEnvironment(warnings);
  checkNamespaceLifecycle(sim, req, 'UPDATE', req.name!);
  next.metadata.resourceVersion = live.metadata.resourceVersion;
  const mutated = (await admitMutating(admissionAttributes(req, 'UPDATE', next, live, options, dryRun), env))!;
  const prepared = withDefaults(sim, req.type, prepareForUpdate(req.type, live, mutated, req.subresource === 'finalize' ? 'finalize' : undefined));
  if (req.subresource === 'status') prepared.status = mutated.status;
  if (req.type.generation && specChanged(req.type, live, prepared)) prepared.metadata.generation = (live.metadata.generation ?? 0) + 1;
  validateUpdate(req.type, live, prepared);
  await admitValidating(admissionAttributes(req, 'UPDATE', prepared, live, options, dryRun), env);
  const emptied = emptiedByUpdate(req.type, prepared);
  if (!emptied && deepEqual(prepared, live)) return { status: 200, body: live, warnings };
  if (dryRun) return { status: 200, body: prepared, warnings };
  const key = sim.keyOf(req.type);
  if (sim.store.get(key, live.metadata.namespace, live.metadata.name!)?.metadata.resourceVersion !== live.metadata.resourceVersion) throw new LostRace();
  if (emptied) return { status: 200, body: sim.store.delete(key, prepared.metadata.namespace, prepared.metadata.name!), warnings };
  return { status: 200, body: sim.store.update(key, prepared), warnings };
}
