// The watch relay: lists, then watches namespaces and NamespaceTemplates from a resourceVersion
// (bookmarks on), reconnects with backoff, relists on 410 Gone, resyncs everything periodically,
// and publishes one small message per change with an ordering key per object. It remembers
// names and versions only (VersionIndex), never objects, so memory stays flat as the cluster grows.
import type { BillingTap } from '../billing/tap.ts';
import { KEY, PHASE } from '../keys.ts';
import type { Bus } from '../bus/types.ts';
import { listEach, NAMESPACES, TEMPLATES } from '../kube/api.ts';
import { lnamespaceFingerprint } from '../lnamespace/relay.ts';
import { LNAMESPACES } from '../lnamespace/types.ts';
import type { KubeClient, WatchHandle } from '../kube/client.ts';
import { resourcePath } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import type { NamespaceTemplate } from '../render/index.ts';
import type { RelayConfig } from './config.ts';
import { watchDrift, type DriftWatch } from './drift-watch.ts';
import { namespaceChangeMatters, namespaceFingerprint, templateFingerprint } from './fanout.ts';
import type { Logger } from '../log.ts';
import { encodeMessage, type MessageKind, type MessageType, type ReconcileMessage } from '../bus/envelope.ts';
import { backoffDelay, hasAttemptsLeft, PUBLISH_RETRY, WATCH_RECONNECT } from '../kube/retry.ts';
import { VersionIndex, type Change } from './versions.ts';

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
  /** Changes or deletions of Furnish's objects by someone else, each sent as a reconcile of its namespace. */
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

interface Stream {
  kind: MessageKind;
  path: string;
  index: VersionIndex;
  resourceVersion: string;
  watch?: WatchHandle;
  connected: boolean;
  listed: boolean;
  /** A kind whose API may not be served (its CRD not installed yet): a 404 lists as empty. */
  optional?: boolean;
  /** When the current watch last said anything (an event or a bookmark), ms since the epoch. */
  lastSeen: number;
  /** The watchdog ended the current watch: relist, as after 410. */
  silent: boolean;
}

interface WatchEvent {
  type?: string;
  object?: KubeObject & { code?: number; reason?: string };
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
}

