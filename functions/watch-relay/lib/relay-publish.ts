// The relay's publishing: one small message per change, on the topic of its kind, retried
// with backoff, with a bound on publishes in flight (lists wait for room, so memory stays flat
// during a resync). Failures are counted and logged; the next resync or redrive repairs them.
import type { Bus } from '../../../shared/bus/types.ts';
import { encodeMessage, type MessageKind, type ReconcileMessage } from '../../../shared/bus/envelope.ts';
import { backoffDelay, hasAttemptsLeft, PUBLISH_RETRY } from '../../../shared/kube/retry.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Topics } from './config.ts';
import type { Change } from './versions.ts';

/**
 * The topic a message takes: one per kind. Every message about a namespace (its own changes, its
 * ApplySet parent's, drift, redrive, resync) takes the namespaces topic: the ordering key
 * cluster/Namespace/<name> serializes its reconciles on one topic only.
 */
export function topicFor(topics: Topics, kind: MessageKind): string {
  if (kind === 'LNamespace') return topics.lnamespaces!;
  if (kind === 'NamespaceTemplate') return topics.templates;
  return topics.namespaces;
}

export function messageOf(cluster: string, kind: MessageKind, change: Change): ReconcileMessage {
  const msg: ReconcileMessage = { v: 1, cluster, kind, name: change.name, uid: change.uid, resourceVersion: change.resourceVersion, type: change.type };
  if (change.generation !== undefined) msg.generation = change.generation;
  if (change.organizations) msg.organizations = change.organizations;
  return msg;
}

export interface PublishCounters {
  published: number;
  publishFailed: number;
}

export interface Publisher {
  publish(kind: MessageKind, change: Change): void;
  /** Resolves once fewer than the bound are in flight; undefined when there is room already. */
  room(): Promise<void> | undefined;
  /** Stops retrying and waits for every publish in flight. */
  drain(): Promise<void>;
}

export function createPublisher(deps: { bus: Bus; cluster: string; topics: Topics; log: Logger; counters: PublishCounters; sleep: (ms: number) => Promise<void>; maxInFlight: number }): Publisher {
  const { bus, log, counters } = deps;
  const inFlight = new Set<Promise<void>>();
  let stopping = false;

  async function publishOnce(kind: MessageKind, change: Change): Promise<void> {
    const topic = topicFor(deps.topics, kind);
    const envelope = encodeMessage(messageOf(deps.cluster, kind, change));
    for (let attempt = 1; ; attempt += 1) {
      const r = await bus.publish(topic, envelope);
      if (r.ok) {
        counters.published += 1;
        return;
      }
      if (!hasAttemptsLeft(PUBLISH_RETRY, attempt) || stopping) {
        counters.publishFailed += 1;
        log.log('WARNING', 'publish failed; the next resync or redrive repairs it', { kind, name: change.name, topic, error: r.error });
        return;
      }
      await deps.sleep(backoffDelay(PUBLISH_RETRY, attempt));
    }
  }

  async function waitForRoom(): Promise<void> {
    while (inFlight.size >= deps.maxInFlight) await Promise.race(inFlight);
  }

  return {
    publish(kind, change) {
      const p = publishOnce(kind, change).finally(() => inFlight.delete(p));
      inFlight.add(p);
    },
    room: () => (inFlight.size >= deps.maxInFlight ? waitForRoom() : undefined),
    async drain() {
      stopping = true;
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
