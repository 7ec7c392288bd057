// Every setting of Furnish in one declarative table: its environment variable, its path in the
// webhooks' configuration file where one applies, its parser, its default and what it does. Every
// component reads its settings through `readSetting` (one reader, one error type naming the
// variable); docs/reference/settings.md is generated from this table (`npm run settings:docs`)
// and a test keeps the two equal.
import { DEFAULT_MAX_INFLIGHT, DEFAULT_MAX_PER_SECOND } from '../kube/pacing.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../admission/decode.ts';
import { DEFAULT_LNS_SETTINGS } from '../lnamespace/desired.ts';
import { DEFAULT_ORGANIZATION_SETTINGS } from '../org/settings.ts';
import { DEFAULT_FURNISH_NAMESPACE } from './types.ts';

/** The one error of every setting: names the setting (variable, file path or flag) and what is wrong. */
export class ConfigError extends Error {
  /** The setting at fault, as the user would look for it. */
  readonly setting: string;

  constructor(setting: string, problem: string) {
    super(`${setting}: ${problem}`);
    this.name = 'ConfigError';
    this.setting = setting;
  }
}

export type Env = Record<string, string | undefined>;

/** Who reads a setting. */
export type Component = 'webhooks' | 'reconcilers' | 'relay' | 'billing' | 'lnamespace' | 'local stack';

/** Turns the variable's text into a value; throws `Invalid` with the problem; undefined means "use the default". */
export type Parser<T> = (text: string) => T | undefined;

export class Invalid extends Error {}

export interface Setting<T = unknown> {
  /** The environment variable; absent for settings only the configuration file holds. */
  env?: string;
  /** Path in the webhooks' configuration file (FURNISH_CONFIG_FILE), `clusters[]` for each cluster entry. */
  file?: string;
  parse: Parser<T>;
  /** The default: a value, or computed from the rest of the environment. */
  default?: T | ((env: Env) => T);
  /** A former name of the variable: refused with a message naming the new one (a silently ignored name would misconfigure). */
  formerly?: string;
  /** How the settings reference shows the default when it is computed or not a plain value. */
  defaultText?: string;
  usedBy: readonly Component[];
  description: string;
}

// Parsers: each says what it accepts in its error.
export const text: Parser<string> = (s) => s;
export const nonEmpty: Parser<string> = (s) => (s === '' ? undefined : s);
/**
 * A Pub/Sub topic: unset takes the default, but empty is refused. No topic has an empty name, and
 * `envsubst` turns an unset variable into an empty one: taking the default then would publish where
 * the deployment created nothing (as in Terraform, "" is a value, not unset).
 */
export const topicName: Parser<string> = (s) => {
  if (s === '') throw new Invalid('is empty, and no topic has an empty name: give the topic Terraform created (output install_vars)');
  return s;
};
export const list: Parser<string[]> = (s) => s.split(',').map((x) => x.trim()).filter((x) => x !== '');
export const bool: Parser<boolean> = (s) => {
  if (s === '') return undefined;
  if (s === 'true' || s === 'on') return true;
  if (s === 'false' || s === 'off') return false;
  throw new Invalid(`must be true or false, got ${JSON.stringify(s)}`);
};
export function number(min: number, integer = false): Parser<number> {
  return (s) => {
    if (s === '') return undefined;
    const n = Number(s);
    if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) throw new Invalid(`must be ${integer ? 'an integer' : 'a number'} ≥ ${min}, got ${JSON.stringify(s)}`);
    return n;
  };
}
export function integerBetween(min: number, max: number): Parser<number> {
  const atLeast = number(min, true);
  return (s) => {
    const n = atLeast(s);
    if (n !== undefined && n > max) throw new Invalid(`must be an integer from ${min} to ${max}, got ${JSON.stringify(s)}`);
    return n;
  };
}
export function oneOf<T extends string>(...values: T[]): Parser<T> {
  return (s) => {
    if (s === '') return undefined;
    if (!(values as string[]).includes(s)) throw new Invalid(`must be ${values.join(' or ')}, got ${JSON.stringify(s)}`);
    return s as T;
  };
}
export function json<T>(): Parser<T> {
  return (s) => {
    if (s === '') return undefined;
    try {
      return JSON.parse(s) as T;
    } catch (e) {
      throw new Invalid(`not valid JSON: ${(e as Error).message}`);
    }
  };
}
export const url: Parser<string> = (s) => {
  try {
    new URL(s);
  } catch {
    throw new Invalid(`must be a URL, got ${JSON.stringify(s)}`);
  }
  return s;
};
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
export const dnsLabel: Parser<string> = (s) => {
  if (s === '') return undefined;
  if (!DNS_LABEL.test(s)) throw new Invalid(`must be a DNS label (lower-case letters, digits, '-'), got ${JSON.stringify(s)}`);
  return s;
};
const ROLE_NAME = /^[^/%]+$/;
export const clusterRole: Parser<string> = (s) => {
  if (s === '') return undefined;
  if (!ROLE_NAME.test(s) || s === '.' || s === '..') throw new Invalid(`must name a ClusterRole, got ${JSON.stringify(s)}`);
  return s;
};

