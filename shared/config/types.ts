// The webhook functions' configuration, typed. `load.ts` builds it from the environment and an
// optional file and validates it at start; nothing else reads process.env.
import type { OrganizationSettings } from '../org/settings.ts';

export const WEBHOOKS = ['mutate-namespace', 'validate-namespace', 'validate-template', 'guard-initializing', 'validate-organization', 'mutate-pod', 'mutate-lnamespace', 'protect-objects'] as const;
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
  /**
   * Furnish's own namespace. Exempt by its name inside the handlers (never by a namespaceSelector:
   * a Namespace's own labels, which its requester writes, feed that selector).
   */
  furnishNamespace: string;
  /** Organization policy (shared/org/settings.ts); absent: organizations are off. */
  organizations?: Partial<OrganizationSettings>;
  /**
   * Principals that create namespaces on someone's behalf (OpenShift's project-request controller,
   * Furnish's LNamespace reconciler): they may name the creator through annotation
   * furnish.dev/requester or openshift.io/requester.
   */
  trustedCreators: PrincipalPattern[];
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
  /** `google`: present the function's own Google access token (GKE) instead of `token`. */
  credential?: 'google';
  timeoutMs: number;
}

export interface ClusterConfig extends PolicySettings {
  /** Matches the `sub` claim of the cluster's webhook token, and the cluster segment of a path credential. */
  id: string;
  /** Bearer JWT verification (control planes whose admission configuration you can set). */
  jwt?: JwtSettings;
  /**
   * Path credentials (managed control planes: GKE, EKS, AKS): the webhook URL ends in
   * `/c/<id>/<credential>`. One or two valid at once, so a rotation never refuses a call.
   */
  pathCredentials: string[];
  api?: ApiSettings;
  /** How long SubjectAccessReview answers are remembered. */
  sarCacheTtlMs: number;
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

/**
 * kube-controller-manager's controllers (each with its own ServiceAccount, as
 * --use-service-account-credentials runs them), the scheduler and the nodes: they act on objects
 * already in a namespace (Pods of a ReplicaSet, a Job's Pods, PVC bindings, Events), so refusing
 * them in a guarded namespace freezes running workloads (a ready namespace turning `failed`) and
 * never keeps a tenant out. Only who can mint kube-system's tokens or a node's credentials is
 * them, and such a one owns the cluster anyway. Names, never `kube-system:*`: an add-on installed
 * in kube-system is not a system controller.
 */
export const KUBE_CONTROLLERS: readonly string[] = [
  'attachdetach-controller', 'cronjob-controller', 'daemon-set-controller', 'deployment-controller', 'disruption-controller',
  'endpoint-controller', 'endpointslice-controller', 'endpointslicemirroring-controller', 'ephemeral-volume-controller',
  'expand-controller', 'generic-garbage-collector', 'horizontal-pod-autoscaler', 'job-controller', 'namespace-controller',
  'node-controller', 'persistent-volume-binder', 'pod-garbage-collector', 'pvc-protection-controller', 'replicaset-controller',
  'replication-controller', 'resource-claim-controller', 'resourcequota-controller', 'root-ca-cert-publisher',
  'service-account-controller', 'service-controller', 'statefulset-controller', 'ttl-after-finished-controller',
  'legacy-service-account-token-cleaner',
];

export const DEFAULT_SYSTEM_PRINCIPALS: readonly string[] = [
  ...KUBE_CONTROLLERS.map((c) => `system:serviceaccount:kube-system:${c}`),
  'system:kube-controller-manager', // the same controllers without per-controller credentials
  'system:kube-scheduler', // binds Pods, records Events
  'group:system:nodes', // kubelets: mirror Pods, Pod deletion, Events (NodeRestriction limits each to its own)
];

export const DEFAULT_FURNISH_NAMESPACE = 'furnish-system';

export function defaultPolicySettings(furnishNamespace = DEFAULT_FURNISH_NAMESPACE): PolicySettings {
  return {
    systemNamespaces: [],
    autoOptOutPrincipals: [],
    guard: { reconciler: [`system:serviceaccount:${furnishNamespace}:furnish-reconciler`], systemPrincipals: [...DEFAULT_SYSTEM_PRINCIPALS] },
    furnishNamespace,
    // Furnish's own reconcilers: the LNamespace reconciler creates namespaces for their requesters.
    trustedCreators: [`system:serviceaccount:${furnishNamespace}:furnish-reconciler`],
  };
}

// Where the reconcilers and relay find a cluster, and how push requests are authenticated:
// declared here so that kube/ and auth/ read them without importing reconcile/.
export interface ClusterCredentialSource {
  /** Path of a kubeconfig file. */
  kubeconfigPath?: string;
  /** Context inside it. */
  context?: string;
  /** Secret Manager version holding a kubeconfig: projects/P/secrets/S/versions/latest. */
  secret?: string;
  /**
   * GKE: the API server (and the cluster CA, absent for the DNS endpoint, whose certificate is
   * publicly trusted), reached with the function's own Google service account; no Kubernetes credential.
   */
  google?: { server: string; caPem?: string };
}

export interface PushAuthSettings {
  /** `oidc` verifies the push request's bearer token; `off` only for the local stack and emulator. */
  mode: 'oidc' | 'off';
  issuer: string;
  audience: string;
  jwksUrl: string;
  /** The push subscription's service account; when set, the token's verified email must equal it. */
  serviceAccountEmail?: string;
}
