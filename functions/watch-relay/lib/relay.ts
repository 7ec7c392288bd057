// The watch relay: lists, then watches namespaces, NamespaceTemplates, their ApplySet parents and
// the kinds it is handed (LNamespaces) from a resourceVersion (bookmarks on), reconnects with
// backoff, relists on 410 Gone, resyncs everything periodically, and publishes one small message
// per change with an ordering key per object. It remembers names, versions and short fingerprints
// only, never objects, so memory stays flat as the cluster grows. Three parts: the pure state and
// decisions (relay-state.ts), publishing (relay-publish.ts), one list/watch stream per collection
// (relay-stream.ts); this file wires them with the timers (resync, pending redrive, watchdog) and
// the drift watches. What else sees namespaces (billing, organizations) and what else is watched
// (LNamespaces, their drift) is handed in (wiring.ts): the relay imports no feature.
import type { Bus } from '../../../shared/bus/types.ts';
import type { MessageKind } from '../../../shared/bus/envelope.ts';
import { KEY } from '../../../shared/keys.ts';
import { CONFIGMAPS, NAMESPACES, TEMPLATES } from '../../../shared/kube/api.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { resourcePath } from '../../../shared/kube/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { backoffDelay, WATCH_RECONNECT } from '../../../shared/kube/retry.ts';
import type { Logger } from '../../../shared/log.ts';
import { APPLYSET_PARENT_NAME } from '../../../shared/render/applyset.ts';
import type { RelayConfig } from './config.ts';
import { watchDrift, type DriftWatch } from './drift-watch.ts';
import { createPublisher } from './relay-publish.ts';
import { RelayState, type Fingerprint } from './relay-state.ts';
import { WatchStream, type StreamSink } from './relay-stream.ts';
import type { Change, Seen } from './versions.ts';

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
  /** Drift watches the watchdog ended because they were silent too long (then opened again from where they were). */
  silentDriftWatches: number;
  /** Drift watches that expired (410 Gone), each followed by a resync of every namespace. */
  driftGaps: number;
  /** Messages re-published for namespaces still pending after a redrive period. */
  redriven: number;
  /** Changes or deletions of Furnish's objects by someone else, each sent as a reconcile of its namespace (or of the LNamespaces holding it). */
  drift: number;
  /** Writes of a namespace's ApplySet parent (anyone's, Furnish's own included), each sent as a reconcile of its namespace. */
  parents: number;
}

/** What a namespace's message gains from an observer: the organizations it concerns. */
export interface MessageNote {
  organizations?: string[];
}

export type NamespaceEvent = 'LISTED' | 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * Sees every namespace the relay sees (the billing tap, the organizations), and may add to its
 * message; started after the first lists, stopped before the bus flushes.
 */
export interface NamespaceObserver {
  observe(event: NamespaceEvent, ns: KubeObject): MessageNote | undefined;
  /** A namespace a relist no longer found. */
  gone(name: string, uid: string): MessageNote | undefined;
  start?(): Promise<void>;
  stop?(): Promise<void>;
}

/** A kind watched beside namespaces and templates (LNamespaces), its messages on its own topic. */
export interface WatchedKind {
  kind: MessageKind;
  path: string;
  fingerprint: Fingerprint;
  /** Its API may not be served yet (a CRD not installed): a 404 lists as empty. */
  optional?: boolean;
}

/** Objects watched for drift by label: each event names the objects of `kind` to reconcile (drift-watch.ts). */
export interface DriftSpec {
  kind: MessageKind;
  resources: readonly string[];
  selector?: string;
  decide?: (type: string, obj: KubeObject | undefined) => string[];
}

/** What the relay is handed rather than imports (wiring.ts builds it for the Deployment and `npm start`). */
export interface RelayObservers {
  observers?: NamespaceObserver[];
  kinds?: WatchedKind[];
  driftWatches?: DriftSpec[];
}