type ClusterSource = { kubeconfigPath?: string; context?: string; secret?: string; google?: { server: string; caPem?: string } };

/** FURNISH_CLUSTERS: per cluster at most one of google (an https server, a PEM CA or none), secret, kubeconfigPath (none: the local kubeconfig, with `context`). */
export const clusterSources: Parser<Record<string, ClusterSource>> = (s) => {
  const all = json<Record<string, ClusterSource>>()(s);
  if (all === undefined) return undefined;
  if (!all || typeof all !== 'object' || Array.isArray(all)) throw new Invalid('must be a JSON object of cluster ids');
  for (const [id, source] of Object.entries(all)) {
    const kinds = ['google', 'secret', 'kubeconfigPath'].filter((k) => source?.[k as keyof ClusterSource] !== undefined);
    if (kinds.length > 1) throw new Invalid(`${id}: give one of google, secret or kubeconfigPath, not ${kinds.join(' and ')}`);
    const g = source.google;
    if (g === undefined) continue;
    if (typeof g.server !== 'string' || !g.server.startsWith('https://')) throw new Invalid(`${id}.google.server: must be the API server's https:// URL, got ${JSON.stringify(g.server)}`);
    if (g.caPem !== undefined && (typeof g.caPem !== 'string' || !g.caPem.includes('-----BEGIN CERTIFICATE-----'))) throw new Invalid(`${id}.google.caPem: must be PEM (-----BEGIN CERTIFICATE-----) or absent`);
  }
  return all;
};

const reconcilerOf = (ns: string) => `system:serviceaccount:${ns}:furnish-reconciler`;
const WEBHOOKS: readonly Component[] = ['webhooks'];
const RECONCILERS: readonly Component[] = ['reconcilers'];
const RELAY: readonly Component[] = ['relay'];
const LOCAL: readonly Component[] = ['local stack'];
const ORG = DEFAULT_ORGANIZATION_SETTINGS;

/** Keeps each entry's own type (its parser's value, its variable) while checking it is a Setting. */
function setting<S extends Setting<unknown>>(s: S): S {
  return s;
}

