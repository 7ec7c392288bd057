// Publishing from a watch: retried with backoff, at most `maxInFlight` publishes at once. Beyond
// the bound an item waits as the caller's own small record (names and versions), in order, and is
// encoded when a publish ends. Why: in a burst a watch outruns the bus, and a publish started at
// once holds its envelope, its retry loop and the bus's own wait (~2 KB): 9,000 namespaces created
// at once left 15,622 publishes waiting in the relay (its own and the billing tap's), whose heap
// pages V8 kept resident after (docs/performance.md, Population). Lists wait for room instead.
import { backoffDelay, hasAttemptsLeft, PUBLISH_RETRY } from '../kube/retry.ts';
import type { Envelope } from './envelope.ts';
import type { Bus } from './types.ts';

export interface BoundedPublisher<T> {
  /** Publishes `item` now, or after the publishes ahead of it when `maxInFlight` are in flight; resolves once it is published or given up. */
  publish(item: T): Promise<void>;
  /** Resolves once fewer than the bound are in flight; undefined when there is room already. */
  room(): Promise<void> | undefined;
  /** Stops retrying and waits for every publish in flight or waiting. */
  drain(): Promise<void>;
}

export interface BoundedPublisherDeps<T> {
  bus: Bus;
  maxInFlight: number;
  sleep: (ms: number) => Promise<void>;
  /** Its topic and envelope, made when its publish starts. */
  encode: (item: T) => { topic: string; envelope: Envelope };
  published: (item: T) => void;
  /** Given up: out of attempts, or drained meanwhile. */
  failed: (item: T, topic: string, error: string | undefined) => void;
}

export function boundedPublisher<T>(deps: BoundedPublisherDeps<T>): BoundedPublisher<T> {
  const inFlight = new Set<Promise<void>>();
  /** Beyond the bound, in arrival order: a publish that ends starts the next (so: waiting ⇒ the bound is reached). */
  const waiting: Array<{ item: T; done: () => void }> = [];
  let stopping = false;

  async function publishOnce(item: T): Promise<void> {
    let topic = '';
    try {
      const encoded = deps.encode(item);
      topic = encoded.topic;
      for (let attempt = 1; ; attempt += 1) {
        const r = await deps.bus.publish(topic, encoded.envelope);
        if (r.ok) return deps.published(item);
        if (!hasAttemptsLeft(PUBLISH_RETRY, attempt) || stopping) return deps.failed(item, topic, r.error);
        await deps.sleep(backoffDelay(PUBLISH_RETRY, attempt));
      }
    } catch (error) {
      // An encoder or bus that throws instead of answering: given up as a failed publish, never a
      // rejection that no caller awaits, nor one that leaves the items waiting behind it unstarted.
      deps.failed(item, topic, error instanceof Error ? error.message : String(error));
    }
  }

  function start(item: T): Promise<void> {
    const p = publishOnce(item).finally(() => {
      inFlight.delete(p);
      const next = waiting.shift();
      if (next) void start(next.item).then(next.done);
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
      return new Promise<void>((done) => waiting.push({ item, done }));
    },
    room: () => (inFlight.size >= deps.maxInFlight ? waitForRoom() : undefined),
    async drain() {
      stopping = true;
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
