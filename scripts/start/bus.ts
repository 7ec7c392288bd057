// How messages reach the local reconcilers: the in-process bus posts each delivery in Pub/Sub
// push format, or the Pub/Sub emulator gets topics and push subscriptions to the local server.
import type { SubscribableBus } from '../../shared/bus/types.ts';
import { RECORD_BILLING } from '../../shared/billing/function.ts';
import { readSetting } from '../../shared/config/settings.ts';
import type { ReconcileConfig } from '../../shared/reconcile/config.ts';

/** The relay's billing topic (docs/guide/billing.md). */
export const billingTopic = (env: Readonly<Record<string, string | undefined>>): string => readSetting(env, 'topicBilling') || 'furnish-billing';

/** Which function each topic's subscription pushes to, as terraform/locals.tf has it. */
export function pushRoutes(config: ReconcileConfig, billing: string): { topic: string; fn: string; subscription: string }[] {
  const routes = [
    { topic: config.topics.namespaces, fn: 'reconcile-namespace', subscription: 'reconcile-namespace' },
    { topic: config.topics.templates, fn: 'reconcile-template', subscription: 'reconcile-template' },
    { topic: config.topics.namespaces, fn: 'reconcile-organization', subscription: 'reconcile-organization' },
    { topic: billing, fn: RECORD_BILLING, subscription: RECORD_BILLING },
  ];
  if (config.topics.lnamespaces) routes.push({ topic: config.topics.lnamespaces, fn: 'reconcile-lnamespace', subscription: 'reconcile-lnamespace' });
  return routes;
}

/** Pub/Sub push format, as the emulator and Pub/Sub deliver it. */
function pushBody(d: { id: string; data: Buffer; attributes: Record<string, string>; orderingKey: string }, subscription: string): string {
  return JSON.stringify({ message: { data: d.data.toString('base64'), attributes: d.attributes, messageId: d.id, orderingKey: d.orderingKey }, subscription });
}

export async function memoryBusToPush(bus: SubscribableBus, config: ReconcileConfig, base: string, billing = billingTopic({})): Promise<void> {
  const route = (topic: string, fn: string, subscription: string) =>
    bus.subscribe(topic, async (d) => {
      const res = await fetch(`${base}/${fn}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: pushBody(d, `projects/local/subscriptions/${subscription}`) });
      await res.arrayBuffer();
      if (res.status >= 300) throw new Error(`${fn} answered HTTP ${res.status}`);
    }, { concurrency: 64, maxAttempts: 20, minBackoffMs: 100, maxBackoffMs: 10_000 });
  for (const r of pushRoutes(config, billing)) route(r.topic, r.fn, r.subscription);
}

export async function emulatorPush(host: string, project: string, config: ReconcileConfig, base: string, billing: string): Promise<void> {
  const rest = async (path: string, body?: unknown) => {
    const r = await fetch(`http://${host}/v1/projects/${project}/${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
    if (!r.ok && r.status !== 409) throw new Error(`Pub/Sub emulator PUT ${path}: HTTP ${r.status} ${await r.text()}`);
  };
  for (const { topic, fn, subscription } of pushRoutes(config, billing)) {
    await rest(`topics/${topic}`);
    // Recreated each start so the endpoint (port) is current.
    await fetch(`http://${host}/v1/projects/${project}/subscriptions/${subscription}`, { method: 'DELETE' });
    await rest(`subscriptions/${subscription}`, { topic: `projects/${project}/topics/${topic}`, pushConfig: { pushEndpoint: `${base}/${fn}` }, enableMessageOrdering: true, ackDeadlineSeconds: config.deliveryTimeoutSeconds, retryPolicy: { minimumBackoff: '1s', maximumBackoff: '10s' } });
  }
}
