// The watch relay: lists, then watches namespaces, NamespaceTemplates and LNamespaces from a
// resourceVersion (bookmarks on), reconnects with backoff, relists on 410 Gone, resyncs everything
// periodically, and publishes one small message per change with an ordering key per object. It
// remembers names, versions and short fingerprints only, never objects, so memory stays flat as
// the cluster grows. Three parts: the pure state and decisions (relay-state.ts), publishing
// (relay-publish.ts), one list/watch stream per kind (relay-stream.ts); this file wires them
// with the timers (resync, pending redrive, watchdog) and the drift watches.
import type { BillingTap } from '../billing/tap.ts';
import type { Bus } from '../bus/types.ts';
import type { MessageKind } from '../bus/envelope.ts';
import { NAMESPACES, TEMPLATES } from '../kube/api.ts';
import type { KubeClient } from '../kube/client.ts';
import { resourcePath } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import { backoffDelay, WATCH_RECONNECT } from '../kube/retry.ts';
import { driftedLNamespaces, LNS_DRIFT_RESOURCES, LNS_DRIFT_SELECTOR } from '../lnamespace/relay.ts';
import { LNAMESPACES } from '../lnamespace/types.ts';
import { NamespaceOrganizations } from '../org/relay-organizations.ts';
import type { Logger } from '../log.ts';
import type { RelayConfig } from './config.ts';
import { watchDrift, type DriftWatch } from './drift-watch.ts';
import { createPublisher } from './relay-publish.ts';
import { RelayState } from './relay-state.ts';
import { WatchStream, type StreamSink } from './relay-stream.ts';
import type { Change } from './versions.ts';

export interface RelayCounters {
  eventsSeen: number;
  bookmarks: number;
  published: number;
  publishFailed: number;
  suppressed: number;
  relists: number;
  gone: number;
  /** Watch requests opened (the first per kind, then one per reconnect or server-side timeout). */
  watches: number;
  reconnects: number;
  resyncs: number;
  /** Watches the watchdog ended because they were silent too long (then relisted). */
  silentRelists: number;
  /** Messages re-published for namespaces still pending after a redrive period. */
  redriven: number;
  /** Changes or deletions of Furnish's objects by someone else, each sent as a reconcile of its namespace (or of the LNamespaces holding it). */
  drift: number;
}

export interface RelayDeps {
  kube: KubeClient;
  bus: Bus;
  config: Pick<RelayConfig, 'cluster' | 'resyncSeconds' | 'watchTimeoutSeconds' | 'pageSize' | 'topics'> & Partial<Pick<RelayConfig, 'watchSilenceSeconds' | 'pendingRedriveSeconds' | 'driftResources'>>;
  log: Logger;
  /** Publish SYNC for every object found by the first list (default true): repairs what was missed while down. */
  syncOnStart?: boolean;
  /** Publishes in flight before a list waits for them (memory stays flat during a resync). */
  maxInFlight?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Sees every namespace the relay sees and publishes billing events (shared/billing/tap.ts). */
  billing?: BillingTap;
  now?: () => number;
}

export interface Relay {
  start(): Promise<void>;
  /** Stops watching and flushes every pending publish. */
  stop(): Promise<void>;
  /** Lists everything again and publishes SYNC for every object. */
  resync(): Promise<void>;
  ready(): boolean;
  readonly counters: RelayCounters;
  /** Objects remembered (names and versions), per kind. */
  sizes(): Record<MessageKind, number>;
  /** Namespaces pending now (their messages take the pending lane). */
  pending(): number;
}

/** At most this many re-publishes per redrive tick: a backlog (every namespace pending behind a slow API) must not be doubled. */
export const REDRIVE_BATCH = 100;

/** How often the redrive timer looks: often enough that a lost message is re-sent within the period plus a few seconds. */
export const redriveTickMs = (periodMs: number): number => Math.min(periodMs, 5000);

