// The state of one simulated cluster: the registry of served kinds, the store, the RBAC
// authorizer, and the options that change behaviour. Operations (operations.ts), lifecycle
// controllers (controllers.ts), watches and the HTTP layer all work on a Sim.
import { randomUUID } from 'node:crypto';
import type { KubeObject, StringMap } from '../../../shared/kube/types.ts';
import type { AdmissionEnvironment, AdmissionReview } from './admission.ts';
import type { SimUser } from './authn.ts';
import { defaultRbacObjects, RbacAuthorizer, type RbacSource } from './rbac.ts';
import { builtinTypes, ResourceRegistry, typeKey, type ResourceType } from './resources.ts';
import { recordUpdate, setManagedFields } from './managed-fields.ts';
import { Store } from './store.ts';
import { ServiceAccountTokens } from './tokens.ts';
import { WebhookAuthResolver } from './webhook-auth.ts';

export interface SimOptions {
  /** Set `kubernetes.io/metadata.name` on namespaces, as every cluster since 1.22 does. */
  metadataNameLabel: boolean;
  /** How long a deleted namespace stays Terminating before its contents and itself are removed. */
  namespaceDeletionDelayMs: number;
  /** Create the `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap in new namespaces. */
  namespaceDefaultObjects: boolean;
  /**
   * Run the resource quota controller: quotas get status.hard and status.used in a status write
   * of their own (manager kube-controller-manager), kept up to date as objects come and go.
   */
  resourceQuotaController: boolean;
  /** Interval of BOOKMARK events on watches that allow them. */
  bookmarkIntervalMs: number;
  /** Server-side timeout of a watch without `timeoutSeconds`. */
  defaultWatchTimeoutSeconds: number;
  /** The version reported by /version. */
  gitVersion: string;
  /** How long a list from the "watch cache" waits for a resourceVersion not reached yet before its 504 (kube-apiserver: 3 s). */
  listResourceVersionWaitMs: number;
  /**
   * Serve and enforce ValidatingAdmissionPolicies and evaluate webhook matchConditions, as 1.30+;
   * false acts like 1.26 (neither served; matchConditions dropped from webhook configurations).
   * Default: true unless the environment has KUBE_SIM_ADMISSION_POLICIES=0.
   */
  admissionPolicies: boolean;
  /**
   * How stale the policies and bindings in force may be: kube-apiserver compiles them from its
   * informers again at most once a second (policy_source.go, policyRefreshIntervalDefault), so a
   * policy written or deleted holds, or still holds, for up to that long.
   */
  policyRefreshIntervalMs: number;
}

export const DEFAULT_OPTIONS: SimOptions = {
  metadataNameLabel: true,
  namespaceDeletionDelayMs: 0,
  namespaceDefaultObjects: true,
  resourceQuotaController: true,
  bookmarkIntervalMs: 5000,
  defaultWatchTimeoutSeconds: 1800,
  gitVersion: 'v1.32.0-kube-sim',
  listResourceVersionWaitMs: 3000,
  admissionPolicies: process.env.KUBE_SIM_ADMISSION_POLICIES !== '0',
  policyRefreshIntervalMs: 1000,
};

/** Namespaces every cluster starts with. */
export const SYSTEM_NAMESPACES = ['default', 'kube-node-lease', 'kube-public', 'kube-system'];
/** The NamespaceLifecycle plugin refuses to delete these. */
export const IMMORTAL_NAMESPACES = new Set(['default', 'kube-public', 'kube-system']);

export interface AdmissionRecord {
  webhook: string;
  review: AdmissionReview;
}

export class Sim {
  readonly registry: ResourceRegistry;
  readonly store: Store;
  readonly rbac: RbacAuthorizer;
  readonly options: SimOptions;
  readonly users: SimUser[];
  readonly caPem: string;
  /** Every AdmissionReview sent to a webhook, in order (tests read and clear it). */
  readonly admissionLog: AdmissionRecord[] = [];
  /** The credentials sent to webhooks (the admission kubeconfig); anonymous calls when none was given. */
  readonly webhookAuth: WebhookAuthResolver;
  /** Tokens issued by the TokenRequest API (tests move `serviceAccountTokens.now` to expire them). */
  readonly serviceAccountTokens = new ServiceAccountTokens((namespace, name) => this.store.get(typeKey('', 'serviceaccounts'), namespace, name));

  constructor(options: SimOptions, users: SimUser[], caPem: string, historyLimit?: number, webhookAuth = new WebhookAuthResolver()) {
    this.options = options;
    this.registry = new ResourceRegistry(builtinTypes({ admissionPolicies: options.admissionPolicies }));
    this.webhookAuth = webhookAuth;
    this.users = users;
    this.caPem = caPem;
    this.store = new Store(historyLimit !== undefined ? { historyLimit } : {});
    const source: RbacSource = { list: (kind, namespace) => this.store.list(this.keyOfKind(kind), namespace) };
    this.rbac = new RbacAuthorizer(source);
  }

