// Drift repaired in seconds: the relay also watches, cluster-wide, the kinds templates apply,
// selected by Furnish's label, and asks for a reconcile of the namespace whenever anyone but the
// reconciler changes or deletes one of them (or takes Furnish's label off, which the label-selected
// watch reports as a deletion). The reconcile judges drift against the server's answer
// (observed.ts) and re-applies only what really moved. The same watch, with another selector and
// decision, repairs what LNamespaces hold (lnamespace/relay.ts).
import { FIELD_MANAGER, KEY } from '../keys.ts';
import type { KubeClient, WatchHandle } from '../kube/client.ts';
import type { KubeObject } from '../kube/types.ts';
import type { Logger } from '../log.ts';
import { backoffDelay, WATCH_RECONNECT } from '../kube/retry.ts';

/** What templates usually hold; FURNISH_DRIFT_RESOURCES replaces it (`plural` core, `plural.group/version`). */
export const DEFAULT_DRIFT_RESOURCES = ['configmaps', 'serviceaccounts', 'resourcequotas', 'limitranges', 'networkpolicies.networking.k8s.io/v1', 'rolebindings.rbac.authorization.k8s.io/v1', 'roles.rbac.authorization.k8s.io/v1'];

/** `/api/v1/configmaps` or `/apis/networking.k8s.io/v1/networkpolicies` for a resource spelled as in FURNISH_DRIFT_RESOURCES. */
export function driftPath(resource: string): string {
  const dot = resource.indexOf('.');
  if (dot < 0) return `/api/v1/${resource}`;
  const plural = resource.slice(0, dot);
  const [group, version = 'v1'] = resource.slice(dot + 1).split('/');
  return `/apis/${group}/${version}/${plural}`;
}

interface ManagedEntry {
  manager?: string;
  time?: string;
  subresource?: string;
}

/**
 * Whether the last write recorded on the object was the reconciler's own: every newest managedFields
 * entry is a manager `ours` accepts (by default the namespace reconciler's FIELD_MANAGER). Writes
 * of the status subresource do not count: templates never set status (it is not compared), and a
 * controller keeping it (the quota controller filling a ResourceQuota's `used`) is not drift.
 */
export function lastWrittenByFurnish(obj: KubeObject, ours: (manager: string) => boolean = (m) => m === FIELD_MANAGER): boolean {
  const entries = ((obj.metadata.managedFields ?? []) as ManagedEntry[]).filter((e) => e.subresource !== 'status');
  if (entries.length === 0) return false;
  const newest = entries.reduce((a, b) => ((b.time ?? '') > (a.time ?? '') ? b : a));
  const newestTime = newest.time ?? '';
  // Same-second entries cannot be ordered: count it as someone else's, a reconcile costs reads only.
  return entries.filter((e) => (e.time ?? '') === newestTime).every((e) => ours(e.manager ?? ''));
}

/** The namespace to reconcile for a watch event, or null when the event is Furnish's own doing. */
export function driftedNamespace(type: string, obj: KubeObject | undefined): string | null {
  const ns = obj?.metadata?.namespace;
  if (!ns) return null;
  if (type === 'DELETED') return ns;
  if (type === 'MODIFIED') return lastWrittenByFurnish(obj) ? null : ns;
  return null;
}

export interface DriftCounters {
  driftEvents: number;
}

export interface DriftWatch {
  stop(): Promise<void>;
  /** Every watch has started and none is silent. */
  counters: DriftCounters;
}

export interface DriftWatchDeps {
  kube: KubeClient;
  resources: readonly string[];
  watchTimeoutSeconds: number;
  log: Logger;
  /** Label selector of the objects watched (default: Furnish's template label). */
  selector?: string;
  /** What to reconcile for a watch event (default: the namespace of a template's object, driftedNamespace). */
  decide?: (type: string, obj: KubeObject | undefined) => string[];
  onDrift: (name: string) => void;
  sleep?: (ms: number) => Promise<void>;
}

const namespaceOf = (type: string, obj: KubeObject | undefined): string[] => {
  const ns = driftedNamespace(type, obj);
  return ns ? [ns] : [];
};

export function watchDrift(deps: DriftWatchDeps): DriftWatch {
  const { kube, log } = deps;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const counters: DriftCounters = { driftEvents: 0 };
  const handles = new Set<WatchHandle>();
  const selector = deps.selector ?? KEY.template;
  const decide = deps.decide ?? namespaceOf;
  let stopped = false;

  /** Where to watch from: the collection's current resourceVersion (nothing before it is drift we missed; the resync covers that). */
  async function currentVersion(path: string): Promise<string | null> {
    const res = await kube.call<{ metadata?: { resourceVersion?: string } }>({ method: 'GET', path, query: { labelSelector: selector, limit: 1 } });
    return res.ok ? res.data?.metadata?.resourceVersion ?? '' : null;
  }

  async function loop(resource: string): Promise<void> {
    const path = driftPath(resource);
    let rv: string | null = null;
    let failures = 0;
    while (!stopped) {
      rv ??= await currentVersion(path);
      if (stopped) break; // stopped while listing: a watch opened now would outlive stop()
      if (rv === null) {
        // Not served (no such kind here) or not allowed: say so once in a while, never spin.
        failures += 1;
        if (failures === 1) log.log('WARNING', 'drift watch cannot list; retrying with backoff', { resource });
        await sleep(backoffDelay(WATCH_RECONNECT, failures));
        continue;
      }
      let expired = false;
      const handle: WatchHandle = kube.watch({ method: 'GET', path, query: { watch: 1, labelSelector: selector, resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: deps.watchTimeoutSeconds } }, (raw) => {
        const ev = raw as { type?: string; object?: KubeObject & { code?: number } };
        if (ev.type === 'ERROR') {
          expired = ev.object?.code === 410;
          handle.stop();
          return;
        }
        if (ev.object?.metadata?.resourceVersion) rv = ev.object.metadata.resourceVersion;
        for (const name of decide(ev.type ?? '', ev.object)) {
          counters.driftEvents += 1;
          deps.onDrift(name);
        }
      });
      handles.add(handle);
      const res = await handle.done;
      handles.delete(handle);
      if (stopped) break;
      if (expired || res.status === 410) rv = null;
      if (res.ok || expired) failures = 0;
      else {
        failures += 1;
        await sleep(backoffDelay(WATCH_RECONNECT, failures));
      }
    }
  }

  const loops = deps.resources.map((r) => loop(r));
  return {
    counters,
    async stop() {
      stopped = true;
      for (const h of handles) h.stop();
      await Promise.all(loops);
    },
  };
}
