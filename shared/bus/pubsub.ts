// Pub/Sub publisher: one Topic handle per topic with message ordering on, batching on. The
// client honours PUBSUB_EMULATOR_HOST by itself, so the emulator needs no code path of its own.
// Imported lazily: only the relay and reconcile-template publish.
import type { Envelope } from './envelope.ts';
import type { Logger } from '../log.ts';
import { silentLogger } from '../log.ts';
import { emptyStats, type Bus, type PublishResult } from './types.ts';

export interface PubSubBusOptions {
  projectId: string;
  /** host:port of the Pub/Sub emulator, when not from PUBSUB_EMULATOR_HOST (`npm start` passes its settings). */
  emulatorHost?: string;
  log?: Logger;
  /** Batching: flush after this many messages or milliseconds, whichever first. */
  maxMessages?: number;
  maxMilliseconds?: number;
}

type PubSubModule = typeof import('@google-cloud/pubsub');
type Topic = InstanceType<PubSubModule['Topic']>;

export async function createPubSubBus(opts: PubSubBusOptions): Promise<Bus> {
  const { PubSub } = await import('@google-cloud/pubsub');
  const log = opts.log ?? silentLogger;
  const client = new PubSub({ projectId: opts.projectId, ...(opts.emulatorHost ? { apiEndpoint: opts.emulatorHost, emulatorMode: true } : {}) });
  const topics = new Map<string, Topic>();
  const stats = emptyStats();
  const inFlight = new Set<Promise<unknown>>();

  const topicOf = (name: string): Topic => {
    let t = topics.get(name);
    if (!t) {
      t = client.topic(name, { messageOrdering: true, batching: { maxMessages: opts.maxMessages ?? 500, maxMilliseconds: opts.maxMilliseconds ?? 10 } });
      topics.set(name, t);
    }
    return t;
  };

  const flush = async () => {
    await Promise.all([...topics.values()].map((t) => t.flush()));
    await Promise.allSettled([...inFlight]);
  };

  return {
    stats,
    async publish(topic: string, envelope: Envelope): Promise<PublishResult> {
      const t = topicOf(topic);
      const p = t.publishMessage({ data: envelope.data, attributes: envelope.attributes, orderingKey: envelope.orderingKey });
      inFlight.add(p);
      try {
        const id = await p;
        stats.published += 1;
        return { ok: true, id };
      } catch (e) {
        stats.failed += 1;
        // An ordering key stops after a failure until resumed; the resync repairs what was lost.
        t.resumePublishing(envelope.orderingKey);
        log.log('WARNING', 'publish failed', { topic, orderingKey: envelope.orderingKey, error: (e as Error).message });
        return { ok: false, error: (e as Error).message };
      } finally {
        inFlight.delete(p);
      }
    },
    flush,
    async close() {
      await flush();
      await client.close();
    },
  };
}
