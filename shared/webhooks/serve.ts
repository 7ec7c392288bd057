// Builds a webhook's HTTP function from the process configuration: validated once at start
// (a bad setting stops the function from starting, naming the setting).
import type { HttpFunction } from '@google-cloud/functions-framework';
import { createWebhookAuthenticator } from '../auth/webhook-token.ts';
import { audienceFor, loadConfig } from '../config/load.ts';
import type { FurnishConfig, WebhookName } from '../config/types.ts';
import { gateDedicatedProcess } from './body-gate.ts';
import { clusterDepsCache } from './cluster-deps.ts';
import { HANDLERS } from './handlers/index.ts';
import { webhookHttpFunction } from './http.ts';
import { outsideDomain } from '../functions/outside-domain.ts';

export function webhookFromConfig(webhook: WebhookName, config: FurnishConfig): HttpFunction {
  return outsideDomain(webhookHttpFunction({
    webhook,
    handler: HANDLERS[webhook],
    authenticator: createWebhookAuthenticator(config.clusters, audienceFor(config, webhook)),
    depsFor: clusterDepsCache(),
    maxBodyBytes: config.maxBodyBytes,
  }));
}

export async function webhookFunction(webhook: WebhookName, env: Record<string, string | undefined> = process.env): Promise<HttpFunction> {
  const fn = webhookFromConfig(webhook, await loadConfig(env));
  // Before the framework's server exists: from its first request on, bodies wait for our check.
  gateDedicatedProcess(env);
  return fn;
}
