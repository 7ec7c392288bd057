// The relay's billing hook. The relay hands it every namespace it sees (watch events, lists,
// deletions found by a relist); the tap publishes a billing event when the billed state changes,
// and, at start and then daily, a snapshot: one `snapshot` event per live namespace and a
// `snapshot-end` listing them all, from which record-billing learns what was deleted unseen.
// It remembers, per namespace uid, only what is billed (organization, creator, billing fields).
import type { Bus } from '../bus/types.ts';
import { readSetting } from '../config/settings.ts';
import { listEach, NAMESPACES } from '../kube/api.ts';
import type { KubeClient } from '../kube/client.ts';
import { resourcePath } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import type { Logger } from '../log.ts';
import { boundedPublisher } from '../bus/bounded.ts';
import { billingState, deriveEvent, encodeBillingMessage, isoTime, type Observation } from './event.ts';
import { BILLING_MESSAGE_VERSION, type BillingEventMessage, type BillingEventType, type BillingMessage, type BillingState } from './types.ts';

/** Publishes pending before a snapshot's list waits for them. */
const MAX_IN_FLIGHT = 256;

export interface BillingTapConfig {
  cluster: string;
  topic: string;
  /** Period of the snapshot after the one at start; 0: only at start. */
  snapshotSeconds: number;
  pageSize: number;
}

type Env = Record<string, string | undefined>;

/** From the relay's environment; null when FURNISH_TOPIC_BILLING is set empty (billing off). */
export function billingTapConfig(env: Env, cluster: string, pageSize: number): BillingTapConfig | null {
  const topic = readSetting(env, 'topicBilling');
  if (topic === '') return null;
  return { cluster, topic, snapshotSeconds: readSetting(env, 'billingSnapshotSeconds'), pageSize };
}

export interface BillingTapCounters {
  published: number;
  publishFailed: number;
  snapshots: number;
  snapshotsFailed: number;
}

export interface BillingTap {
  /** A namespace the relay saw (watch event or list). */
  observe(seen: Observation, ns: KubeObject): void;
  /** A namespace a relist no longer found. */
  gone(name: string, uid: string): void;
  /** Lists every namespace and publishes the snapshot; false when the list failed (nothing is judged deleted then). */
  snapshot(): Promise<boolean>;
  /** First snapshot, then the periodic ones. */
  start(): Promise<void>;
  /** Stops the schedule and waits for every publish. */
  stop(): Promise<void>;
  readonly counters: BillingTapCounters;
}

export interface BillingTapDeps {
  kube: KubeClient;
  bus: Bus;
  config: BillingTapConfig;
  log: Logger;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
}

export function createBillingTap(deps: BillingTapDeps): BillingTap {
  const { kube, bus, config, log } = deps;
  const now = deps.now ?? (() => new Date());
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const counters: BillingTapCounters = { published: 0, publishFailed: 0, snapshots: 0, snapshotsFailed: 0 };
  const known = new Map<string, BillingState>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let stopped = false;
  const publisher = boundedPublisher<BillingMessage>({
    bus,
    maxInFlight: MAX_IN_FLIGHT,
    sleep,
    encode: (m) => ({ topic: config.topic, envelope: encodeBillingMessage(m) }),
    published: () => void (counters.published += 1),
    failed: (m, _topic, error) => {
      counters.publishFailed += 1;
      log.log('WARNING', 'billing publish failed; the next snapshot repairs it', { type: m.type, error });
    },
  });
  const publish = publisher.publish;

  /** `observedAt`: when the namespace was seen alive (see contradictableAfter); none on a deletion. */
  function event(event: BillingEventType, eventTime: string, ns: { name: string; uid: string; resourceVersion?: string }, state: BillingState, observedAt?: string): BillingEventMessage {
    return { v: BILLING_MESSAGE_VERSION, type: 'event', event, cluster: config.cluster, namespace: ns.name, uid: ns.uid, ...(ns.resourceVersion ? { resourceVersion: ns.resourceVersion } : {}), eventTime, ...(observedAt ? { observedAt } : {}), ...state };
  }

  function identity(ns: KubeObject): { name: string; uid: string; resourceVersion?: string } {
    return { name: ns.metadata.name ?? '', uid: ns.metadata.uid ?? '', resourceVersion: ns.metadata.resourceVersion };
  }

  /** `seenAt`: when `ns` was the namespace's state (a snapshot's list: its takenAt, before the list). */
  function observe(seen: Observation, ns: KubeObject, seenAt = now()): void {
    const id = identity(ns);
    if (!id.uid) return;
    const state = billingState(ns);
    const change = deriveEvent(known.get(id.uid), seen, ns, seenAt);
    if (seen === 'DELETED') known.delete(id.uid);
    else known.set(id.uid, state);
    if (change) void publish(event(change.event, change.eventTime, id, state, change.event === 'deleted' ? undefined : isoTime(seenAt)));
  }

  async function snapshot(): Promise<boolean> {
    const takenAt = isoTime(now());
    const uids: string[] = [];
    const res = await listEach(kube, resourcePath(NAMESPACES), { limit: config.pageSize }, (ns) => {
      const id = identity(ns);
      if (!id.uid) return;
      uids.push(id.uid);
      // A namespace this process has not seen yet gets its (idempotent) created event too.
      if (!known.has(id.uid)) observe('LISTED', ns, new Date(takenAt));
      void publish(event('snapshot', takenAt, id, billingState(ns), takenAt));
      // Backpressure: the list waits while too many publishes are pending.
      return publisher.room();
    });
    if (!res.ok) {
      counters.snapshotsFailed += 1;
      log.log('WARNING', 'billing snapshot: list failed, nothing judged deleted', { status: res.status, error: res.error });
      return false;
    }
    await publish({ v: BILLING_MESSAGE_VERSION, type: 'snapshot-end', cluster: config.cluster, takenAt, uids });
    counters.snapshots += 1;
    log.log('INFO', 'billing snapshot published', { namespaces: uids.length, takenAt });
    return true;
  }

  return {
    counters,
    observe,
    gone(name, uid) {
      const state = known.get(uid) ?? { organization: '', creator: '' };
      known.delete(uid);
      void publish(event('deleted', isoTime(now()), { name, uid }, state));
    },
    snapshot,
    async start() {
      await snapshot();
      if (config.snapshotSeconds > 0 && !stopped) {
        timer = setInterval(() => void snapshot(), config.snapshotSeconds * 1000);
        timer.unref?.();
      }
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await publisher.drain();
    },
  };
}
