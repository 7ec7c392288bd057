// The webhook functions' configuration, typed. `load.ts` builds it from the environment and an
// optional file and validates it at start; nothing else reads process.env.

export const WEBHOOKS = ['mutate-namespace', 'validate-namespace', 'validate-template', 'guard-initializing', 'mutate-lnamespace'] as const;
export type WebhookName = (typeof WEBHOOKS)[number];

export function isWebhookName(name: string): name is WebhookName {
  return (WEBHOOKS as readonly string[]).includes(name);
}

/**
 * A principal pattern: `alice` (a user name), `group:ci` (a group), either with a trailing `*`
 * (`system:serviceaccount:ci:*`).
 */
export type PrincipalPattern = string;

/** What the admission rules need to know about a cluster: pure data, no credentials. */
export interface PolicySettings {
  /** Namespaces always opted out, in addition to kube-system, kube-public and kube-node-lease. */
  systemNamespaces: string[];
  /** Namespaces created by these principals (CI pipelines) are opted out automatically. */
  autoOptOutPrincipals: PrincipalPattern[];
  guard: {
    /** The reconciler's identity: may write into pending namespaces. */
    reconciler: PrincipalPattern[];
    /** Controllers that write into every new namespace (default ServiceAccount, kube-root-ca.crt, deletion). */
    systemPrincipals: PrincipalPattern[];
  };
  /** Furnish's own namespace (excluded from every webhook by its namespaceSelector). */
  furnishNamespace: string;
}

export interface JwtSettings {
  /** HS256 shared secret (at least 32 bytes). */
  secret?: string;
  /** Inline public keys (JWKS). */
  jwks?: { keys: Record<string, unknown>[] };
  /** Where to fetch the public keys (JWKS). */
  jwksUrl?: string;
  /** Expected `iss`, when set. */
  issuer?: string;
}

export interface ApiSettings {
  /** API server URL for SubjectAccessReviews and NamespaceTemplate look-ups. */
  server: string;
  /** PEM of the CA the API server's certificate chains to. */
  caPem?: string;
  /** Bearer token of the webhook's ServiceAccount in that cluster. */
  token?: string;
  timeoutMs: number;
}

export interface ClusterConfig extends PolicySettings {
  /** Matches the `sub` claim of the cluster's webhook token. */
  id: string;
  jwt: JwtSettings;
  api?: ApiSettings;
  /** How long SubjectAccessReview answers are remembered. */
  sarCacheTtlMs: number;
  /** How long the NamespaceTemplate list is remembered. */
  templateCacheTtlMs: number;
}

export interface FurnishConfig {
  clusters: ClusterConfig[];
  /** Base URL the functions are served under; a webhook's audience is `${publicUrl}/${name}` unless `audiences` names it. */
  publicUrl?: string;
  /** This deployed function's own audience (its URL); set per function, so it names no webhook. */
  audience?: string;
  audiences: Partial<Record<WebhookName, string>>;
  maxBodyBytes: number;
}

export const DEFAULT_SYSTEM_PRINCIPALS: readonly string[] = [
  'system:serviceaccount:kube-system:service-account-controller', // creates the `default` ServiceAccount
  'system:serviceaccount:kube-system:root-ca-cert-publisher', // creates the `kube-root-ca.crt` ConfigMap
  'system:serviceaccount:kube-system:namespace-controller', // empties a namespace being deleted
  'system:serviceaccount:kube-system:generic-garbage-collector', // deletes dependents
  'system:kube-controller-manager', // the same controllers without per-controller credentials
];

export const DEFAULT_FURNISH_NAMESPACE = 'furnish-system';

export function defaultPolicySettings(furnishNamespace = DEFAULT_FURNISH_NAMESPACE): PolicySettings {
  return {
    systemNamespaces: [],
    autoOptOutPrincipals: [],
    guard: { reconciler: [`system:serviceaccount:${furnishNamespace}:furnish-reconciler`], systemPrincipals: [...DEFAULT_SYSTEM_PRINCIPALS] },
    furnishNamespace,
  };
}