export function createRelay(deps: RelayDeps): Relay {
  const { kube, bus, config, log } = deps;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const counters: RelayCounters = { eventsSeen: 0, bookmarks: 0, published: 0, publishFailed: 0, suppressed: 0, relists: 0, gone: 0, watches: 0, reconnects: 0, resyncs: 0, silentRelists: 0, redriven: 0, drift: 0 };
  const streams: Stream[] = [
    { kind: 'Namespace', path: resourcePath(NAMESPACES), index: new VersionIndex(), resourceVersion: '', connected: false, listed: false, lastSeen: 0, silent: false },
    { kind: 'NamespaceTemplate', path: resourcePath(TEMPLATES), index: new VersionIndex(), resourceVersion: '', connected: false, listed: false, lastSeen: 0, silent: false },
  ];
  if (config.topics.lnamespaces) streams.push({ kind: 'LNamespace', path: resourcePath(LNAMESPACES), index: new VersionIndex(), resourceVersion: '', connected: false, listed: false, lastSeen: 0, silent: false, optional: true });
  // A half-open connection delivers nothing and never ends: a watch silent for longer than this
  // (bookmarks included) is presumed dead, ended and relisted, and /readyz says not ready meanwhile.
  const silenceMs = (config.watchSilenceSeconds ?? 0) * 1000;
  const now = deps.now ?? Date.now;
  const silent = (s: Stream): boolean => silenceMs > 0 && s.connected && now() - s.lastSeen > silenceMs;
  let watchdog: ReturnType<typeof setInterval> | undefined;
  // Namespaces still pending, and since when: a pending namespace whose message was lost (dropped
  // after its retries during an API outage) is published again after a redrive period, with or
  // without resync, so its user is not blocked until the next full resync (or forever).
  const pending = new Map<string, { uid: string; resourceVersion: string; since: number }>();
  const redriveMs = (config.pendingRedriveSeconds ?? 0) * 1000;
  let redriveTimer: ReturnType<typeof setInterval> | undefined;
  let drift: DriftWatch | undefined;

  function trackPending(obj: KubeObject, type: MessageType): void {
    const name = obj.metadata.name ?? '';
    if (type === 'DELETED' || obj.metadata.labels?.[KEY.phase] !== PHASE.pending || obj.metadata.deletionTimestamp) {
      pending.delete(name);
      return;
    }
    const was = pending.get(name);
    pending.set(name, { uid: obj.metadata.uid ?? '', resourceVersion: obj.metadata.resourceVersion ?? '', since: was?.since ?? now() });
  }

  /** At most this many re-publishes per tick: a backlog (every namespace pending behind a slow API) must not be doubled. */
  const REDRIVE_BATCH = 100;

  function redrive(): void {
    let sent = 0;
    for (const [name, p] of pending) {
      if (now() - p.since < redriveMs) continue;
      if (sent++ >= REDRIVE_BATCH) break;
      p.since = now();
      counters.redriven += 1;
      publish('Namespace', { name, uid: p.uid, resourceVersion: p.resourceVersion, type: 'SYNC' });
    }
  }
  /** Per kind, name → short hash of what the reconcilers read, to skip changes they cannot see. */
  const fingerprints: Record<MessageKind, Map<string, string>> = { Namespace: new Map(), NamespaceTemplate: new Map(), LNamespace: new Map() };
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let loops: Promise<void>[] = [];
  let resyncTimer: ReturnType<typeof setInterval> | undefined;
  let resyncing: Promise<void> | undefined;

  async function publishOnce(kind: MessageKind, change: Change): Promise<void> {
    const msg: ReconcileMessage = { v: 1, cluster: config.cluster, kind, name: change.name, uid: change.uid, resourceVersion: change.resourceVersion, type: change.type };
    if (change.generation !== undefined) msg.generation = change.generation;
    const topic = kind === 'Namespace' ? config.topics.namespaces : kind === 'LNamespace' ? config.topics.lnamespaces! : config.topics.templates;
    const envelope = encodeMessage(msg);
    for (let attempt = 1; ; attempt += 1) {
      const r = await bus.publish(topic, envelope);
      if (r.ok) {
        counters.published += 1;
        return;
      }
      if (!hasAttemptsLeft(PUBLISH_RETRY, attempt) || stopped) {
        counters.publishFailed += 1;
        log.log('WARNING', 'publish failed; the next resync repairs it', { kind, name: change.name, error: r.error });
        return;
      }
      await sleep(backoffDelay(PUBLISH_RETRY, attempt));
    }
  }

  const maxInFlight = deps.maxInFlight ?? 256;
  /** Backpressure for lists: resolves once fewer than maxInFlight publishes are pending. */
  async function capacity(): Promise<void> {
    while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
  }

  function publish(kind: MessageKind, change: Change): void {
    const p = publishOnce(kind, change).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }

  /**
   * A change the reconcilers cannot see is not published: a template's status or Furnish's own
   * bookkeeping on it, a namespace's phase becoming ready (the reconciler's own write).
   */
  function worthPublishing(s: Stream, obj: KubeObject, type: MessageType): boolean {
    const name = obj.metadata.name ?? '';
    const known = fingerprints[s.kind];
    if (s.kind === 'Namespace') trackPending(obj, type);
    if (type === 'DELETED') {
      known.delete(name);
      return true;
    }
    const fp = s.kind === 'NamespaceTemplate' ? templateFingerprint(obj as NamespaceTemplate) : s.kind === 'LNamespace' ? lnamespaceFingerprint(obj) : namespaceFingerprint(obj);
    const before = known.get(name);
    known.set(name, fp);
    if (type === 'SYNC' || type === 'ADDED') return true;
    return s.kind === 'Namespace' ? namespaceChangeMatters(obj, before, fp) : before !== fp;
  }

  function seen(obj: KubeObject): { name: string; uid: string; resourceVersion: string; generation?: number } {
    return { name: obj.metadata.name ?? '', uid: obj.metadata.uid ?? '', resourceVersion: obj.metadata.resourceVersion ?? '', generation: obj.metadata.generation };
  }

  /** Lists everything; publishes changes (and SYNC for unchanged objects when `syncAll`). Returns false on failure. */
  async function relist(s: Stream, syncAll: boolean): Promise<boolean> {
    counters.relists += 1;
    const pass = s.index.relist();
    const res = await listEach(kube, s.path, { limit: config.pageSize }, (obj) => {
      if (s.kind === 'Namespace') deps.billing?.observe('LISTED', obj);
      const change = pass.listed(seen(obj));
      const type: MessageType | null = change ? change.type : syncAll ? 'SYNC' : null;
      if (!type) {
        worthPublishing(s, obj, 'MODIFIED');
        return;
      }
      if (worthPublishing(s, obj, type)) publish(s.kind, { ...seen(obj), type });
      else counters.suppressed += 1;
      return inFlight.size >= maxInFlight ? capacity() : undefined;
    });
    if (!res.ok && !(res.status === 404 && s.optional)) {
      log.log('WARNING', 'list failed', { kind: s.kind, status: res.status, error: res.error });
      return false;
    }
    for (const gone of pass.finish()) {
      if (s.kind === 'Namespace') deps.billing?.gone(gone.name, gone.uid);
      fingerprints[s.kind].delete(gone.name);
      publish(s.kind, gone);
    }
    s.resourceVersion = res.resourceVersion;
    s.listed = true;
    return true;
  }

  function onEvent(s: Stream, ev: WatchEvent, markGone: () => void): void {
    s.lastSeen = now();
    const obj = ev.object;
    if (!obj) return;
    if (ev.type === 'BOOKMARK') {
      counters.bookmarks += 1;
      if (obj.metadata?.resourceVersion) s.resourceVersion = obj.metadata.resourceVersion;
      return;
    }
    if (ev.type === 'ERROR') {
      if (obj.code === 410 || obj.reason === 'Expired' || obj.reason === 'Gone') markGone();
      else log.log('WARNING', 'watch error event', { kind: s.kind, code: obj.code, reason: obj.reason });
      return;
    }
    if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED' && ev.type !== 'DELETED') return;
    counters.eventsSeen += 1;
    if (s.kind === 'Namespace') deps.billing?.observe(ev.type, obj);
    if (obj.metadata?.resourceVersion) s.resourceVersion = obj.metadata.resourceVersion;
    const change = s.index.observe(ev.type, seen(obj));
    if (!change) return;
    if (worthPublishing(s, obj, change.type)) publish(s.kind, change);
    else counters.suppressed += 1;
  }

  async function loop(s: Stream): Promise<void> {
    let failures = 0;
    let needList = !s.listed;
    while (!stopped) {
      if (needList) {
        if (!(await relist(s, false))) {
          failures += 1;
          await sleep(backoffDelay(WATCH_RECONNECT, failures));
          continue;
        }
        needList = false;
      }
      let gone = false;
      const handle = kube.watch({ method: 'GET', path: s.path, query: { watch: 1, resourceVersion: s.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: config.watchTimeoutSeconds } }, (ev) =>
        onEvent(s, ev as WatchEvent, () => {
          gone = true;
          handle.stop();
        }),
      );
      s.watch = handle;
      s.connected = true;
      s.lastSeen = now();
      counters.watches += 1;
      const res = await handle.done;
      s.connected = false;
      if (stopped) break;
      if (s.silent) {
        s.silent = false;
        counters.silentRelists += 1;
        log.log('WARNING', 'watch silent for too long: relisting', { kind: s.kind, silentSeconds: config.watchSilenceSeconds });
        needList = true;
        continue;
      }
      if (gone || res.status === 410) {
        counters.gone += 1;
        log.log('INFO', 'resourceVersion expired (410 Gone): relisting', { kind: s.kind, resourceVersion: s.resourceVersion });
        needList = true;
        failures = 0;
        continue;
      }
      if (res.ok) {
        failures = 0;
        continue;
      }
      failures += 1;
      counters.reconnects += 1;
      const delay = backoffDelay(WATCH_RECONNECT, failures);
      log.log('WARNING', 'watch failed; reconnecting', { kind: s.kind, status: res.status, error: res.error, delayMs: delay });
      await sleep(delay);
    }
  }

  async function resync(): Promise<void> {
    if (resyncing) return resyncing;
    resyncing = (async () => {
      counters.resyncs += 1;
      for (const s of streams) await relist(s, true);
    })().finally(() => {
      resyncing = undefined;
    });
    return resyncing;
  }

  return {
    counters,
    sizes: () => ({ Namespace: streams[0]!.index.size, NamespaceTemplate: streams[1]!.index.size, LNamespace: streams[2]?.index.size ?? 0 }),
    ready: () => !stopped && streams.every((s) => s.optional || (s.listed && s.connected && !silent(s))),
    resync,
    async start() {
      for (const s of streams) {
        for (let attempt = 1; !(await relist(s, deps.syncOnStart ?? true)); attempt += 1) {
          if (stopped) return;
          await sleep(backoffDelay(WATCH_RECONNECT, attempt));
        }
      }
      loops = streams.map((s) => loop(s));
      if ((config.driftResources ?? []).length > 0) {
        drift = watchDrift({ kube, log, resources: config.driftResources!, watchTimeoutSeconds: config.watchTimeoutSeconds, sleep, onDrift: (namespace) => {
          counters.drift += 1;
          publish('Namespace', { name: namespace, uid: '', resourceVersion: '', type: 'MODIFIED' });
        } });
      }
      if (redriveMs > 0) {
        redriveTimer = setInterval(redrive, Math.min(redriveMs, 5000));
        redriveTimer.unref?.();
      }
      if (silenceMs > 0) {
        watchdog = setInterval(() => {
          for (const s of streams) {
            if (!silent(s) || s.silent) continue;
            s.silent = true;
            s.watch?.stop();
          }
        }, Math.min(silenceMs, 5000));
        watchdog.unref?.();
      }
      if (config.resyncSeconds > 0) {
        resyncTimer = setInterval(() => void resync(), config.resyncSeconds * 1000);
        resyncTimer.unref?.();
      }
    },
    async stop() {
      stopped = true;
      if (resyncTimer) clearInterval(resyncTimer);
      if (watchdog) clearInterval(watchdog);
      if (redriveTimer) clearInterval(redriveTimer);
      await drift?.stop();
      for (const s of streams) s.watch?.stop();
      await Promise.all(loops);
      await resyncing;
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      await deps.billing?.stop();
      await bus.flush();
    },
  };
}
