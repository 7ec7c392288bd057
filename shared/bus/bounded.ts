// Publishing from a watch: retried with backoff, at most `maxInFlight` publishes at once. Beyond
// the bound an item waits as the caller's own small record (names and versions), in order, and is
// encoded when a publish ends. Why: in a burst a watch outruns the bus, and a publish started at
// once holds its envelope, its retry loop and the bus's own wait (~2 KB): 9,000 namespaces created
// at once left 15,622 publishes waiting in the relay (its own and the billing tap's), whose heap
// pages V8 kept resident after (docs/performance.md, Population). Lists wait for room instead.
// One ordering key's publishes go out side by side (Pub/Sub's client keeps their order), until one
// fails: then the later ones of its key wait until it is published or given up. Why: the client
// fails what is queued behind a failed publish and accepts new ones once resumed (bus/pubsub.ts), so
// without the wait a later message of the key would overtake the failed one's retry.
// Items that `coalesce` says are about one thing (a later change of one object) wait as one: the
// newer merged into the waiting one, so that during a long bus outage what waits is bounded by the
// objects, not by how often they change.
import { backoffDelay, hasAttemptsLeft, PUBLISH_RETRY } from '../kube/retry.ts';
import type { Envelope } from './envelope.ts';
import type { Bus } from './types.ts';

export interface BoundedPublisher<T> {
  /** Publishes `item` now, or after the publishes ahead of it when `maxInFlight` are in flight; resolves once it is published or given up. */
  publish(item: T): Promise<void>;
  /** Resolves once fewer than the bound are in flight; undefined when there is room already. */
  room(): Promise<void> | undefined;
  /**
   * Stops retrying; resolves once every item in flight or waiting is published or given up. Each
   * gets one attempt until one fails: then the bus is taken to be down and the rest are given up
   * without one, so a shutdown during an outage takes one round of attempts, not one per item
   * (what is given up is repaired by the next start's resync or snapshot).
   */
  drain(): Promise<void>;
}

export interface BoundedPublisherDeps<T> {
  bus: Bus;
  maxInFlight: number;
  sleep: (ms: number) => Promise<void>;
  /** Its topic and envelope, made when its publish starts. */
  encode: (item: T) => { topic: string; envelope: Envelope };
  published: (item: T) => void;
  /** Given up: out of attempts, or drained meanwhile (`topic` empty when it could not be encoded). */
  failed: (item: T, topic: string, error: string | undefined) => void;
  /** What an item is about, and one item saying what two of it say (the older one waiting, the newer arriving). */
  coalesce?: { key: (item: T) => string; merge: (older: T, newer: T) => T };
}

export function boundedPublisher<T>(deps: BoundedPublisherDeps<T>): BoundedPublisher<T> {
  /** An item beyond the bound, and the publish() calls it answers (more than one when coalesced). */
  type Waiting = { item: T; done: Array<() => void> };
  const inFlight = new Set<Promise<void>>();
  /** Beyond the bound, in arrival order: a publish that ends starts the next (so: waiting ⇒ the bound is reached). */
  const waiting: Waiting[] = [];
  /** The waiting entry of each coalesce key. */
  const waitingByKey = new Map<string, Waiting>();
  /** Each ordering key's publishes in flight, in the order they started; `failed` once one of its attempts failed. */
  const keys = new Map<string, { turns: Array<{ failed: boolean }>; wake: Array<() => void> }>();
  let stopping = false;
  /** Stopping, and a publish failed since: the rest are given up without an attempt. */
  let busDown = false;

  /** Whether a publish of the key that started before `turn` failed and is not over: `turn` must not overtake it. */
  function behindFailed(key: string, turn: { failed: boolean }): boolean {
    for (const t of keys.get(key)!.turns) {
      if (t === turn) return false;
      if (t.failed) return true;
    }
    return false;
  }

  async function publishEncoded(item: T, topic: string, envelope: Envelope): Promise<void> {
    const key = envelope.orderingKey;
    const turn = { failed: false };
    const queue = keys.get(key) ?? { turns: [], wake: [] };
    keys.set(key, queue);
    queue.turns.push(turn);
    try {
      for (let attempt = 1; ; attempt += 1) {
        while (behindFailed(key, turn)) await new Promise<void>((r) => queue.wake.push(r));
        if (busDown) return deps.failed(item, topic, 'given up at drain: a publish had failed');
        const r = await deps.bus.publish(topic, envelope);
        if (r.ok) return deps.published(item);
        turn.failed = true;
        busDown ||= stopping;
        if (!hasAttemptsLeft(PUBLISH_RETRY, attempt) || stopping) return deps.failed(item, topic, r.error);
        await deps.sleep(backoffDelay(PUBLISH_RETRY, attempt));
      }
    } finally {
      queue.turns.splice(queue.turns.indexOf(turn), 1);
      if (queue.turns.length === 0) keys.delete(key);
      for (const wake of queue.wake.splice(0)) wake();
    }
  }

  /** Never rejects: an encoder or bus that throws instead of answering is a failed publish, and the items behind it still start. */
  async function publishOnce(item: T): Promise<void> {
    let topic = '';
    try {
      const encoded = deps.encode(item);
      topic = encoded.topic;
      await publishEncoded(item, encoded.topic, encoded.envelope);
    } catch (error) {
      deps.failed(item, topic, error instanceof Error ? error.message : String(error));
    }
  }

  function start(item: T): Promise<void> {
    const p = publishOnce(item).finally(() => {
      inFlight.delete(p);
      const next = waiting.shift();
      if (next && deps.coalesce) waitingByKey.delete(deps.coalesce.key(next.item));
      if (next) void start(next.item).then(() => next.done.forEach((done) => done()));
    });
    inFlight.add(p);
    return p;
  }

  async function waitForRoom(): Promise<void> {
    while (inFlight.size >= deps.maxInFlight) await Promise.race(inFlight);
  }

  return {
    publish(item) {
      if (inFlight.size < deps.maxInFlight) return start(item);
      const key = deps.coalesce?.key(item);
      const same = key === undefined ? undefined : waitingByKey.get(key);
      if (same) {
        same.item = deps.coalesce!.merge(same.item, item);
        return new Promise<void>((done) => same.done.push(done));
      }
      return new Promise<void>((done) => {
        const entry: Waiting = { item, done: [done] };
        waiting.push(entry);
        if (key !== undefined) waitingByKey.set(key, entry);
      });
    },
    room: () => (inFlight.size >= deps.maxInFlight ? waitForRoom() : undefined),
    async drain() {
      stopping = true;
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
