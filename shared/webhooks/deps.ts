// What a webhook handler is given besides the request: the cluster's policy settings and the two
// look-ups it may make (RBAC answers, the NamespaceTemplate list), each behind an interface.
import type { AdmissionRequest, AdmissionResponse } from '../admission/types.ts';
import type { PolicySettings } from '../config/types.ts';
import type { Authorizer } from '../kube/sar.ts';
import type { NamespaceTemplate } from '../render/types.ts';

export interface TemplateSource {
  /** Every NamespaceTemplate in the cluster. Rejects when they cannot be read. */
  list(): Promise<NamespaceTemplate[]>;
  /** The list without waiting when it is at hand (fresh in the cache), else undefined. */
  current?(): NamespaceTemplate[] | undefined;
}

/** Why a namespace could not be furnished (its annotation furnish.dev/failure), for the guard's denial. */
export interface NamespaceFailures {
  failure(namespace: string): Promise<string | undefined>;
}

export interface WebhookDeps {
  settings: PolicySettings;
  authorizer: Authorizer;
  templates: TemplateSource;
  /** Absent: denials say "still being furnished" without looking the reason up. */
  namespaces?: NamespaceFailures;
}

/**
 * A webhook: a plain typed function from a decoded request to a response. Handlers that need no
 * look-up answer synchronously (no promise on the hot path).
 */
export type AdmissionHandler = (request: AdmissionRequest, deps: WebhookDeps) => AdmissionResponse | Promise<AdmissionResponse>;

export function staticTemplates(templates: NamespaceTemplate[]): TemplateSource {
  return { list: async () => templates, current: () => templates };
}
