// The few controllers whose effects clients observe through the API: CRDs becoming served kinds,
// the namespace controller (terminating namespaces are emptied, then finalized through admission), the garbage
// collector (ownerReferences), and the controllers that put the `default` ServiceAccount and the
// `kube-root-ca.crt` ConfigMap into every new namespace; the resource quota controller is in
// quota-controller.ts.
import type { KubeObject, ObjectMeta } from '../../../shared/kube/types.ts';
import { withImplicitGroups } from './authn.ts';
import { resourceTypeFromCrd } from './crd.ts';
import { ApiError } from './errors.ts';
import { deepEqual } from './fieldsets.ts';
import { nowTime } from './managed-fields.ts';
import { createObject, deleteCollection, updateObject, type ApiRequest, type DeletionHooks } from './operations.ts';
import { QuotaController } from './quota-controller.ts';
import { typeKey, type ResourceType } from './resources.ts';
import type { Sim } from './sim.ts';
import type { StoredEvent } from './store.ts';

const CRD_KEY = typeKey('apiextensions.k8s.io', 'customresourcedefinitions');
const NAMESPACE_KEY = typeKey('', 'namespaces');
const RETRY_MS = 100;
const MAX_RETRIES = 300;
const MAX_CONFLICT_RETRIES = 5;
/** The namespace controller's token in a namespace's spec.finalizers. */
const FINALIZER_TOKEN = 'kubernetes';
/**
 * The namespace controller's backoff while admission refuses its writes: kube-controller-manager's
 * per-namespace 5 ms, doubling at each refusal (capped there at 60 s; here at 5 s, so that a test
 * sees a refusal lifted within seconds).
 */
const REFUSAL_BACKOFF_BASE_MS = 5;
const REFUSAL_BACKOFF_MAX_MS = 5_000;

export const refusalBackoffMs = (refusals: number): number => Math.min(REFUSAL_BACKOFF_BASE_MS * 2 ** Math.max(refusals - 1, 0), REFUSAL_BACKOFF_MAX_MS);

interface NamespaceCondition {
  type: string;
  status: string;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
}

