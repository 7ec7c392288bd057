// What a webhook handler is given besides the request: the cluster's policy settings and the two
// look-ups it may make (RBAC answers, the NamespaceTemplate list), each behind an interface.
import type { AdmissionRequest, AdmissionResponse, GroupVersionResource } from '../admission/types.ts';
import type { KubeObject } from '../kube/types.ts';
import type { PolicySettings } from '../config/types.ts';
import type { Authorizer } from '../kube/sar.ts';
import type { NamespaceTemplate } from '../render/types.ts';
import type { InitializerLookups } from './initializer-lookups.ts';
import type { OrganizationApi } from '../org/source.ts';

export interface TemplateSource {
  /** Every NamespaceTemplate in the cluster, read now. Rejects when they cannot be read. */
  list(): Promise<NamespaceTemplate[]>;
  /** The list without waiting, only where it is static (offline, tests); a live cluster is read fresh. */
  current?(): NamespaceTemplate[] | undefined;
  /** One template, read now; undefined when it does not exist. Absent: found in list(). */
  get?(name: string): Promise<NamespaceTemplate | undefined>;
}

/** One template by name: a single read where the source can, else from the list. */
export async function templateNamed(source: TemplateSource, name: string): Promise<NamespaceTemplate | undefined> {
  if (source.get) return source.get(name);
  return (await source.list()).find((t) => t.metadata?.name === name);
}

/**
 * Namespaces read fresh: whether one exists (mutate-lnamespace: an LNamespace may not take one
 * over unasked), and why one could not be furnished (its annotation furnish.dev/failure, for the
 * guard's denial).
 */
export interface NamespaceSource {
  /** Rejects when it cannot be told. */
  exists(name: string): Promise<boolean>;
  /** Its phase label and the reason reconcile-namespace recorded on one it could not furnish; {} when it cannot be read. */
  state(namespace: string): Promise<NamespaceState>;
}

export interface NamespaceState {
  phase?: string;
  failure?: string;
}

/** Namespaced objects read fresh: protect-objects reads the object a `/scale` request changes (a Scale has no labels). */
export interface ObjectSource {
  /** The object as stored; undefined when it does not exist. Rejects when it cannot be read. */
  get(resource: GroupVersionResource, namespace: string, name: string): Promise<KubeObject | undefined>;
}

export interface WebhookDeps {
  settings: PolicySettings;
  authorizer: Authorizer;
  templates: TemplateSource;
  /** NamespaceInitializationConfigurations and stored namespaces; absent: none configured, nothing stored. */
  initializers?: InitializerLookups;
  /** Organizations and namespaces, read fresh (organization rules, quota, run-once Pods). */
  organizations?: OrganizationApi;
  /** Absent: denials say "still being furnished" without looking the reason up; LNamespaces cannot be created. */
  namespaces?: NamespaceSource;
  /** Absent (no cluster): a scale of a template's object cannot be judged and is refused. */
  objects?: ObjectSource;
}

/**
 * A webhook: a plain typed function from a decoded request to a response. Handlers that need no
 * look-up answer synchronously (no promise on the hot path).
 */
export type AdmissionHandler = (request: AdmissionRequest, deps: WebhookDeps) => AdmissionResponse | Promise<AdmissionResponse>;

export function staticTemplates(templates: NamespaceTemplate[]): TemplateSource {
  return { list: async () => templates, current: () => templates };
}
