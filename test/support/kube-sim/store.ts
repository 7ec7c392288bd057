// Storage, like etcd behind kube-apiserver: one monotonically increasing resourceVersion for the
// whole cluster, objects keyed by namespace and name, and a bounded history of changes from which
// watches resume. A watch from a resourceVersion older than the history gets 410 Expired, just as
// a real cluster answers once etcd has compacted.
import type { KubeObject } from '../../../shared/kube/types.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoredEvent {
  rv: number;
  type: WatchEventType;
  typeKey: string;
  object: KubeObject;
  /** The object before a MODIFIED (so a filtered watch can turn it into ADDED or DELETED) or a DELETED (so a continued list can show it). */
  previous?: KubeObject;
}

export type Listener = (event: StoredEvent) => void;

export function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

const clone = <T>(value: T): T => structuredClone(value);

/** Sorted by namespace then name, like etcd's key order; `keep` (read-only) filters before the copies are made. */
function sortedCopies(objects: ReadonlyMap<string, KubeObject>, namespace?: string, keep?: (obj: KubeObject) => boolean): KubeObject[] {
  const all = [...objects.entries()]
    .filter(([, obj]) => (namespace === undefined || obj.metadata.namespace === namespace) && (!keep || keep(obj)))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return all.map(([, obj]) => clone(obj));
}

export class Store {
  private rv: number;
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  /**
   * The same objects by kind and namespace: a list in one namespace reads that namespace's
   * objects, as kube-apiserver reads one etcd key range (`/registry/<kind>/<namespace>/`), not the
   * whole kind (a burst's per-namespace lists would otherwise cost the cluster's size).
   */
  private readonly byNamespace = new Map<string, Map<string, Map<string, KubeObject>>>();
  private readonly history: StoredEvent[] = [];
  private readonly historyLimit: number;
  private readonly listeners = new Set<Listener>();

  constructor(options: { historyLimit?: number; firstResourceVersion?: number } = {}) {
    this.historyLimit = options.historyLimit ?? 10_000;
    this.rv = options.firstResourceVersion ?? 100;
  }

  currentResourceVersion(): number {
    return this.rv;
  }

  /** Watches may start at any resourceVersion from this one on. */
  oldestResumableResourceVersion(): number {
    const first = this.history[0];
    return first ? first.rv - 1 : this.rv;
  }

  get(typeKey: string, namespace: string | undefined, name: string): KubeObject | undefined {
    const found = this.objects.get(typeKey)?.get(objectKey(namespace, name));
    return found && clone(found);
  }

  /**
   * Sorted by namespace then name, like etcd's key order. `keep` (read-only) filters before the
   * copies are made, so a selective list of a large collection costs only what it returns.
   */
  list(typeKey: string, namespace?: string, keep?: (obj: KubeObject) => boolean): KubeObject[] {
    const scope = namespace === undefined ? this.objects.get(typeKey) : this.byNamespace.get(typeKey)?.get(namespace);
    return sortedCopies(scope ?? new Map(), namespace, keep);
  }

  /**
   * The list as it stood at `rv`: a continued list is served from its first page's snapshot, as
   * etcd serves kube-apiserver's. The changes since are undone; undefined when the history no
   * longer reaches back that far.
   */
  listAt(typeKey: string, rv: number, namespace?: string, keep?: (obj: KubeObject) => boolean): KubeObject[] | undefined {
    if (rv < this.oldestResumableResourceVersion()) return undefined;
    const at = new Map(this.objects.get(typeKey) ?? []);
    for (let i = this.history.length - 1; i >= 0 && this.history[i]!.rv > rv; i--) {
      const e = this.history[i]!;
      if (e.typeKey !== typeKey) continue;
      const key = objectKey(e.object.metadata.namespace, e.object.metadata.name!);
      if (e.type === 'ADDED') at.delete(key);
      else at.set(key, e.previous ?? e.object);
    }
    return sortedCopies(at, namespace, keep);
  }

  /** Every stored kind, for namespace deletion and garbage collection. */
  typeKeys(): string[] {
    return [...this.objects.keys()];
  }

  /**
   * Kinds stored as unstructured maps (custom resources): the real server encodes their keys
   * sorted, so the resourceVersion it sets takes its sorted place in metadata.
   */
  readonly unstructured = new Set<string>();

  create(typeKey: string, obj: KubeObject): KubeObject {
    const stored = this.stamp(obj, typeKey);
    this.put(typeKey, objectKey(stored.metadata.namespace, stored.metadata.name!), stored);
    this.record({ rv: this.rv, type: 'ADDED', typeKey, object: stored });
    return clone(stored);
  }

  update(typeKey: string, obj: KubeObject): KubeObject {
    const key = objectKey(obj.metadata.namespace, obj.metadata.name!);
    const previous = this.bucket(typeKey).get(key);
    const stored = this.stamp(obj, typeKey);
    this.put(typeKey, key, stored);
    this.record({ rv: this.rv, type: 'MODIFIED', typeKey, object: stored, ...(previous ? { previous } : {}) });
    return clone(stored);
  }

  delete(typeKey: string, namespace: string | undefined, name: string): KubeObject | undefined {
    const key = objectKey(namespace, name);
    const existing = this.bucket(typeKey).get(key);
    if (!existing) return undefined;
    this.bucket(typeKey).delete(key);
    const inNamespace = this.byNamespace.get(typeKey)?.get(namespace ?? '');
    inNamespace?.delete(key);
    if (inNamespace?.size === 0) this.byNamespace.get(typeKey)!.delete(namespace ?? '');
    const stored = this.stamp(existing, typeKey);
    this.record({ rv: this.rv, type: 'DELETED', typeKey, object: stored, previous: existing });
    return clone(stored);
  }

  /** Events of one kind after `rv`, or undefined when the history no longer reaches back that far. */
  eventsSince(typeKey: string, rv: number): StoredEvent[] | undefined {
    if (rv < this.oldestResumableResourceVersion()) return undefined;
    return this.history.filter((e) => e.typeKey === typeKey && e.rv > rv).map(clone);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Forget history so that any watch from before now is too old (for 410 tests). */
  compact(): void {
    this.history.length = 0;
  }

  /** Stores `obj` under `key` in both indexes (namespace '' for cluster-scoped objects). */
  private put(typeKey: string, key: string, obj: KubeObject): void {
    this.bucket(typeKey).set(key, obj);
    let kind = this.byNamespace.get(typeKey);
    if (!kind) this.byNamespace.set(typeKey, (kind = new Map()));
    const ns = obj.metadata.namespace ?? '';
    let inNamespace = kind.get(ns);
    if (!inNamespace) kind.set(ns, (inNamespace = new Map()));
    inNamespace.set(key, obj);
  }

  private bucket(typeKey: string): Map<string, KubeObject> {
    let bucket = this.objects.get(typeKey);
    if (!bucket) {
      bucket = new Map();
      this.objects.set(typeKey, bucket);
    }
    return bucket;
  }

  private stamp(obj: KubeObject, typeKey: string): KubeObject {
    this.rv += 1;
    const stored = clone(obj);
    stored.metadata.resourceVersion = String(this.rv);
    if (this.unstructured.has(typeKey)) {
      const meta = stored.metadata as Record<string, unknown>;
      stored.metadata = Object.fromEntries(Object.keys(meta).sort().map((k) => [k, meta[k]])) as KubeObject['metadata'];
    }
    return stored;
  }

  private record(event: StoredEvent): void {
    this.history.push(event);
    if (this.history.length > this.historyLimit) this.history.splice(0, this.history.length - this.historyLimit);
    for (const listener of this.listeners) listener(clone(event));
  }
}