/** What the namespace controller reports once a namespace's content is gone (the success form of each of its conditions, in its order). */
const DELETION_CONDITIONS: ReadonlyArray<Omit<NamespaceCondition, 'lastTransitionTime'>> = [
  { type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
  { type: 'NamespaceDeletionGroupVersionParsingFailure', status: 'False', reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
  { type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
  { type: 'NamespaceContentRemaining', status: 'False', reason: 'ContentRemoved', message: 'All content successfully removed' },
  { type: 'NamespaceFinalizersRemaining', status: 'False', reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
];

/**
 * A namespace's conditions with the deletion conditions set as the controller's condition updater
 * sets them: other conditions first (kept), then its own in its order, an unchanged one keeping its
 * lastTransitionTime.
 */
export function withDeletionConditions(current: NamespaceCondition[], now: string): NamespaceCondition[] {
  const own = new Set(DELETION_CONDITIONS.map((c) => c.type));
  const same = (a: Omit<NamespaceCondition, 'lastTransitionTime'>, b: NamespaceCondition | undefined): b is NamespaceCondition =>
    b !== undefined && a.status === b.status && a.reason === b.reason && a.message === b.message;
  return [
    ...current.filter((c) => !own.has(c.type)),
    ...DELETION_CONDITIONS.map(({ type, status, reason, message }) => {
      const old = current.find((c) => c.type === type);
      return { type, status, lastTransitionTime: same({ type, status, reason, message }, old) ? old.lastTransitionTime ?? null : now, reason, message };
    }),
  ];
}

const specFinalizers = (ns: KubeObject): string[] => ((ns.spec as { finalizers?: string[] } | undefined)?.finalizers ?? []);

interface OwnerReference {
  uid: string;
}

export class Controllers implements DeletionHooks {
  private readonly sim: Sim;
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly orphaned = new Set<string>();
  /** Terminating namespaces the namespace controller works on, with how many of its passes admission refused (its backoff; forgotten once done). */
  private readonly terminating = new Map<string, number>();
  /** uids of stored objects (from the store's events), so that checking an owner costs no scan. */
  private readonly liveUids = new Set<string>();
  private readonly unsubscribe: () => void;
  private readonly quota: QuotaController | undefined;
  private stopped = false;

  constructor(sim: Sim) {
    this.sim = sim;
    if (sim.options.resourceQuotaController) this.quota = new QuotaController(sim, (work, delayMs) => this.later(work, delayMs));
    this.unsubscribe = sim.store.subscribe((event) => this.observe(event));
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /** Runs `work` later, unless the cluster has stopped by then. */
  private later(work: () => void | Promise<void>, delayMs = 0): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.stopped) void work();
    }, delayMs);
    this.timers.add(timer);
  }

  private observe(event: StoredEvent): void {
    const uid = event.object.metadata.uid;
    if (uid && event.type === 'ADDED') this.liveUids.add(uid);
    if (uid && event.type === 'DELETED') this.liveUids.delete(uid);
    if (event.typeKey === CRD_KEY) this.syncCrd(event);
    if (event.type === 'DELETED' && uid) {
      this.later(() => this.collectGarbage(uid));
    } else if ((event.object.metadata.ownerReferences ?? []).length > 0) {
      // Like kube-controller-manager's garbage collector, which verifies the owners of every new
      // or changed dependent: one written with owners that are already gone is collected too.
      const { namespace, name } = event.object.metadata;
      this.later(() => this.collectIfOwnersGone(event.typeKey, namespace, name!));
    }
    if (event.typeKey === NAMESPACE_KEY && event.type === 'ADDED' && this.sim.options.namespaceDefaultObjects) {
      this.later(() => this.furnishNamespace(event.object.metadata.name!, 0));
    }
    this.quota?.observe(event);
  }

  // --- CRDs ------------------------------------------------------------------------------

  private syncCrd(event: StoredEvent): void {
    const type = resourceTypeFromCrd(event.object);
    if (!type) return;
    if (event.type !== 'DELETED') {
      this.sim.registry.add(type);
      return;
    }
    this.sim.registry.remove(type.group, type.plural);
    const key = typeKey(type.group, type.plural);
    for (const obj of this.sim.store.list(key)) this.sim.store.delete(key, obj.metadata.namespace, obj.metadata.name!);
  }

  // --- namespaces ------------------------------------------------------------------------

  namespaceTerminating(name: string): void {
    // One queue entry per namespace, as the real controller's workqueue: a second DELETE adds none.
    if (this.terminating.has(name)) return;
    this.terminating.set(name, 0);
    this.later(() => this.syncNamespace(name), this.sim.options.namespaceDeletionDelayMs);
  }

  /** One pass over a terminating namespace, then the next: soon while content remains, backing off while admission refuses. */
  private async syncNamespace(name: string): Promise<void> {
    const outcome = await this.deleteNamespace(name);
    if (this.stopped) return;
    if (outcome === 'done') {
      this.terminating.delete(name);
      return;
    }
    const refusals = (this.terminating.get(name) ?? 0) + (outcome === 'refused' ? 1 : 0);
    this.terminating.set(name, refusals);
    this.later(() => this.syncNamespace(name), outcome === 'refused' ? refusalBackoffMs(refusals) : RETRY_MS);
  }

  /**
   * kube-controller-manager's namespace deleter, as system:serviceaccount:kube-system:namespace-controller,
   * every write through admission (the audit logs of 1.26.3 and 1.32.0-rc.0): a deletecollection per
   * kind (webhooks see a DELETE without a name, the object in oldObject); once nothing is left, the
   * deletion conditions through namespaces/status (a refusal there is only logged), then the
   * `kubernetes` finalizer removed through namespaces/finalize, which deletes the namespace unless
   * metadata.finalizers hold it. A refused write leaves it Terminating for the next pass.
   */
  private async deleteNamespace(name: string): Promise<'done' | 'remaining' | 'refused'> {
    const ns = this.sim.store.get(NAMESPACE_KEY, undefined, name);
    if (!ns?.metadata.deletionTimestamp || specFinalizers(ns).length === 0) return 'done';
    const content = await this.deleteContent(name);
    if (content !== 'empty') return content;
    if (this.stopped) return 'done';
    await this.writeDeletionConditions(name);
    return this.finalizeNamespace(name);
  }

  private async deleteContent(name: string): Promise<'empty' | 'remaining' | 'refused'> {
    let remaining = 0;
    let refused = false;
    for (const type of this.sim.registry.all().filter((t) => t.namespaced)) {
      const key = typeKey(type.group, type.plural);
      if (this.sim.store.list(key, name).length === 0) continue;
      try {
        const request = this.controllerRequest('namespace-controller', type, name, undefined, 'deletecollection');
        request.query.set('propagationPolicy', 'Background');
        await deleteCollection(this.sim, request, this);
      } catch {
        refused = true;
      }
      remaining += this.sim.store.list(key, name).length;
    }
    // Objects with finalizers of others hold the namespace until they go.
    return refused ? 'refused' : remaining > 0 ? 'remaining' : 'empty';
  }

  private namespaceRequest(name: string, body: KubeObject, subresource: string): ApiRequest {
    const type = this.sim.registry.get('', 'v1', 'namespaces')!;
    return { ...this.controllerRequest('namespace-controller', type, undefined, body, 'update'), name, subresource };
  }

  private async writeDeletionConditions(name: string): Promise<void> {
    const ns = this.sim.store.get(NAMESPACE_KEY, undefined, name);
    const status = (ns?.status ?? {}) as { conditions?: NamespaceCondition[] };
    const conditions = withDeletionConditions(status.conditions ?? [], nowTime());
    if (!ns || deepEqual(conditions, status.conditions ?? [])) return;
    try {
      await updateObject(this.sim, this.namespaceRequest(name, { ...ns, status: { ...status, conditions } }, 'status'));
    } catch {
      // kube-controller-manager logs it ("couldn't update status condition for namespace") and goes on.
    }
  }

  /** The namespace with the `kubernetes` finalizer removed through namespaces/finalize; a conflict is retried at once with the fresh namespace, as retryOnConflictError does. */
  private async finalizeNamespace(name: string): Promise<'done' | 'refused'> {
    for (let attempt = 0; attempt < MAX_CONFLICT_RETRIES; attempt++) {
      const ns = this.sim.store.get(NAMESPACE_KEY, undefined, name);
      if (!ns) return 'done';
      const { status: _status, ...rest } = ns;
      const finalizers = specFinalizers(ns).filter((f) => f !== FINALIZER_TOKEN).sort();
      try {
        await updateObject(this.sim, this.namespaceRequest(name, { ...rest, spec: { ...(ns.spec as object), finalizers } }, 'finalize'));
        return 'done';
      } catch (error) {
        if (error instanceof ApiError && error.code === 404) return 'done';
        if (!(error instanceof ApiError && error.code === 409)) return 'refused';
      }
    }
    return 'refused';
  }

  // --- garbage collection ----------------------------------------------------------------

  deleted(_type: ResourceType, obj: KubeObject, propagationPolicy: string | undefined): void {
    if (propagationPolicy === 'Orphan' && obj.metadata.uid) this.orphaned.add(obj.metadata.uid);
  }

  private ownerExists(uid: string): boolean {
    if (this.liveUids.has(uid)) return true;
    // Objects stored before the controllers subscribed are not in the index.
    return this.sim.store.typeKeys().some((key) => this.sim.store.list(key).some((o) => o.metadata.uid === uid));
  }

  /** A dependent drops references to owners that do not exist; with none left alive it is deleted. */
  private collectIfOwnersGone(key: string, namespace: string | undefined, name: string): void {
    const obj = this.sim.store.get(key, namespace, name);
    const refs = (obj?.metadata.ownerReferences ?? []) as OwnerReference[];
    if (!obj || refs.length === 0 || obj.metadata.deletionTimestamp) return;
    const live = refs.filter((r) => this.ownerExists(r.uid));
    if (live.length === refs.length) return;
    this.release(key, obj, live);
  }

  /** Keeps the dependent with only its live owners' references, or deletes it when none is left. */
  private release(key: string, obj: KubeObject, remaining: OwnerReference[], orphan = false): void {
    if (orphan || remaining.length > 0) {
      const metadata: ObjectMeta = { ...obj.metadata, ownerReferences: remaining };
      if (remaining.length === 0) delete metadata.ownerReferences;
      this.sim.store.update(key, { ...obj, metadata });
    } else if (key === NAMESPACE_KEY) {
      // A namespace is deleted as through the API: Terminating, emptied, then removed.
      if (!obj.metadata.deletionTimestamp) this.sim.store.update(key, { ...obj, metadata: { ...obj.metadata, deletionTimestamp: nowTime() }, status: { ...(obj.status as object), phase: 'Terminating' } });
      this.namespaceTerminating(obj.metadata.name!);
    } else if ((obj.metadata.finalizers ?? []).length > 0) {
      if (!obj.metadata.deletionTimestamp) this.sim.store.update(key, { ...obj, metadata: { ...obj.metadata, deletionTimestamp: nowTime() } });
    } else {
      this.sim.store.delete(key, obj.metadata.namespace, obj.metadata.name!);
    }
  }

  /** Dependents lose the reference to a deleted owner; those left with no live owner are deleted. */
  private collectGarbage(ownerUid: string): void {
    const orphan = this.orphaned.delete(ownerUid);
    for (const key of this.sim.store.typeKeys()) {
      for (const obj of this.sim.store.list(key)) {
        const refs = (obj.metadata.ownerReferences ?? []) as OwnerReference[];
        if (!refs.some((r) => r.uid === ownerUid)) continue;
        const remaining = refs.filter((r) => r.uid !== ownerUid);
        this.release(key, obj, orphan || remaining.some((r) => this.ownerExists(r.uid)) ? remaining : [], orphan);
      }
    }
  }

  // --- the default ServiceAccount and root CA ConfigMap ----------------------------------

  private controllerRequest(controller: string, type: ResourceType, namespace: string | undefined, body: KubeObject | undefined, verb = 'create'): ApiRequest {
    const username = `system:serviceaccount:kube-system:${controller}`;
    return {
      verb, type, ...(namespace ? { namespace } : {}), ...(body ? { body } : {}), query: new URLSearchParams(), userAgent: 'kube-controller-manager/v1.32.0 (linux/amd64) kubernetes/kube-sim',
      user: { username, uid: `${controller}-uid`, groups: withImplicitGroups(username, []) },
    };
  }

  /** Creates what kube-controller-manager creates in a new namespace, retrying like a controller when admission refuses. */
  private async furnishNamespace(namespace: string, attempt: number): Promise<void> {
    const ns = this.sim.namespace(namespace);
    if (!ns || ns.metadata.deletionTimestamp) return;
    const wanted: Array<[string, ResourceType, KubeObject]> = [
      ['service-account-controller', this.sim.registry.get('', 'v1', 'serviceaccounts')!,
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } }],
      ['root-ca-cert-publisher', this.sim.registry.get('', 'v1', 'configmaps')!,
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-root-ca.crt', namespace, annotations: { 'kubernetes.io/description': 'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.' } }, data: { 'ca.crt': this.sim.caPem } }],
    ];
    let failed = false;
    for (const [controller, type, body] of wanted) {
      if (this.sim.store.get(typeKey(type.group, type.plural), namespace, body.metadata.name!)) continue;
      try {
        await createObject(this.sim, this.controllerRequest(controller, type, namespace, body));
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 409) failed = true;
      }
    }
    if (failed && attempt < MAX_RETRIES && !this.stopped) this.later(() => this.furnishNamespace(namespace, attempt + 1), RETRY_MS);
  }
}
