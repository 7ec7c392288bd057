// Where `npm start`'s components serve their Prometheus text, printed at start: the relay's port,
// the reconcilers' server and the webhooks' HTTPS server. Locally the webhooks are reached only
// through the random path secret the registrations carry (webhooks.ts), so their URL is read back
// from the registrations this stack wrote: the URL the API server calls, plus `/metrics`.
import type { KubeClient } from '../../shared/kube/client.ts';

export interface LocalMetricsUrls {
  relay: string;
  /** One reconciler's; the reconcilers share one server and one registry, so it counts them all. */
  reconcilers: string;
  /** One webhook's (the same: one registry for them all); absent when the webhooks are not served. */
  webhooks?: string;
}

interface Registration { webhooks?: Array<{ clientConfig?: { url?: string } }> }

const REGISTRATIONS = ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'].map((r) => `/apis/admissionregistration.k8s.io/v1/${r}`);

/** The registered URL of a webhook served at `webhookUrl` (validate-namespace's when registered), or undefined. */
export function registeredWebhookUrl(registrations: readonly Registration[], webhookUrl: string): string | undefined {
  const urls = registrations.flatMap((r) => (r.webhooks ?? []).map((w) => w.clientConfig?.url ?? '')).filter((u) => u.startsWith(`${webhookUrl}/`)).sort();
  return urls.find((u) => u.endsWith('/validate-namespace')) ?? urls[0];
}

export async function localMetricsUrls(stack: { relay: { port: number }; reconcilerUrl: string; webhookUrl?: string; kube: KubeClient }): Promise<LocalMetricsUrls> {
  const urls: LocalMetricsUrls = { relay: `http://127.0.0.1:${stack.relay.port}/metrics`, reconcilers: `${stack.reconcilerUrl}/reconcile-namespace/metrics` };
  if (!stack.webhookUrl) return urls;
  const registrations: Registration[] = [];
  for (const path of REGISTRATIONS) {
    const r = await stack.kube.call<{ items?: Registration[] }>({ method: 'GET', path });
    registrations.push(...(r.data?.items ?? []));
  }
  const webhook = registeredWebhookUrl(registrations, stack.webhookUrl);
  return webhook ? { ...urls, webhooks: `${webhook}/metrics` } : urls;
}

/** What `npm start` prints about them. */
export function metricsBanner(urls: LocalMetricsUrls): string {
  return [
    '',
    'Metrics (Prometheus text; each URL counts every function of its kind in this process):',
    `    relay        ${urls.relay}`,
    `    reconcilers  ${urls.reconcilers}`,
    urls.webhooks ? `    webhooks     ${urls.webhooks}   (certificate made for 127.0.0.1: curl -k)` : '    webhooks     not served',
    '',
  ].join('\n');
}