/** Every setting. Keys are the names code uses; order is the settings reference's. */
export const SETTINGS = {
  // The cluster: one name for the webhooks (its token's `sub`) and the relay and reconcilers (messages, FURNISH_CLUSTERS).
  clusterId: setting({ env: 'FURNISH_CLUSTER_ID', formerly: 'FURNISH_CLUSTER', file: 'clusters[].id', parse: dnsLabel, default: 'local', usedBy: ['webhooks', 'relay', 'reconcilers', 'billing'], description: "this cluster's name: the webhook token's `sub` and a path credential's cluster (the webhook variables below set this cluster; the webhooks take no cluster from the environment without it), the cluster named in messages and billing rows" }),

  // Webhooks.
  configFile: setting({ env: 'FURNISH_CONFIG_FILE', parse: nonEmpty, usedBy: WEBHOOKS, description: 'YAML or `.json` file of the webhooks holding many clusters; the variables marked with a file path override or add the cluster FURNISH_CLUSTER_ID' }),
  publicUrl: setting({ env: 'FURNISH_PUBLIC_URL', file: 'publicUrl', parse: url, usedBy: WEBHOOKS, description: "base URL of the functions; a webhook's audience is `${publicUrl}/${name}`" }),
  audience: setting({ env: 'FURNISH_AUDIENCE', file: 'audience', parse: url, usedBy: WEBHOOKS, description: "this deployed function's own URL, used as its audience (Terraform sets it per function); `audiences.<webhook>` still wins" }),
  audiences: setting({ file: 'audiences.<webhook>', parse: url, usedBy: WEBHOOKS, description: "one webhook's audience (its URL)" }),
  maxBodyBytes: setting({ env: 'FURNISH_MAX_BODY_BYTES', file: 'maxBodyBytes', parse: number(1, true), default: DEFAULT_MAX_BODY_BYTES, usedBy: WEBHOOKS, description: 'largest AdmissionReview body accepted' }),
  jwtSecret: setting({ env: 'FURNISH_JWT_SECRET', file: 'clusters[].jwt.secret', parse: text, usedBy: WEBHOOKS, description: 'HS256 secret (≥ 32 bytes) of the webhook tokens; exactly one of jwt.secret, jwt.jwks, jwt.jwksUrl' }),
  jwtSecretEnv: setting({ file: 'clusters[].jwt.secretEnv', parse: nonEmpty, usedBy: WEBHOOKS, description: 'the variable holding jwt.secret (Secret Manager mounts it), so the file holds no secret' }),
  jwtJwks: setting({ env: 'FURNISH_JWT_JWKS', file: 'clusters[].jwt.jwks', parse: json<Record<string, unknown>>(), usedBy: WEBHOOKS, description: 'inline public keys (JSON `{ keys: [...] }`) of the webhook tokens' }),
  jwtJwksUrl: setting({ env: 'FURNISH_JWT_JWKS_URL', file: 'clusters[].jwt.jwksUrl', parse: text, usedBy: WEBHOOKS, description: 'where to fetch the public keys of the webhook tokens' }),
  jwtIssuer: setting({ env: 'FURNISH_JWT_ISSUER', file: 'clusters[].jwt.issuer', parse: text, usedBy: WEBHOOKS, description: 'expected `iss` of the webhook tokens (optional)' }),
  pathCredentials: setting({ env: 'FURNISH_PATH_CREDENTIALS', file: 'clusters[].pathCredentials', parse: list, default: [], usedBy: WEBHOOKS, description: "the cluster's path credentials (comma list, at most two, for rotation): managed control planes call `<url>/c/<id>/<credential>`; a cluster needs jwt, pathCredentials or both" }),
  pathCredentialsEnv: setting({ file: 'clusters[].pathCredentialsEnv', parse: nonEmpty, usedBy: WEBHOOKS, description: 'the variable holding the path credentials (comma list)' }),
  apiServer: setting({ env: 'FURNISH_API_SERVER', file: 'clusters[].api.server', parse: text, usedBy: WEBHOOKS, description: 'API server URL for SubjectAccessReviews and NamespaceTemplate look-ups' }),
  apiCa: setting({ env: 'FURNISH_API_CA', file: 'clusters[].api.caPem', parse: text, usedBy: WEBHOOKS, description: "PEM of the CA of the API server's certificate" }),
  apiToken: setting({ env: 'FURNISH_API_TOKEN', file: 'clusters[].api.token', parse: text, usedBy: WEBHOOKS, description: "bearer token of the webhooks' ServiceAccount in the cluster" }),
  apiCredential: setting({ env: 'FURNISH_API_CREDENTIAL', file: 'clusters[].api.credential', parse: oneOf('google'), usedBy: WEBHOOKS, description: "`google`: the webhooks present their own Google service account's access token (from the metadata server) instead of api.token: GKE, where `furnish install` binds that account's e-mail" }),
  apiTokenEnv: setting({ file: 'clusters[].api.tokenEnv', parse: nonEmpty, usedBy: WEBHOOKS, description: 'the variable holding api.token' }),
  apiTimeoutMs: setting({ file: 'clusters[].api.timeoutMs', parse: number(1, true), default: 2000, usedBy: WEBHOOKS, description: "timeout of the webhooks' API calls" }),
  systemNamespaces: setting({ env: 'FURNISH_SYSTEM_NAMESPACES', file: 'clusters[].systemNamespaces', parse: list, default: [], usedBy: ['webhooks', 'reconcilers'], description: 'namespaces never furnished (comma list), in addition to kube-system, kube-public, kube-node-lease' }),
  autoOptOutPrincipals: setting({ env: 'FURNISH_AUTO_OPT_OUT_PRINCIPALS', file: 'clusters[].autoOptOutPrincipals', parse: list, default: [], usedBy: WEBHOOKS, description: 'principal patterns (CI pipelines) whose namespaces are opted out automatically' }),
  furnishNamespace: setting({ env: 'FURNISH_NAMESPACE', file: 'clusters[].furnishNamespace', parse: nonEmpty, default: DEFAULT_FURNISH_NAMESPACE, usedBy: WEBHOOKS, description: "Furnish's own namespace, exempt from its rules by name" }),
  guardReconciler: setting({ env: 'FURNISH_GUARD_RECONCILER', file: 'clusters[].guard.reconciler', parse: list, defaultText: `\`${reconcilerOf('<furnishNamespace>')}\``, usedBy: WEBHOOKS, description: "the reconciler's identity: may write into pending namespaces" }),
  guardSystemPrincipals: setting({ env: 'FURNISH_GUARD_SYSTEM_PRINCIPALS', file: 'clusters[].guard.systemPrincipals', parse: list, defaultText: "kube-controller-manager's controllers (`system:serviceaccount:kube-system:<controller>`: replicaset-controller, job-controller, persistent-volume-binder, ... `KUBE_CONTROLLERS` in shared/config/types.ts), `system:kube-controller-manager`, `system:kube-scheduler`, `group:system:nodes`", usedBy: WEBHOOKS, description: 'system controllers: never refused by guard-initializing (pending or failed namespaces), may change protected objects (not scale them)' }),
  trustedCreators: setting({ env: 'FURNISH_TRUSTED_CREATORS', file: 'clusters[].trustedCreators', parse: list, defaultText: `\`${reconcilerOf('<furnishNamespace>')}\``, usedBy: WEBHOOKS, description: 'principal patterns that may name a namespace\'s creator in `furnish.dev/requester` or `openshift.io/requester` (the LNamespace reconciler)' }),
  sarCacheTtlMs: setting({ env: 'FURNISH_SAR_CACHE_TTL_MS', file: 'clusters[].sarCacheTtlMs', parse: number(0, true), default: 10_000, usedBy: WEBHOOKS, description: 'how long an allowed SubjectAccessReview answer is remembered (denials never are)' }),
  organizations: setting({ env: 'FURNISH_ORGANIZATIONS', file: 'clusters[].organizations.enabled', parse: bool, default: ORG.enabled, usedBy: ['webhooks', 'reconcilers'], description: 'the organization rules apply (reconcile-organization: only for the condition `Enforced` of each Organization, and only when set)' }),
  organizationPrivileged: setting({ env: 'FURNISH_ORGANIZATION_PRIVILEGED', file: 'clusters[].organizations.privileged', parse: list, default: ORG.privileged, usedBy: WEBHOOKS, description: 'principal patterns that bypass every organization rule' }),
  organizationQuota: setting({ env: 'FURNISH_ORGANIZATION_NAMESPACE_QUOTA', file: 'clusters[].organizations.defaultNamespaceQuota', parse: number(0, true), default: ORG.defaultNamespaceQuota, usedBy: WEBHOOKS, description: 'quota of an organization without `spec.namespaceQuota`' }),
  organizationLabels: setting({ file: 'clusters[].organizations.allowedLabels', parse: list, default: ORG.allowedLabels, usedBy: WEBHOOKS, description: 'label keys unprivileged principals may change (`*` matches any run of characters)' }),
  organizationAnnotations: setting({ file: 'clusters[].organizations.allowedAnnotations', parse: list, default: ORG.allowedAnnotations, usedBy: WEBHOOKS, description: 'annotation keys unprivileged principals may change' }),
  organizationReservedNames: setting({ file: 'clusters[].organizations.reservedNames', parse: list, default: ORG.reservedNames, usedBy: WEBHOOKS, description: 'names unprivileged principals may not create' }),
  organizationReservationSeconds: setting({ file: 'clusters[].organizations.reservationSeconds', parse: number(1, true), default: ORG.reservationSeconds, usedBy: WEBHOOKS, description: 'how long an admitted create holds its quota slot before it must be counted' }),
  organizationPodDeadline: setting({ file: 'clusters[].organizations.podActiveDeadlineSeconds', parse: number(1, true), default: ORG.podActiveDeadlineSeconds, usedBy: WEBHOOKS, description: 'activeDeadlineSeconds of run-once Pods in organization namespaces that set none' }),

  // Reconcilers and relay.
  clusters: setting({ env: 'FURNISH_CLUSTERS', parse: clusterSources, default: {}, defaultText: 'the local kubeconfig', usedBy: ['reconcilers', 'billing'], description: 'per-cluster credentials, JSON: `{"prod-eu":{"google":{"server":"https://…","caPem":"…"}}}` (GKE: the function\'s own Google identity; caPem absent for the DNS endpoint), `{"prod-eu":{"secret":"projects/P/secrets/S/versions/latest"}}` (a kubeconfig in Secret Manager) or `{"kubeconfigPath":…, "context":…}`' }),
  pubsubProject: setting({ env: 'FURNISH_PUBSUB_PROJECT', parse: nonEmpty, default: (env: Env) => env.GOOGLE_CLOUD_PROJECT || env.PUBSUB_PROJECT_ID || 'furnish-local', defaultText: '`GOOGLE_CLOUD_PROJECT`, else `PUBSUB_PROJECT_ID`, else `furnish-local`', usedBy: ['relay', 'reconcilers'], description: 'Pub/Sub project' }),
  topicNamespaces: setting({ env: 'FURNISH_TOPIC_NAMESPACES', parse: topicName, default: 'furnish-namespaces', usedBy: ['relay', 'reconcilers'], description: 'topic of namespace messages' }),
  topicTemplates: setting({ env: 'FURNISH_TOPIC_TEMPLATES', parse: topicName, default: 'furnish-templates', usedBy: ['relay', 'reconcilers'], description: 'topic of template messages' }),
  topicLnamespaces: setting({ env: 'FURNISH_TOPIC_LNAMESPACES', parse: topicName, default: 'furnish-lnamespaces', usedBy: ['relay', 'reconcilers'], description: 'topic of LNamespace messages' }),
  pushAuth: setting({ env: 'FURNISH_PUSH_AUTH', parse: oneOf('oidc', 'off'), default: 'oidc', usedBy: ['reconcilers', 'billing'], description: '`oidc` verifies the push request\'s token; `off` only for the local stack and the emulator' }),
  pushAudience: setting({ env: 'FURNISH_PUSH_AUDIENCE', parse: nonEmpty, default: '', defaultText: '(required with `oidc`)', usedBy: ['reconcilers', 'billing'], description: "the push subscription's audience (Terraform sets it per function)" }),
  pushIssuer: setting({ env: 'FURNISH_PUSH_ISSUER', parse: nonEmpty, default: 'https://accounts.google.com', usedBy: ['reconcilers', 'billing'], description: "issuer of the push request's token" }),
  pushJwksUrl: setting({ env: 'FURNISH_PUSH_JWKS_URL', parse: nonEmpty, default: 'https://www.googleapis.com/oauth2/v3/certs', usedBy: ['reconcilers', 'billing'], description: "keys of the push request's token" }),
  pushServiceAccount: setting({ env: 'FURNISH_PUSH_SERVICE_ACCOUNT', parse: nonEmpty, usedBy: ['reconcilers', 'billing'], description: "the push subscription's service account: the token's verified e-mail must equal it" }),
  kubeQps: setting({ env: 'FURNISH_KUBE_QPS', parse: number(1), default: DEFAULT_MAX_PER_SECOND, usedBy: RECONCILERS, description: "ceiling of Kubernetes calls per second: below it the API server's answers set the pace (429 and Retry-After, latency); lower it to cap Furnish's share" }),
  kubeMaxInflight: setting({ env: 'FURNISH_KUBE_MAX_INFLIGHT', formerly: 'FURNISH_KUBE_BURST', parse: number(1), default: DEFAULT_MAX_INFLIGHT, usedBy: RECONCILERS, description: 'ceiling of Kubernetes calls in flight per client: the pacing grows towards it while answers are fast and halves on a 429' }),
  kubeTimeoutMs: setting({ env: 'FURNISH_KUBE_TIMEOUT_MS', parse: number(100), default: 10_000, usedBy: RECONCILERS, description: 'timeout of one Kubernetes call' }),
  deliveryTimeoutSeconds: setting({ env: 'FURNISH_DELIVERY_TIMEOUT_SECONDS', parse: number(1, true), default: 300, usedBy: RECONCILERS, description: "how long one delivery may run: the function's timeout, which is also its push subscription's ack deadline (Terraform sets all three from variable `reconciler.timeout`). A delivery sends no Kubernetes call in its last FURNISH_KUBE_TIMEOUT_MS plus 2 s and is then retried, so that it sends nothing beside its own redelivery" }),
  applyConcurrency: setting({ env: 'FURNISH_APPLY_CONCURRENCY', parse: number(1), default: 8, usedBy: RECONCILERS, description: 'objects written in parallel per namespace' }),
  readyDespiteFailures: setting({ env: 'FURNISH_READY_DESPITE_FAILURES', parse: bool, default: false, usedBy: RECONCILERS, description: '`true`: phase `ready` even when a template failed (the reason is still recorded)' }),
  statusIntervalMs: setting({ env: 'FURNISH_STATUS_INTERVAL_MS', parse: number(0), default: 1000, usedBy: RECONCILERS, description: 'least time between two status recounts of one template prompted by converging namespaces (more when a recount is slow: recounts take at most a fifth of the time), and the quiet after which the fan-out is over: the last recount then waits by what a recount costs alone' }),
  fanoutConcurrency: setting({ env: 'FURNISH_FANOUT_CONCURRENCY', parse: number(1), default: 64, usedBy: RECONCILERS, description: 'fan-out: messages published in parallel' }),
  fanoutRate: setting({ env: 'FURNISH_FANOUT_RATE', parse: number(1), default: 2000, usedBy: RECONCILERS, description: 'fan-out: messages per second' }),
  fanoutProgressEvery: setting({ env: 'FURNISH_FANOUT_PROGRESS_EVERY', parse: number(1), default: 2000, usedBy: RECONCILERS, description: 'fan-out: the template status reports progress every this many messages' }),
  listPageSize: setting({ env: 'FURNISH_LIST_PAGE_SIZE', parse: number(1), default: 500, usedBy: ['relay'], description: 'list page size of the relay\'s lists and billing snapshots (each page is let go before the next, so memory stays flat as namespaces grow)' }),
  fanoutPageSize: setting({ env: 'FURNISH_FANOUT_PAGE_SIZE', parse: number(1), default: 2000, usedBy: RECONCILERS, description: 'page size of reconcile-template\'s cluster-wide reads before a fan-out and at each status recount (namespaces, ApplySet parents, the template\'s objects; each item is cut to names and hashes as it arrives): fewer pages, each a round trip, before the first namespace is reached; a bigger page is a bigger passing heap (bounded by the page, not by the number of namespaces)' }),
  bus: setting({ env: 'FURNISH_BUS', parse: oneOf('memory', 'pubsub'), default: (env: Env) => (env.PUBSUB_EMULATOR_HOST || env.GOOGLE_CLOUD_PROJECT ? 'pubsub' : 'memory'), defaultText: '`pubsub` if a project or emulator is set, else `memory`', usedBy: RELAY, description: 'where the relay publishes' }),
  resyncSeconds: setting({ env: 'FURNISH_RESYNC_SECONDS', parse: number(0), default: 600, usedBy: RELAY, description: 'full resync period (0: off)' }),
  watchTimeoutSeconds: setting({ env: 'FURNISH_WATCH_TIMEOUT_SECONDS', parse: number(1), default: 300, usedBy: RELAY, description: 'server-side timeout of one watch' }),
  watchSilenceSeconds: setting({ env: 'FURNISH_WATCH_SILENCE_SECONDS', parse: number(0), default: 180, usedBy: RELAY, description: 'a watch that delivered nothing, not even a bookmark, for this long is presumed dead: ended and relisted (a drift watch: opened again from the last revision it saw); `/readyz` answers 503 meanwhile (0: off)' }),
  pendingRedriveSeconds: setting({ env: 'FURNISH_PENDING_REDRIVE_SECONDS', parse: number(0), default: 40, usedBy: RELAY, description: 'a namespace still `pending` this long after its last message is published again (on the namespaces topic, as every namespace message), checked every 5 s, so a lost message is re-driven within a minute while namespaces are furnished quickly (0: off); while they take longer than that (a burst), after twice the 90th percentile of the last 100 waits of the last ten minutes instead, at most five times this, so that a queue is not sent twice' }),
  driftResources: setting({ env: 'FURNISH_DRIFT_RESOURCES', parse: list, defaultText: '`configmaps,serviceaccounts,resourcequotas,limitranges,networkpolicies.networking.k8s.io/v1,rolebindings.rbac.authorization.k8s.io/v1,roles.rbac.authorization.k8s.io/v1`', usedBy: RELAY, description: 'kinds watched by label `furnish.dev/template` for drift (`plural` core, `plural.group/version`; empty: off); extend `infra/relay/rbac.yaml` with them' }),
  port: setting({ env: 'PORT', parse: number(0, true), default: 8080, usedBy: RELAY, description: "the relay's HTTP port (`/healthz`, `/readyz`, `/metrics`)" }),
  shutdownMs: setting({ env: 'FURNISH_SHUTDOWN_MS', parse: number(0), default: 10_000, usedBy: RELAY, description: 'grace for flushing pending publishes on SIGTERM' }),

  // Billing.
  billing: setting({ env: 'FURNISH_BILLING', parse: nonEmpty, defaultText: '`sqlite:.furnish/billing.sqlite`', usedBy: ['billing'], description: 'the sink of record-billing and `furnish billing report`: `sqlite:<file>` or `bigquery:<project>.<dataset>.<table>`' }),
  topicBilling: setting({ env: 'FURNISH_TOPIC_BILLING', parse: text, default: 'furnish-billing', usedBy: RELAY, description: 'billing topic; empty turns billing off in the relay' }),
  billingSnapshotSeconds: setting({ env: 'FURNISH_BILLING_SNAPSHOT_SECONDS', parse: number(0), default: 86_400, usedBy: RELAY, description: 'period of billing snapshots after the one at start (0: only at start)' }),
  bigqueryEndpoint: setting({ env: 'FURNISH_BIGQUERY_ENDPOINT', parse: nonEmpty, usedBy: ['billing'], description: "a BigQuery-compatible endpoint (an emulator) instead of Google's; no Google credentials are used then" }),

  // LNamespaces.
  lnsUserRole: setting({ env: 'FURNISH_LNS_USER_ROLE', parse: clusterRole, default: DEFAULT_LNS_SETTINGS.userRole, usedBy: ['lnamespace'], description: 'ClusterRole bound to the users of an LNamespace' }),
  lnsSudoRole: setting({ env: 'FURNISH_LNS_SUDO_ROLE', parse: clusterRole, default: DEFAULT_LNS_SETTINGS.sudoRole, usedBy: ['lnamespace'], description: 'ClusterRole bound to the sudoers of an LNamespace' }),

  // The local stack (`npm start`).
  startPort: setting({ env: 'FURNISH_START_PORT', parse: number(0, true), default: 8080, usedBy: LOCAL, description: "port of the local reconcilers' HTTP server" }),
  webhookPort: setting({ env: 'FURNISH_WEBHOOK_PORT', parse: number(0, true), default: 8443, usedBy: LOCAL, description: 'port of the local webhooks (HTTPS)' }),
  relayPort: setting({ env: 'FURNISH_RELAY_PORT', parse: number(0, true), default: 8081, usedBy: LOCAL, description: "port of the local relay's endpoints" }),
  logLevel: setting({ env: 'FURNISH_LOG_LEVEL', parse: oneOf('DEBUG', 'INFO', 'WARNING', 'ERROR'), default: 'INFO', usedBy: ['webhooks', 'reconcilers'], description: "least severity a webhook or reconciler function logs (`INFO` includes one line per admission decision; the test suites set `WARNING`)" }),
  stateDir: setting({ env: 'FURNISH_STATE_DIR', parse: nonEmpty, default: '.furnish', usedBy: LOCAL, description: 'where the embedded cluster keeps its state (relative to the repository)' }),
} as const;

