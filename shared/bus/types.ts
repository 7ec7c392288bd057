// The bus between the relay, the template fan-out and the reconcilers: Pub/Sub in the cloud (and
// with the emulator), an in-process bus for the local stack and tests. Both carry the same
// Envelope (shared/bus/envelope.ts) and honour one ordering key per object.
import type { Envelope } from './envelope.ts';

export type PublishResult = { ok: true; id: string } | { ok: false; error: string };

export interface BusStats {
  published: number;
  failed: number;
  delivered: number;
  redelivered: number;
  deadLettered: number;
}

export interface Bus {
  publish(topic: string, envelope: Envelope): Promise<PublishResult>;
  /** Resolves when every publish so far has been sent (or has failed). */
  flush(): Promise<void>;
  close(): Promise<void>;
  readonly stats: BusStats;
}

export interface Delivery {
  id: string;
  data: Buffer;
  attributes: Record<string, string>;
  orderingKey: string;
  /** 1 for the first delivery. */
  attempt: number;
}

/** Throwing fails the delivery: the bus redelivers it later, like a Pub/Sub nack. */
export type Handler = (delivery: Delivery) => Promise<void>;

export interface SubscribeOptions {
  /** Deliveries before a message is dead-lettered (counted and logged, then dropped). */
  maxAttempts?: number;
  /** Deliveries in flight for this subscription (messages with one ordering key never overlap). */
  concurrency?: number;
  /** Redelivery backoff, like a subscription's retry policy. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export interface SubscribableBus extends Bus {
  subscribe(topic: string, handler: Handler, options?: SubscribeOptions): void;
  /** Resolves when nothing is queued or in flight (tests and benchmarks wait on it). */
  idle(): Promise<void>;
}

export function emptyStats(): BusStats {
  return { published: 0, failed: 0, delivered: 0, redelivered: 0, deadLettered: 0 };
}
