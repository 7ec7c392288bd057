// The reconcilers' metrics, Prometheus text at GET /metrics of each reconciler's HTTP function:
// deliveries by outcome (the HTTP status is the ack), their duration, and what the Kubernetes
// client did for them (requests, writes by resource, retries, time spent throttled), read from
// the client's own counters when scraped. On Cloud Functions every instance counts for itself;
// the per-delivery log lines (and Cloud Monitoring's request metrics) are the fleet-wide view.
import type { KubeClient } from '../kube/client.ts';
import { MetricsRegistry, type Labels } from '../metrics.ts';

export const reconcilerMetrics = new MetricsRegistry();
const deliveries = reconcilerMetrics.counter('furnish_reconcile_deliveries_total', 'Pub/Sub deliveries, by function and HTTP status (200 done, 204 acknowledged without work, 4xx refused, 503 and 500 redelivered).');
const duration = reconcilerMetrics.histogram('furnish_reconcile_delivery_seconds', 'Time to answer a delivery, by function.');

/** The clients the deliveries used, by function and cluster. */
const clients = new Map<string, { labels: Labels; kube: KubeClient }>();

function fromClients(value: (kube: KubeClient) => number): () => { labels: Labels; value: number }[] {
  return () => [...clients.values()].map(({ labels, kube }) => ({ labels, value: value(kube) }));
}

reconcilerMetrics.collected('furnish_kube_requests_total', 'Kubernetes API requests, by function and cluster.', 'counter', fromClients((k) => k.metrics.requests));
reconcilerMetrics.collected('furnish_kube_retries_total', 'Kubernetes API requests retried, by function and cluster.', 'counter', fromClients((k) => k.metrics.retries));
reconcilerMetrics.collected('furnish_kube_throttled_seconds_total', 'Time spent waiting for the client-side rate limit, by function and cluster.', 'counter', fromClients((k) => k.metrics.throttledMs / 1000));
reconcilerMetrics.collected('furnish_kube_writes_total', 'Kubernetes API writes (dry runs excluded), by function, cluster and resource.', 'counter', () =>
  [...clients.values()].flatMap(({ labels, kube }) => Object.entries(kube.metrics.writesByResource).map(([resource, value]) => ({ labels: { ...labels, resource }, value }))));

export function observeDelivery(fn: string, status: number, seconds: number): void {
  deliveries.inc({ function: fn, status: String(status) });
  duration.observe({ function: fn }, seconds);
}

export function trackClient(fn: string, cluster: string, kube: KubeClient): void {
  const key = `${fn}/${cluster}`;
  if (clients.get(key)?.kube !== kube) clients.set(key, { labels: { function: fn, cluster }, kube });
}
