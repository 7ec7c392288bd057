// `furnish admit`: the AdmissionReview response a webhook function would give, computed in
// process. RBAC answers come from the Role/ClusterRole/bindings and NamespaceTemplates among
// `cluster.objects` (a directory of YAML in the CLI); with no cluster, every permission check
// is refused and there are no templates.
import { decodeAdmissionReview } from '../admission/decode.ts';
import { toReview } from '../admission/response.ts';
import type { AdmissionReview } from '../admission/types.ts';
import { policySettingsFrom } from '../config/load.ts';
import type { PolicySettings, WebhookName } from '../config/types.ts';
import type { KubeObject } from '../kube/types.ts';
import type { Authorizer } from '../kube/sar.ts';
import { createRbacAuthorizer } from '../rbac/authorizer.ts';
import type { NamespaceTemplate } from '../render/types.ts';
import { API_VERSION } from '../render/types.ts';
import { staticTemplates } from './deps.ts';
import { namespaceState } from './templates.ts';
import { staticInitializerLookups } from './initializer-lookups.ts';
import { staticObjects } from './object-lookups.ts';
import { memoryOrganizations } from '../org/source.ts';
import type { Organization } from '../org/types.ts';
import { HANDLERS } from './handlers/index.ts';

export interface AdmitOfflineOptions {
  webhook: WebhookName;
  /** The AdmissionReview, as parsed JSON. */
  review: unknown;
  cluster?: { objects: KubeObject[] };
  /** Policy settings of the cluster; whatever is not given (down to each guard list) keeps Furnish's default. */
  config?: PolicyOverrides;
  /** The cluster's Organizations: organization rules on (unless the config turns them off), read from these. */
  organizations?: Organization[];
}

export type PolicyOverrides = Partial<Omit<PolicySettings, 'guard'>> & { guard?: Partial<PolicySettings['guard']> };

/**
 * Complete settings from overrides, read and defaulted by the functions' own reader
 * (config/load.ts): absent or undefined keys keep the default, a wrong value is a ConfigError.
 */
export function policySettings(config: PolicyOverrides = {}): PolicySettings {
  return policySettingsFrom(config as Record<string, unknown>, 'admitOffline config');
}

const noCluster: Authorizer = {
  check: async () => ({ allowed: false, reason: 'no cluster objects given (furnish admit --cluster <dir>)' }),
};

export function templatesIn(objects: readonly KubeObject[]): NamespaceTemplate[] {
  return objects.filter((o): o is NamespaceTemplate => o.kind === 'NamespaceTemplate' && o.apiVersion === API_VERSION);
}

/** Throws AdmissionError for a malformed review (the CLI prints its message). */
export async function admitOffline(options: AdmitOfflineOptions): Promise<AdmissionReview> {
  const review = decodeAdmissionReview(options.review);
  const objects = options.cluster?.objects ?? [];
  const settings = policySettings(options.config);
  const orgs = options.organizations;
  const deps = {
    settings: orgs ? { ...settings, organizations: { enabled: true, ...settings.organizations } } : settings,
    authorizer: options.cluster ? createRbacAuthorizer(objects) : noCluster,
    templates: staticTemplates(templatesIn(objects)),
    initializers: staticInitializerLookups(objects),
    objects: staticObjects(objects),
    organizations: memoryOrganizations(orgs ?? [], objects.filter((o) => o.kind === 'Namespace')),
    namespaces: {
      exists: async (name: string) => objects.some((o) => o.kind === 'Namespace' && o.metadata.name === name),
      state: async (name: string) => {
        const ns = objects.find((o) => o.kind === 'Namespace' && o.metadata.name === name);
        return ns ? namespaceState(ns) : {};
      },
    },
  };
  const response = await HANDLERS[options.webhook](review.request, deps);
  response.uid = review.request.uid;
  return toReview(response);
}