export type SettingName = keyof typeof SETTINGS;
type ValueOf<S> = S extends { parse: Parser<infer T> } ? T : never;

function defaultOf<T>(s: Setting<T>, env: Env): T | undefined {
  return typeof s.default === 'function' ? (s.default as (env: Env) => T)(env) : s.default;
}

/** The setting's value from the environment, its default when unset; a ConfigError naming the variable when invalid. */
export function readSetting<K extends SettingName>(env: Env, name: K): ValueOf<(typeof SETTINGS)[K]> {
  const s = SETTINGS[name] as Setting<ValueOf<(typeof SETTINGS)[K]>>;
  const raw = s.env === undefined ? undefined : env[s.env];
  if (s.formerly !== undefined && env[s.formerly] !== undefined && raw === undefined) throw new ConfigError(s.formerly, `was renamed ${s.env}: set that instead`);
  if (raw === undefined) return defaultOf(s, env) as ValueOf<(typeof SETTINGS)[K]>;
  let value: ValueOf<(typeof SETTINGS)[K]> | undefined;
  try {
    value = s.parse(raw);
  } catch (e) {
    if (e instanceof Invalid) throw new ConfigError(s.env!, e.message);
    throw e;
  }
  return (value === undefined ? defaultOf(s, env) : value) as ValueOf<(typeof SETTINGS)[K]>;
}

