// The in-process bus: what Pub/Sub does, in memory, for the local stack and tests. Messages of
// one ordering key are delivered one at a time in publish order; a handler that throws gets the
// message again after a backoff, up to maxAttempts; each subscription has bounded concurrency.
import type { Envelope } from './envelope.ts';
import type { Logger } from '../log.ts';
import { silentLogger } from '../log.ts';
import { backoffDelay } from '../kube/retry.ts';
import { emptyStats, type Delivery, type Handler, type PublishResult, type SubscribableBus, type SubscribeOptions } from './types.ts';

interface Subscription {
  topic: string;
  handler: Handler;
  options: Required<SubscribeOptions>;
  /** ordering key → messages waiting, in order. */
  queues: Map<string, Delivery[]>;
  /** keys with a delivery in flight or waiting for redelivery. */
  busy: Set<string>;
  ready: string[];
  inFlight: number;
}

export interface MemoryBusOptions {
  log?: Logger;
  /** Drop (and count as failed) publishes to this topic; tests use it to lose messages on purpose. */
  dropTopic?: (topic: string) => boolean;
  /**
   * Deliveries queued or in flight, per topic, before `publish` to that topic waits (backpressure,
   * like a publisher's flow control per topic): a resync filling one topic never holds up another.
   */
  maxPending?: number;
}

const DEFAULTS: Required<SubscribeOptions> = { maxAttempts: 10, concurrency: 32, minBackoffMs: 50, maxBackoffMs: 5_000 };

export function createMemoryBus(opts: MemoryBusOptions = {}): SubscribableBus {
  const log = opts.log ?? silentLogger;
  const stats = emptyStats();
  const subs = new Map<string, Subscription[]>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let sequence = 0;
  let pending = 0;
  /** Deliveries queued or in flight per topic, for backpressure. */
  const pendingOf = new Map<string, number>();
  let waiters: (() => void)[] = [];
  let roomWaiters: (() => void)[] = [];
  let closed = false;
  const maxPending = opts.maxPending ?? 1000;

  const settle = () => {
    if (roomWaiters.length > 0) {
      const w = roomWaiters;
      roomWaiters = [];
      w.forEach((r) => r());
    }
    if (pending === 0) {
      const w = waiters;
      waiters = [];
      w.forEach((r) => r());
    }
  };

  /** One delivery of `sub` finished for good (acknowledged or dead-lettered). */
  function done(sub: Subscription): void {
    pending -= 1;
    pendingOf.set(sub.topic, (pendingOf.get(sub.topic) ?? 1) - 1);
  }

  function pump(sub: Subscription): void {
    while (sub.inFlight < sub.options.concurrency && sub.ready.length > 0) {
      const key = sub.ready.shift()!;
      const queue = sub.queues.get(key);
      const delivery = queue?.shift();
      if (!delivery) {
        sub.busy.delete(key);
        continue;
      }
      sub.inFlight += 1;
      void run(sub, key, delivery);
    }
  }

  function nextOfKey(sub: Subscription, key: string): void {
    const queue = sub.queues.get(key);
    if (queue && queue.length > 0) sub.ready.push(key);
    else {
      sub.queues.delete(key);
      sub.busy.delete(key);
    }
  }

  async function run(sub: Subscription, key: string, delivery: Delivery): Promise<void> {
    try {
      await sub.handler(delivery);
      stats.delivered += 1;
      sub.inFlight -= 1;
      done(sub);
      nextOfKey(sub, key);
    } catch (e) {
      sub.inFlight -= 1;
      if (delivery.attempt >= sub.options.maxAttempts || closed) {
        stats.deadLettered += 1;
        done(sub);
        log.log('ERROR', 'message dead-lettered', { orderingKey: key, attempts: delivery.attempt, error: (e as Error).message });
        nextOfKey(sub, key);
      } else {
        stats.redelivered += 1;
        const delay = backoffDelay({ attempts: sub.options.maxAttempts, baseMs: sub.options.minBackoffMs, maxMs: sub.options.maxBackoffMs, factor: 2, jitter: 0.5 }, delivery.attempt);
        const t = setTimeout(() => {
          timers.delete(t);
          sub.queues.set(key, [{ ...delivery, attempt: delivery.attempt + 1 }, ...(sub.queues.get(key) ?? [])]);
          sub.ready.push(key);
          pump(sub);
        }, delay);
        timers.add(t);
      }
    }
    settle();
    pump(sub);
  }

  return {
    stats,
    subscribe(topic, handler, options = {}) {
      const list = subs.get(topic) ?? [];
      list.push({ topic, handler, options: { ...DEFAULTS, ...options }, queues: new Map(), busy: new Set(), ready: [], inFlight: 0 });
      subs.set(topic, list);
    },
    async publish(topic: string, envelope: Envelope): Promise<PublishResult> {
      if (closed) {
        stats.failed += 1;
        return { ok: false, error: 'bus closed' };
      }
      if (opts.dropTopic?.(topic)) {
        stats.failed += 1;
        return { ok: false, error: 'dropped' };
      }
      while ((pendingOf.get(topic) ?? 0) >= maxPending && !closed) await new Promise<void>((r) => roomWaiters.push(r));
      const id = String(++sequence);
      stats.published += 1;
      for (const sub of subs.get(topic) ?? []) {
        pending += 1;
        pendingOf.set(topic, (pendingOf.get(topic) ?? 0) + 1);
        const delivery: Delivery = { id, data: envelope.data, attributes: envelope.attributes, orderingKey: envelope.orderingKey, attempt: 1 };
        const queue = sub.queues.get(envelope.orderingKey) ?? [];
        queue.push(delivery);
        sub.queues.set(envelope.orderingKey, queue);
        if (!sub.busy.has(envelope.orderingKey)) {
          sub.busy.add(envelope.orderingKey);
          sub.ready.push(envelope.orderingKey);
        }
        pump(sub);
      }
      return { ok: true, id };
    },
    async flush() {},
    idle() {
      return pending === 0 ? Promise.resolve() : new Promise<void>((r) => waiters.push(r));
    },
    async close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
