// The relay's publishing: one small message per change, on the topic of its kind, retried with
// backoff, at most maxInFlight at once; beyond that a watch's change waits as itself, a list for
// room (shared/bus/bounded.ts says why). Failures are counted and logged; the next resync or
// redrive repairs them.
import { boundedPublisher } from '../../../shared/bus/bounded.ts';
import type { Bus } from '../../../shared/bus/types.ts';
import { encodeMessage, type MessageKind, type ReconcileMessage } from '../../../shared/bus/envelope.ts';
import { newestRevision } from '../../../shared/kube/revisions.ts';
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

/**
 * One message for two changes of an object waiting to be published: the newer, asking for all
 * either asks. Its type, unless a resync's SYNC follows a change (a change fans a template out, a
 * SYNC does not: fanoutNeeded); the organizations either concerns (every one when either is not
 * narrowed: a SYNC, or none named; shared/org/function.ts); the newest revision of the two (a
 * namespace's messages come from three watches, so the later to arrive may name the older).
 */
export function mergeChanges(older: Change, newer: Change): Change {
  const type = newer.type === 'SYNC' ? older.type : newer.type;
  const { organizations: _newer, ...rest } = newer;
  const merged = { ...rest, resourceVersion: newestRevision([older.resourceVersion, newer.resourceVersion]) ?? newer.resourceVersion };
  const narrowed = (c: Change): c is Change & { organizations: string[] } => c.type !== 'SYNC' && c.organizations !== undefined;
  if (!narrowed(older) || !narrowed(newer)) return { ...merged, type };
  return { ...merged, type, organizations: [...new Set([...older.organizations, ...newer.organizations])].sort() };
}

export interface PublishCounters {
  published: number;
  publishFailed: number;
}

export interface Publisher {
  publish(kind: MessageKind, change: Change): void;
  /** Resolves once fewer than the bound are in flight; undefined when there is room already. */
  room(): Promise<void> | undefined;
  /** Stops retrying and waits for every publish in flight or waiting. */
  drain(): Promise<void>;
}

export function createPublisher(deps: { bus: Bus; cluster: string; topics: Topics; log: Logger; counters: PublishCounters; sleep: (ms: number) => Promise<void>; maxInFlight: number }): Publisher {
  const { log, counters } = deps;
  const publisher = boundedPublisher<{ kind: MessageKind; change: Change }>({
    bus: deps.bus,
    maxInFlight: deps.maxInFlight,
    sleep: deps.sleep,
    encode: ({ kind, change }) => ({ topic: topicFor(deps.topics, kind), envelope: encodeMessage(messageOf(deps.cluster, kind, change)) }),
    // Messages name what changed, and receivers read current state: one per object waits.
    coalesce: { key: ({ kind, change }) => `${kind}/${change.name}`, merge: (older, newer) => ({ kind: newer.kind, change: mergeChanges(older.change, newer.change) }) },
    published: () => void (counters.published += 1),
    failed: ({ kind, change }, topic, error) => {
      counters.publishFailed += 1;
      log.log('WARNING', 'publish failed; the next resync or redrive repairs it', { kind, name: change.name, topic, error });
    },
  });
  return {
    publish: (kind, change) => void publisher.publish({ kind, change }),
    room: publisher.room,
    drain: publisher.drain,
  };
}