/** Parses one variable's text with a setting's parser; `where` names it in the error (a variable and its file path). */
export function parseSetting<K extends SettingName>(name: K, raw: string, where: string): ValueOf<(typeof SETTINGS)[K]> | undefined {
  try {
    return (SETTINGS[name] as Setting<ValueOf<(typeof SETTINGS)[K]>>).parse(raw);
  } catch (e) {
    if (e instanceof Invalid) throw new ConfigError(where, e.message);
    throw e;
  }
}

/** A problem only this combination of settings has (e.g. OIDC without an audience). */
export function settingProblem(name: SettingName, problem: string): ConfigError {
  const s = SETTINGS[name] as Setting;
  return new ConfigError(s.env ?? s.file ?? name, problem);
}

function defaultCell(s: Setting): string {
  if (s.defaultText !== undefined) return s.defaultText;
  if (s.default === undefined || typeof s.default === 'function') return '';
  if (Array.isArray(s.default)) return s.default.length === 0 ? '' : `\`${s.default.join(',')}\``;
  if (typeof s.default === 'object' && s.default !== null) return Object.keys(s.default).length === 0 ? '' : `\`${JSON.stringify(s.default)}\``;
  return `\`${String(s.default)}\``;
}

/** The settings reference's table: one Markdown row per setting, in the table's order. */
export function settingsMarkdown(): string {
  const rows = Object.values(SETTINGS).map((raw) => {
    const s = raw as Setting;
    const cells = [s.env ? `\`${s.env}\`` : '', s.file ? `\`${s.file}\`` : '', defaultCell(s), s.usedBy.join(', '), s.description.replace(/\|/g, '\\|')];
    return `| ${cells.join(' | ')} |`;
  });
  return ['| variable | file (`FURNISH_CONFIG_FILE`) | default | used by | |', '|---|---|---|---|---|', ...rows].join('\n');
}

export const SETTINGS_DOC_BEGIN = '<!-- settings:begin: generated from shared/config/settings.ts by `npm run settings:docs`; do not edit -->';
export const SETTINGS_DOC_END = '<!-- settings:end -->';

/** A document (docs/reference/settings.md) with its table regenerated from SETTINGS; throws when the markers are missing. */
export function withSettingsTable(doc: string): string {
  const begin = doc.indexOf(SETTINGS_DOC_BEGIN);
  const end = doc.indexOf(SETTINGS_DOC_END);
  if (begin < 0 || end < begin) throw new Error(`the settings table needs the markers ${SETTINGS_DOC_BEGIN} and ${SETTINGS_DOC_END}`);
  return `${doc.slice(0, begin)}${SETTINGS_DOC_BEGIN}\n${settingsMarkdown()}\n${doc.slice(end)}`;
}