  keyOf(type: ResourceType): string {
    return typeKey(type.group, type.plural);
  }

  private keyOfKind(kind: 'Role' | 'RoleBinding' | 'ClusterRole' | 'ClusterRoleBinding'): string {
    return typeKey('rbac.authorization.k8s.io', `${kind.toLowerCase()}s`);
  }

  typeOfKind(apiVersion: string, kind: string): ResourceType | undefined {
    return this.registry.byKind(apiVersion, kind);
  }

  namespace(name: string): KubeObject | undefined {
    return this.store.get(typeKey('', 'namespaces'), undefined, name);
  }

  namespaceLabels(name: string): StringMap | undefined {
    return this.namespace(name)?.metadata.labels;
  }

  /** What admission needs from the cluster, plus a sink for this request's warnings. */
  admissionEnvironment(warnings: string[]): AdmissionEnvironment {
    return {
      configurations: (kind) => this.store.list(typeKey('admissionregistration.k8s.io', `${kind.toLowerCase()}s`)),
      namespaceLabels: (name) => this.namespaceLabels(name),
      warn: (message) => warnings.push(message),
      record: (webhook, review) => this.admissionLog.push({ webhook, review: structuredClone(review) }),
      webhookAuth: this.webhookAuth,
      namespace: (name) => this.namespace(name),
      ...(this.options.admissionPolicies ? { policies: this.admissionPolicies() } : {}),
    };
  }

  /** The policies and bindings in force, taken from the store at most `policyRefreshIntervalMs` ago. */
  private policiesInForce?: { at: number; policies: KubeObject[]; bindings: KubeObject[] };

  /** The policies and bindings in force, with kube-sim's RBAC answering their `authorizer` (as its SubjectAccessReviews). */
  private admissionPolicies(): NonNullable<AdmissionEnvironment['policies']> {
    const list = (plural: string): KubeObject[] => this.store.list(typeKey('admissionregistration.k8s.io', plural));
    const now = Date.now();
    if (!this.policiesInForce || now - this.policiesInForce.at >= this.options.policyRefreshIntervalMs) {
      this.policiesInForce = { at: now, policies: list('validatingadmissionpolicies'), bindings: list('validatingadmissionpolicybindings') };
    }
    return {
      policies: this.policiesInForce.policies,
      bindings: this.policiesInForce.bindings,
      authorize: (user, a) => this.rbac.authorize({
        user: { username: user.username ?? '', groups: user.groups ?? [], ...(user.uid ? { uid: user.uid } : {}), ...(user.extra ? { extra: user.extra } : {}) },
        verb: a.verb, resourceRequest: a.path === undefined, apiGroup: a.group, resource: a.resource,
        ...(a.subresource ? { subresource: a.subresource } : {}), ...(a.namespace ? { namespace: a.namespace } : {}),
        ...(a.name ? { name: a.name } : {}), ...(a.path !== undefined ? { path: a.path } : {}),
      }),
    };
  }

  /** The objects of a fresh cluster, written straight to storage like kube-apiserver's bootstrap. */
  bootstrap(): void {
    for (const name of SYSTEM_NAMESPACES) {
      const labels = this.options.metadataNameLabel ? { 'kubernetes.io/metadata.name': name } : undefined;
      this.seed(this.tracked({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(labels ? { labels } : {}) }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } }));
    }
    for (const obj of defaultRbacObjects()) this.seed(this.tracked(obj));
  }

  /** As kube-apiserver's bootstrap writes them (through its own client): managed by `kube-apiserver`, so later updates are tracked too. */
  private tracked(obj: KubeObject): KubeObject {
    const type = this.typeOfKind(obj.apiVersion, obj.kind);
    if (!type) return obj;
    const out = structuredClone(obj);
    setManagedFields(out, recordUpdate(undefined, out, new Map(), { type, manager: 'kube-apiserver' }));
    return out;
  }

  /**
   * Stores an object directly, with no admission, authorization or validation (test set-up).
   * Fills uid and creationTimestamp when missing.
   */
  seed(obj: KubeObject): KubeObject {
    const type = this.typeOfKind(obj.apiVersion, obj.kind);
    if (!type) throw new Error(`kube-sim serves no ${obj.apiVersion} ${obj.kind}`);
    const stored = structuredClone(obj);
    stored.metadata.uid ??= randomUUID();
    stored.metadata.creationTimestamp ??= new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    if (type.generation) stored.metadata.generation ??= 1;
    const key = this.keyOf(type);
    return this.store.get(key, stored.metadata.namespace, stored.metadata.name!) ? this.store.update(key, stored) : this.store.create(key, stored);
  }
}
