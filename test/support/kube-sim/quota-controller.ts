// kube-controller-manager's resource quota controller, and the usage accounting of the
// ResourceQuota admission plugin, as clients observe them: a quota created (or its spec.hard
// changed) gets status.hard and status.used in a separate write of the status subresource, by
// manager `kube-controller-manager` (one more resourceVersion, a MODIFIED event, a managedFields
// entry with `subresource: status`); an object created in its namespace adds to used (manager
// `kube-apiserver`, as the admission plugin writes it); one deleted, or whose usage changed,
// makes the controller count again. Nothing is refused: quotas are not enforced.
import type { KubeObject } from '../../../shared/kube/types.ts';
import { withImplicitGroups, type Authenticated } from './authn.ts';
import { ApiError } from './errors.ts';
import { deepEqual } from './fieldsets.ts';
import { updateObject, type ApiRequest } from './operations.ts';
import { ALWAYS_SERVED, calculateUsage, evaluators, quotaStatus, scopesOf, tracks, usageOf, usedAfterCreate, type CountableKind, type Evaluator } from './quota-usage.ts';
import { typeKey, type ResourceType } from './resources.ts';
import type { Sim } from './sim.ts';
import type { StoredEvent } from './store.ts';

const QUOTA_KEY = typeKey('', 'resourcequotas');
const CRD_KEY = typeKey('apiextensions.k8s.io', 'customresourcedefinitions');
const RETRY_MS = 100;
const MAX_ATTEMPTS = 50;

/** Who writes: the controller's service account (--use-service-account-credentials), or the API server's loopback client. */
const WRITERS: Record<'controller' | 'admission', { user: Authenticated; userAgent: string }> = {
  controller: {
    user: { username: 'system:serviceaccount:kube-system:resourcequota-controller', uid: 'resourcequota-controller-uid', groups: withImplicitGroups('system:serviceaccount:kube-system:resourcequota-controller', []) },
    userAgent: 'kube-controller-manager/v1.32.0 (linux/amd64) kubernetes/kube-sim/system:serviceaccount:kube-system:resourcequota-controller',
  },
  admission: {
    user: { username: 'system:apiserver', uid: 'apiserver-uid', groups: withImplicitGroups('system:apiserver', ['system:masters']) },
    userAgent: 'kube-apiserver/v1.32.0 (linux/amd64) kubernetes/kube-sim',
  },
};

type Later = (work: () => void | Promise<void>, delayMs?: number) => void;

const hardOf = (quota: KubeObject | undefined): Record<string, unknown> => ((quota?.spec as { hard?: Record<string, unknown> } | undefined)?.hard ?? {});
const statusHardNames = (quota: KubeObject): string[] => Object.keys((quota.status as { hard?: object } | undefined)?.hard ?? {});

export class QuotaController {
  private readonly sim: Sim;
  private readonly later: Later;
  /** namespace → its quotas → the names of their status.hard, so that an object written elsewhere costs one map lookup. */
  private readonly quotas = new Map<string, Map<string, string[]>>();
  /** The evaluators of the kinds served now (CRDs change them). */
  private cached: Evaluator[] | undefined;

  constructor(sim: Sim, later: Later) {
    this.sim = sim;
    this.later = later;
  }

  observe(event: StoredEvent): void {
    if (event.typeKey === CRD_KEY) this.cached = undefined;
    const { namespace, name } = event.object.metadata;
    if (!namespace) return;
    if (event.typeKey === QUOTA_KEY) this.index(event, namespace, name!);
    if (event.typeKey === QUOTA_KEY && this.specChanged(event)) this.later(() => this.sync(namespace, name!, 0));
    const quotas = this.quotas.get(namespace);
    if (!quotas) return;
    const [plural, ...group] = event.typeKey.split('.');
    for (const [quotaName, hard] of quotas) {
      const evaluator = tracks(this.evaluators(), group.join('.'), plural!, hard);
      if (!evaluator) continue;
      if (event.type === 'ADDED') this.later(() => this.account(namespace, quotaName, evaluator, event.object, 0));
      else if (event.type === 'DELETED' || !deepEqual(usageOf(evaluator, event.previous!), usageOf(evaluator, event.object))) {
        // Replenishment: the controller counts again when usage may have gone down.
        this.later(() => this.sync(namespace, quotaName, 0));
      }
    }
  }

  private index(event: StoredEvent, namespace: string, name: string): void {
    const quotas = this.quotas.get(namespace) ?? new Map<string, string[]>();
    if (event.type === 'DELETED') quotas.delete(name);
    else quotas.set(name, statusHardNames(event.object));
    if (quotas.size > 0) this.quotas.set(namespace, quotas);
    else this.quotas.delete(namespace);
  }

  /** The controller's informer: a new quota, or a change of spec.hard (status writes are ignored). */
  private specChanged(event: StoredEvent): boolean {
    if (event.type === 'ADDED') return true;
    return event.type === 'MODIFIED' && !deepEqual(hardOf(event.previous), hardOf(event.object));
  }

  /** The served namespaced kinds the controller can list, plus those every real server serves. */
  private evaluators(): Evaluator[] {
    if (this.cached) return this.cached;
    const served: CountableKind[] = this.sim.registry.all().filter((t) => t.namespaced && t.verbs.includes('list')).map((t) => ({ group: t.group, plural: t.plural }));
    const known = new Set(served.map((k) => typeKey(k.group, k.plural)));
    this.cached = evaluators([...served, ...ALWAYS_SERVED.filter((k) => !known.has(typeKey(k.group, k.plural)))]);
    return this.cached;
  }

  /** syncResourceQuota: count everything the quota names and write the status when it differs. */
  private async sync(namespace: string, name: string, attempt: number): Promise<void> {
    const quota = this.sim.store.get(QUOTA_KEY, namespace, name);
    if (!quota) return;
    const all = this.evaluators();
    const hard = Object.keys(hardOf(quota));
    const usage = calculateUsage(all, hard, scopesOf(quota), (e) => this.sim.store.list(typeKey(e.group, e.plural), namespace));
    const status = quotaStatus(quota, usage);
    if (deepEqual(status, quota.status)) return;
    await this.writeStatus(quota, status, 'controller', () => this.sync(namespace, name, attempt + 1), attempt);
  }

  /** The admission plugin's accounting of a created object (only once the controller has filled status.hard). */
  private async account(namespace: string, name: string, evaluator: Evaluator, obj: KubeObject, attempt: number): Promise<void> {
    const quota = this.sim.store.get(QUOTA_KEY, namespace, name);
    const used = quota && usedAfterCreate(quota, evaluator, obj);
    if (!quota || !used) return;
    await this.writeStatus(quota, { ...(quota.status as object), used }, 'admission', () => this.account(namespace, name, evaluator, obj, attempt + 1), attempt);
  }

  /** PUT resourcequotas/NAME/status with the resourceVersion read; a conflict or a refusal is tried again. */
  private async writeStatus(quota: KubeObject, status: object, writer: keyof typeof WRITERS, again: () => Promise<void>, attempt: number): Promise<void> {
    const type = this.sim.registry.get('', 'v1', 'resourcequotas') as ResourceType;
    const req: ApiRequest = {
      verb: 'update', type, namespace: quota.metadata.namespace!, name: quota.metadata.name!, subresource: 'status',
      body: { ...quota, status }, query: new URLSearchParams(), ...WRITERS[writer],
    };
    try {
      await updateObject(this.sim, req);
    } catch (error) {
      if (error instanceof ApiError && error.code === 404) return;
      if (attempt + 1 < MAX_ATTEMPTS) this.later(again, RETRY_MS);
    }
  }
}
