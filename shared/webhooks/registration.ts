// The eight webhook configurations of infra/webhooks, rendered for one cluster: the functions' URL,
// the CA bundle (or none: a publicly trusted endpoint), and how the cluster authenticates (a path
// credential in each URL, or nothing in the URL and a bearer JWT from the admission kubeconfig).
// On a server with in-tree policies (shared/kube/features.ts) each webhook also gets the
// matchConditions of shared/policies/match-conditions.ts, and the webhooks the policies back up
// fail open. `furnish webhooks` prints them; `furnish install` and `npm start` register them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { credentialPath } from '../auth/path-credential.ts';
import { WEBHOOKS, type PolicySettings, type WebhookName } from '../config/types.ts';
import { webhookMatchConditions } from '../policies/match-conditions.ts';

const INFRA_WEBHOOKS = join(import.meta.dirname, '..', '..', 'infra', 'webhooks');

export interface RegistrationOptions {
  /** Base URL the functions are served under (each webhook at `<functionsUrl>/<name>`). */
  functionsUrl: string;
  /** Path mode: the cluster and its (current) path credential. Omitted: bearer JWT mode. */
  pathCredential?: { cluster: string; credential: string };
  /** Base64 PEM of the CA of the functions' certificate; omitted for a publicly trusted endpoint. */
  caBundle?: string;
  /**
   * The server has in-tree policies, and Furnish's (rendered from these settings) are installed
   * with the registrations: the in-tree variant. Omitted: the webhook-only registrations.
   */
  inTree?: PolicySettings;
}

interface MatchCondition {
  name: string;
  expression: string;
}

interface WebhookConfiguration {
  metadata: { name: string };
  webhooks: { clientConfig: { url?: string; caBundle?: string }; failurePolicy?: string; matchConditions?: MatchCondition[] }[];
}

/**
 * The webhooks that fail open in the in-tree variant: mutate-namespace, as furnish-namespace-marks,
 * furnish-creator-immutable and furnish-phase-and-ready require what it records (a tenant's
 * unmarked namespace is refused in-tree; an administrator's, who may opt out, is created unmarked).
 * Every other webhook also judges state no policy sees, and keeps its manifest's failurePolicy.
 */
export const FAIL_OPEN_IN_TREE: readonly WebhookName[] = ['mutate-namespace'];

/** One configuration of infra/webhooks (`furnish-<name>`) with every template variable filled in. */
export function webhookRegistration(name: WebhookName, options: RegistrationOptions): WebhookConfiguration {
  const suffix = options.pathCredential ? credentialPath(options.pathCredential.cluster, options.pathCredential.credential) : '';
  const base = options.functionsUrl.replace(/\/+$/, '');
  const config = parse(readFileSync(join(INFRA_WEBHOOKS, `${name}.yaml`), 'utf8')) as WebhookConfiguration;
  const conditions = options.inTree && webhookMatchConditions(options.inTree)[name];
  for (const hook of config.webhooks) {
    hook.clientConfig.url = `${base}/${name}${suffix}`;
    if (options.caBundle) hook.clientConfig.caBundle = options.caBundle;
    else delete hook.clientConfig.caBundle;
    if (conditions && conditions.length > 0) hook.matchConditions = conditions.map((c) => ({ ...c }));
    if (options.inTree && FAIL_OPEN_IN_TREE.includes(name)) hook.failurePolicy = 'Ignore';
  }
  return config;
}

/** The configurations with every template variable filled in, in webhook order. */
export function webhookRegistrations(options: RegistrationOptions): object[] {
  return WEBHOOKS.map((name) => webhookRegistration(name, options));
}

/** As one multi-document YAML stream, for `kubectl apply -f -`. */
export function registrationYaml(options: RegistrationOptions): string {
  return webhookRegistrations(options).map((o) => stringify(o)).join('---\n');
}