export function createRelay(deps: RelayDeps): Relay {
  const { kube, bus, config, log } = deps;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = deps.now ?? Date.now;
  const counters: RelayCounters = { eventsSeen: 0, bookmarks: 0, published: 0, publishFailed: 0, suppressed: 0, relists: 0, gone: 0, watches: 0, reconnects: 0, resyncs: 0, silentRelists: 0, redriven: 0, drift: 0 };
  const state = new RelayState(now);
  // Namespace messages name the organization(s) they concern: reconcile-organization trues up those only.
  const organizations = new NamespaceOrganizations();
  const publisher = createPublisher({ bus, cluster: config.cluster, topics: config.topics, log, counters, sleep, maxInFlight: deps.maxInFlight ?? 256 });
  const publish = (kind: MessageKind, change: Change) => publisher.publish(kind, change, state.laneOf(kind, change.name));

  /** What a stream saw becomes a message when the reconcilers can see the change. */
  const sinkFor = (kind: MessageKind): StreamSink => ({
    seen(obj: KubeObject, event, change) {
      if (kind === 'Namespace') deps.billing?.observe(event, obj);
      const orgs = kind === 'Namespace' ? organizations.observe(obj, event) : undefined;
      if (!change) {
        // A relist that is not a resync still learns what each object looks like now.
        if (event === 'LISTED') state.observe(kind, obj, 'MODIFIED');
        return null;
      }
      if (state.observe(kind, obj, change.type)) return orgs ? { ...change, organizations: orgs } : change;
      counters.suppressed += 1;
      return null;
    },
    send: (change) => publish(kind, change),
    room: () => publisher.room(),
    gone(change) {
      if (kind === 'Namespace') deps.billing?.gone(change.name, change.uid);
      state.forget(kind, change.name);
      publish(kind, kind === 'Namespace' ? { ...change, organizations: organizations.forget(change.name) } : change);
    },
  });
  const streamDeps = { kube, log, counters, pageSize: config.pageSize, watchTimeoutSeconds: config.watchTimeoutSeconds, watchSilenceSeconds: config.watchSilenceSeconds ?? 0, now, sleep };
  const stream = (kind: MessageKind, path: string, optional = false) => new WatchStream(kind, path, { ...streamDeps, sink: sinkFor(kind) }, optional);
  const streams = [stream('Namespace', resourcePath(NAMESPACES)), stream('NamespaceTemplate', resourcePath(TEMPLATES))];
  // LNamespaces are optional: their CRD may not be installed yet (a 404 lists as empty).
  if (config.topics.lnamespaces) streams.push(stream('LNamespace', resourcePath(LNAMESPACES), true));

  const timers: ReturnType<typeof setInterval>[] = [];
  const every = (ms: number, tick: () => void) => {
    const t = setInterval(tick, ms);
    t.unref?.();
    timers.push(t);
  };
  let stopped = false;
  let loops: Promise<void>[] = [];
  let resyncing: Promise<void> | undefined;
  const drifts: DriftWatch[] = [];

  // A pending namespace whose message was lost (dropped after its retries during an API outage)
  // is published again after the redrive period, with or without resync, on the pending lane.
  const redriveMs = (config.pendingRedriveSeconds ?? 0) * 1000;
  function redrive(): void {
    for (const change of state.dueForRedrive(redriveMs, REDRIVE_BATCH)) {
      counters.redriven += 1;
      publish('Namespace', change);
    }
  }

  async function resync(): Promise<void> {
    if (resyncing) return resyncing;
    resyncing = (async () => {
      counters.resyncs += 1;
      for (const s of streams) await s.relist(true);
    })().finally(() => {
      resyncing = undefined;
    });
    return resyncing;
  }

  return {
    counters,
    sizes: () => ({ Namespace: streams[0]!.index.size, NamespaceTemplate: streams[1]!.index.size, LNamespace: streams[2]?.index.size ?? 0 }),
    pending: () => state.pendingCount,
    ready: () => !stopped && streams.every((s) => s.ready()),
    resync,
    async start() {
      for (const s of streams) {
        for (let attempt = 1; !(await s.relist(deps.syncOnStart ?? true)); attempt += 1) {
          if (stopped) return;
          await sleep(backoffDelay(WATCH_RECONNECT, attempt));
        }
      }
      loops = streams.map((s) => s.run());
      const driftTo = (kind: MessageKind) => (name: string) => {
        counters.drift += 1;
        // A repaired object changes no namespace's organization.
        publish(kind, { name, uid: '', resourceVersion: '', type: 'MODIFIED', ...(kind === 'Namespace' ? { organizations: [] } : {}) });
      };
      const watchTimeoutSeconds = config.watchTimeoutSeconds;
      if ((config.driftResources ?? []).length > 0) drifts.push(watchDrift({ kube, log, resources: config.driftResources!, watchTimeoutSeconds, sleep, onDrift: driftTo('Namespace') }));
      // What LNamespaces hold (their RBAC, the shared self-impersonation objects included): repaired in seconds.
      if (config.topics.lnamespaces) drifts.push(watchDrift({ kube, log, resources: LNS_DRIFT_RESOURCES, selector: LNS_DRIFT_SELECTOR, decide: driftedLNamespaces, watchTimeoutSeconds, sleep, onDrift: driftTo('LNamespace') }));
      if (redriveMs > 0) every(redriveTickMs(redriveMs), redrive);
      const silenceMs = (config.watchSilenceSeconds ?? 0) * 1000;
      if (silenceMs > 0) every(Math.min(silenceMs, 5000), () => streams.forEach((s) => s.checkSilence()));
      if (config.resyncSeconds > 0) every(config.resyncSeconds * 1000, () => void resync());
    },
    async stop() {
      stopped = true;
      timers.forEach((t) => clearInterval(t));
      await Promise.all(drifts.map((d) => d.stop()));
      streams.forEach((s) => s.stop());
      await Promise.all(loops);
      await resyncing;
      await publisher.drain();
      await deps.billing?.stop();
      await bus.flush();
    },
  };
}
