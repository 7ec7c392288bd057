// Drift repaired in seconds: the relay also watches, cluster-wide, the kinds templates apply,
// selected by Furnish's label, and asks for a reconcile of the namespace whenever anyone but the
// reconciler changes or deletes one of them (or takes Furnish's label off, which the label-selected
// watch reports as a deletion). The reconcile judges drift by field ownership
// (shared/reconcile/drift.ts) and re-applies only what someone else changed. The same watch, with
// another selector and decision, repairs what LNamespaces hold (wiring.ts hands it the decision of
// shared/lnamespace/relay.ts). Each reconcile asked for names the drifted object's resourceVersion:
// the reconcile reads at or after it, so it sees the change it was sent for. A watch that expires
// (410 Gone) resumes from the current revision, and the relay resyncs every namespace, so drift in
// between is repaired at once, not at the next periodic resync.
import { KEY } from '../../../shared/keys.ts';
import type { KubeClient, WatchHandle } from '../../../shared/kube/client.ts';
import { lastWrittenByFurnish } from '../../../shared/kube/managed-fields.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { Logger } from '../../../shared/log.ts';
import { backoffDelay, WATCH_RECONNECT } from '../../../shared/kube/retry.ts';

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

/** The namespace to reconcile for a watch event, or null when the event is Furnish's own doing. */
export function driftedNamespace(type: string, obj: KubeObject | undefined): string | null {
  const ns = obj?.metadata?.namespace;
  if (!ns) return null;
  if (type === 'DELETED') return ns;
  if (type === 'MODIFIED') return lastWrittenByFurnish(obj) ? null : ns;
  return null;
}

export interface DriftWatch {
  stop(): Promise<void>;
  /** The watchdog's tick: ends each watch silent longer than `silenceMs`; it is opened again from where it was. */
  checkSilence(): void;
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
  /** `resourceVersion`: the drifted object's, as the watch event carried it. */
  onDrift: (name: string, resourceVersion: string) => void;
  /**
   * A watch that delivered nothing, not even a bookmark, this long is presumed dead (a half-open
   * connection), as the relay's other watches (FURNISH_WATCH_SILENCE_SECONDS); 0: never.
   */
  silenceMs?: number;
  /** A watch the watchdog ended, for the relay's metrics. */
  onSilent?: () => void;
  /**
   * The watch of `resource` expired (410 Gone) and was opened again from the current revision:
   * drift between the last revision it saw and that one was not seen. Called once the new
   * revision is known, so that whatever the caller reads afterwards (the relay resyncs every
   * namespace) is at least as new as where the watch resumes.
   */
  onGap?: (resource: string) => void;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

const namespaceOf = (type: string, obj: KubeObject | undefined): string[] => {
  const ns = driftedNamespace(type, obj);
  return ns ? [ns] : [];
};

export function watchDrift(deps: DriftWatchDeps): DriftWatch {
  const { kube, log } = deps;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = deps.now ?? (() => performance.now());
  /** Each open watch, and when it last delivered anything. */
  const handles = new Map<WatchHandle, number>();
  const selector = deps.selector ?? KEY.template;
  const decide = deps.decide ?? namespaceOf;
  let stopped = false;

  /** Where to watch from: the collection's current resourceVersion (what came before it, the resync covers). */
  async function currentVersion(path: string): Promise<string | null> {
    const res = await kube.call<{ metadata?: { resourceVersion?: string } }>({ method: 'GET', path, query: { labelSelector: selector, limit: 1 } });
    return res.ok ? res.data?.metadata?.resourceVersion ?? '' : null;
  }

  async function loop(resource: string): Promise<void> {
    const path = driftPath(resource);
    let rv: string | null = null;
    let failures = 0;
    /** The watch expired: what happened before the revision it resumes from was not seen. */
    let gap = false;
    while (!stopped) {
      rv ??= await currentVersion(path);
      if (stopped) break; // stopped while listing: a watch opened now would outlive stop()
      if (gap && rv !== null) {
        gap = false;
        deps.onGap?.(resource);
      }
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
        if (handles.has(handle)) handles.set(handle, now());
        if (ev.type === 'ERROR') {
          expired = ev.object?.code === 410;
          handle.stop();
          return;
        }
        const objectVersion = ev.object?.metadata?.resourceVersion ?? '';
        if (objectVersion) rv = objectVersion;
        for (const name of decide(ev.type ?? '', ev.object)) deps.onDrift(name, objectVersion);
      });
      handles.set(handle, now());
      const res = await handle.done;
      handles.delete(handle);
      if (stopped) break;
      if (expired || res.status === 410) {
        rv = null;
        gap = true;
      }
      if (res.ok || expired) failures = 0;
      else {
        failures += 1;
        await sleep(backoffDelay(WATCH_RECONNECT, failures));
      }
    }
  }

  const loops = deps.resources.map((r) => loop(r));
  return {
    checkSilence() {
      const silenceMs = deps.silenceMs ?? 0;
      if (silenceMs <= 0) return;
      for (const [h, seen] of handles) {
        if (now() - seen <= silenceMs) continue;
        // Ended once: the loop opens the next watch from the last revision seen.
        handles.delete(h);
        deps.onSilent?.();
        h.stop();
      }
    },
    async stop() {
      stopped = true;
      for (const h of handles.keys()) h.stop();
      await Promise.all(loops);
    },
  };
}