export interface RelayDeps extends RelayObservers {
  kube: KubeClient;
  bus: Bus;
  config: Pick<RelayConfig, 'cluster' | 'resyncSeconds' | 'watchTimeoutSeconds' | 'pageSize' | 'topics'> & Partial<Pick<RelayConfig, 'watchSilenceSeconds' | 'pendingRedriveSeconds'>>;
  log: Logger;
  /** Publish SYNC for every object found by the first list (default true): repairs what was missed while down. */
  syncOnStart?: boolean;
  /** Publishes in flight before a list waits for them and a watch event waits as its change (memory stays flat in a resync and in a burst). */
  maxInFlight?: number;
  sleep?: (ms: number) => Promise<void>;
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
  /** Namespaces pending now (re-driven if they stay pending). */
  pending(): number;
}

/** At most this many re-publishes per redrive tick: a backlog (every namespace pending behind a slow API) must not be doubled. */
export const REDRIVE_BATCH = 100;

/**
 * A parent's entry in the parents' index: every parent has the same name, its namespace tells them
 * apart; its resourceVersion alone says it changed (its message names the namespace, not the
 * parent), so its uid is not kept.
 */
export const parentSeen = (obj: KubeObject): Seen => ({ name: obj.metadata.namespace ?? '', uid: '', resourceVersion: obj.metadata.resourceVersion ?? '' });

/**
 * The message a write of a namespace's ApplySet parent sends: a reconcile of its namespace at the
 * parent's resourceVersion. It moves no organization.
 */
export function parentMessage(namespace: string, resourceVersion: string): Change {
  return { name: namespace, uid: '', resourceVersion, type: 'MODIFIED', organizations: [] };
}

/** How often the redrive timer looks: often enough that a lost message is re-sent within the period plus a few seconds. */
export const redriveTickMs = (periodMs: number): number => Math.min(periodMs, 5000);

