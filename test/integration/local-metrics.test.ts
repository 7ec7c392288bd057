// `npm start` prints where its components serve metrics, and each of those URLs answers Prometheus
// text with HELP and TYPE for every family (issue 28, item 8): the relay, the reconcilers and the
// webhooks, the last reached through the path secret the registrations carry, which nobody was
// told before. After a namespace went through the webhooks and the reconcilers, so that the
// families have samples.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request as httpsRequest } from 'node:https';
import { localMetricsUrls, metricsBanner, type LocalMetricsUrls } from '../../scripts/start/metrics-urls.ts';
import { startLocalStack, type LocalStack } from '../../scripts/start/stack.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/log.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { parsePrometheus } from '../support/prometheus.ts';
import { clientFor, waitReady } from './helpers.ts';

const NS = `metrics-${Math.random().toString(36).slice(2, 7)}`;
let cluster: TestCluster;
let admin: KubeClient;
let stack: LocalStack;
let urls: LocalMetricsUrls;

/** GET over HTTP, or HTTPS to the webhooks' loopback server (its certificate is made at start, for 127.0.0.1). */
function get(url: string): Promise<{ status: number; type: string; text: string }> {
  if (url.startsWith('http:')) return fetch(url).then(async (r) => ({ status: r.status, type: r.headers.get('content-type') ?? '', text: await r.text() }));
  return new Promise((resolve, reject) => {
    httpsRequest(url, { rejectUnauthorized: false }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), text }));
    }).on('error', reject).end();
  });
}

beforeAll(async () => {
  cluster = await useTestCluster();
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  admin = await clientFor(cluster.kubeconfigPath, context);
  stack = await startLocalStack({ kubeconfigPath: cluster.kubeconfigPath, context, port: 0, relayPort: 0, webhookPort: 0, resyncSeconds: 0, log: silentLogger, env: { FURNISH_WATCH_TIMEOUT_SECONDS: '5' } });
  const created = await admin.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  if (!created.ok) throw new Error(`create ${NS}: ${created.status} ${created.error}`);
  await waitReady(admin, NS, 60_000);
  urls = await localMetricsUrls(stack);
}, 120_000);

afterAll(async () => {
  if (cluster && !cluster.isSimulated && admin) await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${NS}` });
  await stack?.stop();
  admin?.close();
  await cluster?.stop();
}, 60_000);

describe('the metrics URLs npm start prints', () => {
  it('names the relay, the reconcilers and the webhooks (with the path secret of the registrations)', () => {
    expect(urls.relay).toBe(`http://127.0.0.1:${stack.relay.port}/metrics`);
    expect(urls.reconcilers).toBe(`${stack.reconcilerUrl}/reconcile-namespace/metrics`);
    expect(urls.webhooks).toMatch(new RegExp(`^${stack.webhookUrl!.replace(/\./g, '\\.')}/[0-9a-f]{32}/validate-namespace/metrics$`));
    const banner = metricsBanner(urls);
    for (const url of Object.values(urls)) expect(banner).toContain(url);
  });

  it.each([
    ['relay', ['furnish_relay_events_seen_total', 'furnish_relay_published_total', 'furnish_relay_known_objects', 'furnish_relay_ready']],
    ['reconcilers', ['furnish_reconcile_deliveries_total', 'furnish_reconcile_delivery_seconds', 'furnish_kube_requests_total', 'furnish_kube_writes_total']],
    ['webhooks', ['furnish_admission_decisions_total', 'furnish_admission_decision_seconds', 'furnish_webhook_http_responses_total']],
  ] as const)('the %s answer Prometheus text, every family with HELP and TYPE', async (component, families) => {
    const res = await get(urls[component]!);
    expect(res.status).toBe(200);
    expect(res.type).toContain('text/plain; version=0.0.4');
    const parsed = parsePrometheus(res.text);
    expect(parsed.problems).toEqual([]);
    const byName = new Map(parsed.families.map((f) => [f.name, f]));
    // Not vacuous: the namespace's create and reconcile were counted.
    for (const name of families) expect(byName.get(name)?.samples.length ?? 0).toBeGreaterThan(0);
  });
});
