// The relay's HTTP face: /healthz (the process is alive), /readyz (listed and watching),
// /metrics (Prometheus text: events seen, published, failed, relists, reconnects, memory).
import { createServer, type Server } from 'node:http';
import type { BusStats } from '../../../shared/bus/types.ts';
import type { Relay } from './relay.ts';
import { MetricsRegistry, PROMETHEUS_CONTENT_TYPE } from '../../../shared/metrics.ts';

/** Each counter of the relay: its metric and what it counts (the HELP line). */
const COUNTERS: ReadonlyArray<[keyof Relay['counters'], string, string]> = [
  ['eventsSeen', 'furnish_relay_events_seen_total', 'Watch events received (bookmarks excluded).'],
  ['bookmarks', 'furnish_relay_bookmarks_total', 'Watch bookmarks received.'],
  ['published', 'furnish_relay_published_total', 'Reconcile messages published.'],
  ['publishFailed', 'furnish_relay_publish_failed_total', 'Reconcile messages not published after every retry.'],
  ['suppressed', 'furnish_relay_suppressed_total', 'Changes that needed no message (the relay already held that state of the object).'],
  ['relists', 'furnish_relay_relists_total', 'Full lists of a watched kind.'],
  ['gone', 'furnish_relay_gone_total', 'Watches ended by 410 Gone (then relisted).'],
  ['watches', 'furnish_relay_watches_total', 'Watch requests opened.'],
  ['reconnects', 'furnish_relay_reconnects_total', 'Watches that failed and were reopened after a backoff.'],
  ['resyncs', 'furnish_relay_resyncs_total', 'Full resyncs (a SYNC message per object).'],
  ['silentRelists', 'furnish_relay_silent_relists_total', 'Watches ended by the watchdog for silence, then relisted.'],
  ['silentDriftWatches', 'furnish_relay_silent_drift_watches_total', 'Drift watches ended by the watchdog for silence, then opened again from the last revision seen.'],
  ['driftGaps', 'furnish_relay_drift_gaps_total', 'Drift watches that expired (410 Gone) and resumed from the current revision, each followed by a resync of every namespace.'],
  ['redriven', 'furnish_relay_redriven_total', 'Messages re-published for namespaces still pending after a redrive period.'],
  ['drift', 'furnish_relay_drift_total', "Changes of Furnish's objects by someone else, sent as a reconcile."],
  ['parents', 'furnish_relay_parents_total', "Writes of a namespace's ApplySet parent, sent as a reconcile."],
];

/** The relay's /metrics: Prometheus text with HELP and TYPE for every family (shared/metrics.ts). */
export function metricsText(relay: Relay, bus: BusStats, memory: NodeJS.MemoryUsage = process.memoryUsage()): string {
  const registry = new MetricsRegistry();
  const one = (value: number) => () => [{ labels: {}, value }];
  for (const [key, name, help] of COUNTERS) registry.collected(name, help, 'counter', one(relay.counters[key]));
  registry.collected('furnish_relay_bus_published_total', 'Messages the bus accepted.', 'counter', one(bus.published));
  registry.collected('furnish_relay_bus_failed_total', 'Messages the bus refused.', 'counter', one(bus.failed));
  const sizes = relay.sizes();
  registry.collected('furnish_relay_known_objects', 'Objects the relay holds a record of, by kind.', 'gauge', () => (['Namespace', 'NamespaceTemplate', 'LNamespace'] as const).map((kind) => ({ labels: { kind }, value: sizes[kind] })));
  registry.collected('furnish_relay_pending_namespaces', 'Namespaces in phase pending.', 'gauge', one(relay.pending()));
  registry.collected('furnish_relay_heap_used_bytes', 'V8 heap in use.', 'gauge', one(memory.heapUsed));
  registry.collected('furnish_relay_rss_bytes', 'Resident set size of the process.', 'gauge', one(memory.rss));
  registry.collected('furnish_relay_ready', '1 once every watched kind is listed and watched, else 0.', 'gauge', one(relay.ready() ? 1 : 0));
  return registry.text();
}

export function relayServer(relay: Relay, bus: () => BusStats): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    if (path === '/readyz') {
      const ready = relay.ready();
      return void res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ready\n' : 'not ready\n');
    }
    if (path === '/metrics') return void res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE }).end(metricsText(relay, bus()));
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
}
