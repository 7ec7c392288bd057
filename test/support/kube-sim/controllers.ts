// The few controllers whose effects clients observe through the API: CRDs becoming served kinds,
// the namespace controller (terminating namespaces are emptied, then removed), the garbage
// collector (ownerReferences), and the controllers that put the `default` ServiceAccount and the
// `kube-root-ca.crt` ConfigMap into every new namespace; the resource quota controller is in
// quota-controller.ts.
import type { KubeObject, ObjectMeta } from '../../../shared/kube/types.ts';
import { withImplicitGroups } from './authn.ts';
import { resourceTypeFromCrd } from './crd.ts';
import { ApiError } from './errors.ts';
import { nowTime } from './managed-fields.ts';
import { createObject, deleteCollection, type ApiRequest, type DeletionHooks } from './operations.ts';
import { QuotaController } from './quota-controller.ts';
import { typeKey, type ResourceType } from './resources.ts';
import type { Sim } from './sim.ts';
import type { StoredEvent } from './store.ts';

const CRD_KEY = typeKey('apiextensions.k8s.io', 'customresourcedefinitions');
const NAMESPACE_KEY = typeKey('', 'namespaces');
const RETRY_MS = 100;
const MAX_RETRIES = 300;

interface OwnerReference {
  uid: string;
}

export class Controllers implements DeletionHooks {
  private readonly sim: Sim;
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly orphaned = new Set<string>();
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
    this.later(() => this.finalizeNamespace(name), this.sim.options.namespaceDeletionDelayMs);
  }

  /**
   * Empties the namespace as kube-controller-manager's namespace controller does: a deletecollection
   * per kind, as system:serviceaccount:kube-system:namespace-controller, through admission (webhooks
   * see a DELETE without a name, the object in oldObject). Refused deletes and objects with
   * finalizers hold the namespace; the controller tries again until they go.
   */
  private async finalizeNamespace(name: string): Promise<void> {
    let remaining = 0;
    for (const type of this.sim.registry.all().filter((t) => t.namespaced)) {
      const key = typeKey(type.group, type.plural);
      if (this.sim.store.list(key, name).length === 0) continue;
      try {
        const request = this.controllerRequest('namespace-controller', type, name, undefined, 'deletecollection');
        request.query.set('propagationPolicy', 'Background');
        await deleteCollection(this.sim, request, this);
      } catch {
        // Refused by admission (or a webhook failed): retried, as the real controller does.
      }
      remaining += this.sim.store.list(key, name).length;
    }
    if (this.stopped) return;
    if (remaining > 0) {
      this.later(() => this.finalizeNamespace(name), RETRY_MS);
      return;
    }
    // Finalizers of others (metadata.finalizers) hold it Terminating, as on kube-apiserver, until they go.
    const held = this.sim.store.get(NAMESPACE_KEY, undefined, name);
    if (!held) return;
    if ((held.metadata.finalizers ?? []).length > 0) {
      this.later(() => this.finalizeNamespace(name), RETRY_MS);
      return;
    }
    this.sim.store.delete(NAMESPACE_KEY, undefined, name);
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

  private controllerRequest(controller: string, type: ResourceType, namespace: string, body: KubeObject | undefined, verb = 'create'): ApiRequest {
    const username = `system:serviceaccount:kube-system:${controller}`;
    return {
      verb, type, namespace, ...(body ? { body } : {}), query: new URLSearchParams(), userAgent: 'kube-controller-manager/v1.32.0 (linux/amd64) kubernetes/kube-sim',
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
