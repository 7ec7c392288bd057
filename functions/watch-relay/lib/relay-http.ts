// The relay's HTTP face: /healthz (the process is alive), /readyz (listed and watching),
// /metrics (Prometheus text: events seen, published, failed, relists, reconnects, memory).
import { createServer, type Server } from 'node:http';
import type { BusStats } from '../../../shared/bus/types.ts';
import type { Relay } from './relay.ts';

export function metricsText(relay: Relay, bus: BusStats, memory: NodeJS.MemoryUsage = process.memoryUsage()): string {
  const c = relay.counters;
  const sizes = relay.sizes();
  const lines = [
    ['furnish_relay_events_seen_total', c.eventsSeen],
    ['furnish_relay_bookmarks_total', c.bookmarks],
    ['furnish_relay_published_total', c.published],
    ['furnish_relay_publish_failed_total', c.publishFailed],
    ['furnish_relay_suppressed_total', c.suppressed],
    ['furnish_relay_relists_total', c.relists],
    ['furnish_relay_gone_total', c.gone],
    ['furnish_relay_watches_total', c.watches],
    ['furnish_relay_reconnects_total', c.reconnects],
    ['furnish_relay_resyncs_total', c.resyncs],
    ['furnish_relay_silent_relists_total', c.silentRelists],
    ['furnish_relay_redriven_total', c.redriven],
    ['furnish_relay_drift_total', c.drift],
    ['furnish_relay_parents_total', c.parents],
    ['furnish_relay_bus_published_total', bus.published],
    ['furnish_relay_bus_failed_total', bus.failed],
    ['furnish_relay_known_objects{kind="Namespace"}', sizes.Namespace],
    ['furnish_relay_known_objects{kind="NamespaceTemplate"}', sizes.NamespaceTemplate],
    ['furnish_relay_known_objects{kind="LNamespace"}', sizes.LNamespace],
    ['furnish_relay_pending_namespaces', relay.pending()],
    ['furnish_relay_heap_used_bytes', memory.heapUsed],
    ['furnish_relay_rss_bytes', memory.rss],
    ['furnish_relay_ready', relay.ready() ? 1 : 0],
  ] as const;
  return lines.map(([k, v]) => `${k} ${v}`).join('\n') + '\n';
}

export function relayServer(relay: Relay, bus: () => BusStats): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    if (path === '/readyz') {
      const ready = relay.ready();
      return void res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ready\n' : 'not ready\n');
    }
    if (path === '/metrics') return void res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(metricsText(relay, bus()));
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
}