export function createRelay(deps: RelayDeps): Relay {
  const { kube, bus, config, log } = deps;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = deps.now ?? Date.now;
  const observers = deps.observers ?? [];
  const kinds = deps.kinds ?? [];
  const counters: RelayCounters = { eventsSeen: 0, bookmarks: 0, published: 0, publishFailed: 0, suppressed: 0, relists: 0, gone: 0, watches: 0, reconnects: 0, resyncs: 0, silentRelists: 0, silentDriftWatches: 0, driftGaps: 0, redriven: 0, drift: 0, parents: 0 };
  const state = new RelayState(now, Object.fromEntries(kinds.map((k) => [k.kind, k.fingerprint])));
  const publisher = createPublisher({ bus, cluster: config.cluster, topics: config.topics, log, counters, sleep, maxInFlight: deps.maxInFlight ?? 256 });
  const publish = (kind: MessageKind, change: Change) => publisher.publish(kind, change);
  /** What the observers add to a namespace's message (its organizations). */
  const noted = (ask: (o: NamespaceObserver) => MessageNote | undefined): MessageNote => Object.assign({}, ...observers.map(ask));

  /** What a stream saw becomes a message when the reconcilers can see the change. */
  const sinkFor = (kind: MessageKind): StreamSink => ({
    seen(obj: KubeObject, event, change) {
      const note = kind === 'Namespace' ? noted((o) => o.observe(event, obj)) : {};
      if (!change) {
        // A relist that is not a resync still learns what each object looks like now.
        if (event === 'LISTED') state.observe(kind, obj, 'MODIFIED');
        return null;
      }
      if (state.observe(kind, obj, change.type)) return { ...change, ...note };
      counters.suppressed += 1;
      return null;
    },
    send: (change) => publish(kind, change),
    room: () => publisher.room(),
    gone(change) {
      const note = kind === 'Namespace' ? noted((o) => o.gone(change.name, change.uid)) : {};
      state.forget(kind, change.name);
      publish(kind, { ...change, ...note });
    },
  });

  // Every write of a namespace's ApplySet parent, Furnish's own included, sends a reconcile of the
  // namespace at the parent's resourceVersion. Why: the reconciler plans from templates listed at
  // or after the message's resourceVersion, so a reconcile that recorded a template in the parent
  // while that template changed is followed, by construction, by one that sees the change (no
  // re-list of templates after its writes). The first list and resyncs send nothing: the
  // namespaces' own SYNC covers them; a relist after 410 sends what changed.
  const parentSink: StreamSink = {
    seen(obj, event, change) {
      if (!change || change.type === 'SYNC' || (event === 'LISTED' && !parents.hasListed)) return null;
      counters.parents += 1;
      return parentMessage(change.name, obj.metadata.resourceVersion ?? '');
    },
    send: (change) => publish('Namespace', change),
    room: () => publisher.room(),
    gone(change, listVersion) {
      counters.parents += 1;
      publish('Namespace', parentMessage(change.name, listVersion));
    },
  };

  const streamDeps = { kube, log, counters, pageSize: config.pageSize, watchTimeoutSeconds: config.watchTimeoutSeconds, watchSilenceSeconds: config.watchSilenceSeconds ?? 0, now, sleep };
  const stream = (kind: MessageKind, path: string, optional = false) => new WatchStream(kind, path, { ...streamDeps, sink: sinkFor(kind) }, optional);
  const streams = [stream('Namespace', resourcePath(NAMESPACES)), stream('NamespaceTemplate', resourcePath(TEMPLATES)), ...kinds.map((k) => stream(k.kind, k.path, k.optional))];
  const parents = new WatchStream('Namespace', resourcePath(CONFIGMAPS), { ...streamDeps, sink: parentSink }, false, { labelSelector: KEY.applySetId, fieldSelector: `metadata.name=${APPLYSET_PARENT_NAME}`, identify: parentSeen });
  const all = [...streams, parents];

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
  // is published again after the redrive period, with or without resync.
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

  const sizeOf = (kind: MessageKind) => streams.find((s) => s.kind === kind)?.index.size ?? 0;
  return {
    counters,
    sizes: () => ({ Namespace: sizeOf('Namespace'), NamespaceTemplate: sizeOf('NamespaceTemplate'), LNamespace: sizeOf('LNamespace') }),
    pending: () => state.pendingCount,
    ready: () => !stopped && all.every((s) => s.ready()),
    resync,
    async start() {
      for (const s of all) {
        for (let attempt = 1; !(await s.relist(s !== parents && (deps.syncOnStart ?? true))); attempt += 1) {
          if (stopped) return;
          await sleep(backoffDelay(WATCH_RECONNECT, attempt));
        }
      }
      loops = all.map((s) => s.run());
      // A drifted object's reconcile reads at or after the object's resourceVersion: it sees the drift. A repaired object changes no namespace's organization.
      const driftTo = (kind: MessageKind) => (name: string, resourceVersion: string) => {
        counters.drift += 1;
        publish(kind, { name, uid: '', resourceVersion, type: 'MODIFIED', ...(kind === 'Namespace' ? { organizations: [] } : {}) });
      };
      const watchTimeoutSeconds = config.watchTimeoutSeconds;
      const silenceMs = (config.watchSilenceSeconds ?? 0) * 1000;
      const onSilent = () => { counters.silentDriftWatches += 1; };
      // Drift while a drift watch was expired is unseen: every namespace is read again (reads; writes only where drift is).
      const onGap = (resource: string) => {
        counters.driftGaps += 1;
        log.log('INFO', 'drift watch expired (410 Gone): resyncing every namespace', { resource });
        void resync();
      };
      for (const d of deps.driftWatches ?? []) {
        if (d.resources.length === 0) continue;
        drifts.push(watchDrift({ kube, log, resources: d.resources, ...(d.selector ? { selector: d.selector } : {}), ...(d.decide ? { decide: d.decide } : {}), watchTimeoutSeconds, sleep, silenceMs, onSilent, onGap, onDrift: driftTo(d.kind) }));
      }
      for (const o of observers) await o.start?.();
      if (redriveMs > 0) every(redriveTickMs(redriveMs), redrive);
      if (silenceMs > 0) every(Math.min(silenceMs, 5000), () => [...all, ...drifts].forEach((s) => s.checkSilence()));
      if (config.resyncSeconds > 0) every(config.resyncSeconds * 1000, () => void resync());
    },
    async stop() {
      stopped = true;
      timers.forEach((t) => clearInterval(t));
      await Promise.all(drifts.map((d) => d.stop()));
      all.forEach((s) => s.stop());
      await Promise.all(loops);
      await resyncing;
      await publisher.drain();
      for (const o of observers) await o.stop?.();
      await bus.flush();
    },
  };
}
