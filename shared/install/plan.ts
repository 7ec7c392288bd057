// The decisions of `furnish install` / `furnish uninstall`, pure: in which order objects are
// written and removed, which failure policy each webhook registration carries in which phase, and
// what image reference the relay may run. The I/O is in install.ts.
import type { KubeObject } from '../kube/types.ts';
import { isWebhookConfiguration } from './manifests.ts';

export type FailurePolicy = 'Ignore' | 'Fail';

interface Webhook {
  name: string;
  failurePolicy?: FailurePolicy;
}

const webhooksOf = (config: KubeObject): Webhook[] => ((config as { webhooks?: Webhook[] }).webhooks ?? []);

/** The function a webhook calls, as probes.ts names it: its name without `.furnish.dev`. */
export const functionOf = (webhookName: string): string => webhookName.replace(/\.furnish\.dev$/, '');

/** The configuration with each webhook's failurePolicy set to `policy`, or to what `policy` says of that webhook. */
export function withFailurePolicy(config: KubeObject, policy: FailurePolicy | ((webhook: Webhook) => FailurePolicy)): KubeObject {
  const of = typeof policy === 'function' ? policy : () => policy;
  return { ...config, webhooks: webhooksOf(config).map((w) => ({ ...w, failurePolicy: of(w) })) } as KubeObject;
}

/**
 * The second phase, per webhook: its manifest's failurePolicy when a probe saw its function
 * answer, otherwise Ignore, since failing closed on a function nobody saw answer is how a cluster
 * gets locked out (mutate-pod's manifest says Ignore anyway; protect-scale has no probe, while
 * protect-objects and protect-applyset of the same configuration do). Returns the configurations
 * with a webhook that now fails closed; the others stay as the first phase registered them.
 */
export function failClosedConfigurations(configs: readonly KubeObject[], probed: (webhook: string) => boolean = () => true): KubeObject[] {
  return configs
    .map((c) => withFailurePolicy(c, (w) => (probed(functionOf(w.name)) ? (w.failurePolicy ?? 'Fail') : 'Ignore')))
    .filter((c) => webhooksOf(c).some((w) => w.failurePolicy === 'Fail'));
}

/** The failurePolicy of every webhook of these configurations, by webhook name. */
export function failurePolicies(configs: readonly KubeObject[]): Record<string, FailurePolicy> {
  return Object.fromEntries(configs.flatMap((c) => webhooksOf(c).map((w) => [w.name, w.failurePolicy ?? 'Fail'])));
}

/**
 * Write order: the namespace first (before any webhook, so nobody claims it), CRDs (templates and
 * Organizations can follow), identities and their roles, then workloads. Registrations are not in
 * this list: they are written by the phases of the install.
 */
const INSTALL_RANK: Record<string, number> = {
  Namespace: 0,
  CustomResourceDefinition: 1,
  ServiceAccount: 2,
  ClusterRole: 3,
  Role: 3,
  ClusterRoleBinding: 4,
  RoleBinding: 4,
};
const WORKLOAD_RANK = 5;

export function installOrder(objects: readonly KubeObject[]): KubeObject[] {
  const rank = (o: KubeObject) => INSTALL_RANK[o.kind] ?? WORKLOAD_RANK;
  return objects.filter((o) => !isWebhookConfiguration(o)).map((o, i) => ({ o, i })).sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i).map(({ o }) => o);
}

/**
 * Removal order: every registration first (a cluster must never keep calling functions that are
 * going away), then the rest in reverse install order. CRDs are kept unless asked: deleting one
 * deletes every NamespaceTemplate, Organization or LNamespace of the cluster with it. Furnish's
 * namespace goes last.
 */
export function uninstallOrder(objects: readonly KubeObject[], options: { crds: boolean }): KubeObject[] {
  const registrations = objects.filter(isWebhookConfiguration);
  const rest = installOrder(objects).reverse().filter((o) => options.crds || o.kind !== 'CustomResourceDefinition');
  return [...registrations, ...rest];
}

/** `registry/path@sha256:<64 hex>`, optionally with a tag before the digest (ignored by the runtime). */
const BY_DIGEST = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:\/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)+(?::[\w][\w.-]{0,127})?@sha256:[0-9a-f]{64}$/;

/**
 * Why this image reference may not run the relay, or undefined: only a digest pins the bytes that
 * were built and tested; a tag can be moved under a running cluster.
 */
export function imageReferenceProblem(image: string): string | undefined {
  if (BY_DIGEST.test(image)) return undefined;
  if (/@sha256:/.test(image)) return `${JSON.stringify(image)} is not a valid image reference by digest (expected REGISTRY/PATH@sha256:<64 lowercase hex digits>)`;
  return `${JSON.stringify(image)} names the image by tag; give it by digest (REGISTRY/PATH@sha256:...) so every cluster runs exactly the image that was tested (docker buildx imagetools inspect, or crane digest, prints it)`;
}
