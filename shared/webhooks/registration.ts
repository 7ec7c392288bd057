// The eight webhook configurations of infra/webhooks, rendered for one cluster: the functions' URL,
// the CA bundle (or none: a publicly trusted endpoint), and how the cluster authenticates (a path
// credential in each URL, or nothing in the URL and a bearer JWT from the admission kubeconfig).
// `furnish webhooks` prints them; the end-to-end suite registers them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { credentialPath } from '../auth/path-credential.ts';
import { WEBHOOKS } from '../config/types.ts';

const INFRA_WEBHOOKS = join(import.meta.dirname, '..', '..', 'infra', 'webhooks');

export interface RegistrationOptions {
  /** Base URL the functions are served under (each webhook at `<functionsUrl>/<name>`). */
  functionsUrl: string;
  /** Path mode: the cluster and its (current) path credential. Omitted: bearer JWT mode. */
  pathCredential?: { cluster: string; credential: string };
  /** Base64 PEM of the CA of the functions' certificate; omitted for a publicly trusted endpoint. */
  caBundle?: string;
}

interface WebhookConfiguration {
  webhooks: { clientConfig: { url?: string; caBundle?: string } }[];
}

/** The configurations with every template variable filled in, in webhook order. */
export function webhookRegistrations(options: RegistrationOptions): object[] {
  const suffix = options.pathCredential ? credentialPath(options.pathCredential.cluster, options.pathCredential.credential) : '';
  const base = options.functionsUrl.replace(/\/+$/, '');
  return WEBHOOKS.map((name) => {
    const config = parse(readFileSync(join(INFRA_WEBHOOKS, `${name}.yaml`), 'utf8')) as WebhookConfiguration;
    for (const hook of config.webhooks) {
      hook.clientConfig.url = `${base}/${name}${suffix}`;
      if (options.caBundle) hook.clientConfig.caBundle = options.caBundle;
      else delete hook.clientConfig.caBundle;
    }
    return config;
  });
}

/** As one multi-document YAML stream, for `kubectl apply -f -`. */
export function registrationYaml(options: RegistrationOptions): string {
  return webhookRegistrations(options).map((o) => stringify(o)).join('---\n');
}
