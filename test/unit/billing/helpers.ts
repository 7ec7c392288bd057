// Builders shared by the billing suites: namespaces as the API server returns them, billing
// event messages as the relay publishes them, and rows as record-billing writes them.
import { buildRow, decodeBillingMessage } from '../../../shared/billing/event.ts';
import type { BillingEventMessage, BillingEventType, BillingMessage, BillingRow } from '../../../shared/billing/types.ts';
import { createMemoryBus } from '../../../shared/bus/memory.ts';
import type { Bus } from '../../../shared/bus/types.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { silentLogger } from '../../../shared/log.ts';

export function namespace(name: string, opts: { uid?: string; org?: string; creator?: string; billing?: Record<string, string>; rv?: string; created?: string; deleted?: string } = {}): KubeObject {
  const annotations: Record<string, string> = { 'furnish.dev/creator': opts.creator ?? 'alice' };
  for (const [k, v] of Object.entries(opts.billing ?? {})) annotations[`furnish.dev/billing.${k}`] = v;
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      uid: opts.uid ?? `uid-${name}`,
      resourceVersion: opts.rv ?? '100',
      creationTimestamp: opts.created ?? '2026-03-01T10:00:00Z',
      ...(opts.deleted ? { deletionTimestamp: opts.deleted } : {}),
      labels: { 'kubernetes.io/metadata.name': name, ...(opts.org ? { 'furnish.dev/organization': opts.org } : {}) },
      annotations,
    },
  };
}

export function message(event: BillingEventType, ns: string, eventTime: string, opts: { org?: string; rv?: string; billing?: Record<string, string>; cluster?: string } = {}): BillingEventMessage {
  return {
    v: 1,
    type: 'event',
    event,
    cluster: opts.cluster ?? 'c1',
    namespace: ns,
    uid: `uid-${ns}`,
    ...(opts.rv ? { resourceVersion: opts.rv } : event === 'updated' ? { resourceVersion: eventTime } : {}),
    eventTime,
    organization: opts.org ?? 'acme',
    creator: 'alice',
    ...(opts.billing ? { billing: opts.billing } : {}),
  };
}

export function row(event: BillingEventType, ns: string, eventTime: string, opts: { org?: string; rv?: string; billing?: Record<string, string>; cluster?: string; recorded?: string } = {}): BillingRow {
  return buildRow(message(event, ns, eventTime, opts), {}, new Date(opts.recorded ?? eventTime));
}

/** Everything a sink streams (openNamespaces), as an array. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** A bus that keeps, decoded, what the tap publishes to the billing topic (`furnish-billing`). */
export function capturingBus(published: BillingMessage[]): Bus {
  const inner = createMemoryBus({ log: silentLogger });
  return {
    ...inner,
    stats: inner.stats,
    async publish(topic, envelope) {
      const d = decodeBillingMessage(envelope.data);
      if (topic === 'furnish-billing' && d.ok) published.push(d.message);
      return { ok: true, id: String(published.length) };
    },
  };
}
