// `furnish admit`: the AdmissionReview response a webhook function would give, computed in
// process. RBAC answers come from the Role/ClusterRole/bindings and NamespaceTemplates among
// `cluster.objects` (a directory of YAML in the CLI); with no cluster, every permission check
// is refused and there are no templates.
import { decodeAdmissionReview } from '../admission/decode.ts';
import { toReview } from '../admission/response.ts';
import type { AdmissionReview } from '../admission/types.ts';
import { defaultPolicySettings, isWebhookName, WEBHOOKS } from '../config/types.ts';
import type { PolicySettings } from '../config/types.ts';
import type { KubeObject } from '../kube/types.ts';
import type { Authorizer } from '../kube/sar.ts';
import { createRbacAuthorizer } from '../rbac/authorizer.ts';
import type { NamespaceTemplate } from '../render/types.ts';
import { API_VERSION } from '../render/types.ts';
import { staticTemplates } from './deps.ts';
import { HANDLERS } from './handlers/index.ts';

export interface AdmitOfflineOptions {
  webhook: string;
  /** The AdmissionReview, as parsed JSON. */
  review: unknown;
  cluster?: { objects: KubeObject[] };
  /** Policy settings of the cluster (default: Furnish's defaults). */
  config?: Partial<PolicySettings>;
}

const noCluster: Authorizer = {
  check: async () => ({ allowed: false, reason: 'no cluster objects given (furnish admit --cluster <dir>)' }),
};

export function templatesIn(objects: readonly KubeObject[]): NamespaceTemplate[] {
  return objects.filter((o): o is NamespaceTemplate => o.kind === 'NamespaceTemplate' && o.apiVersion === API_VERSION);
}

/** Throws AdmissionError for a malformed review (the CLI prints its message), Error for an unknown webhook. */
export async function admitOffline(options: AdmitOfflineOptions): Promise<AdmissionReview> {
  if (!isWebhookName(options.webhook)) throw new Error(`unknown webhook ${JSON.stringify(options.webhook)}: one of ${WEBHOOKS.join(', ')}`);
  const review = decodeAdmissionReview(options.review);
  const objects = options.cluster?.objects ?? [];
  const settings = { ...defaultPolicySettings(options.config?.furnishNamespace), ...options.config };
  const deps = {
    settings,
    authorizer: options.cluster ? createRbacAuthorizer(objects) : noCluster,
    templates: staticTemplates(templatesIn(objects)),
  };
  const response = await HANDLERS[options.webhook](review.request, deps);
  response.uid = review.request.uid;
  return toReview(response);
}
