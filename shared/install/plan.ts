// The decisions of `furnish install` / `furnish uninstall`, pure: in which order objects are
// written and removed, which failure policy each webhook registration carries in which phase, and
// what image reference the relay may run. The I/O is in install.ts.
import type { KubeObject } from '../kube/types.ts';
import { isWebhookConfiguration } from './manifests.ts';
import { livenessUrl } from './reachability.ts';

export type FailurePolicy = 'Ignore' | 'Fail';

interface Webhook {
  name: string;
  failurePolicy?: FailurePolicy;
  clientConfig?: { url?: string };
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
 * Organizations can follow), identities and their roles, then workloads, then the in-tree policies
 * and their bindings (removed in reverse: a binding never outlives its policy). Registrations are
 * not in this list: they are written by the phases of the install.
 */
const INSTALL_RANK: Record<string, number> = {
  Namespace: 0,
  CustomResourceDefinition: 1,
  ServiceAccount: 2,
  ClusterRole: 3,
  Role: 3,
  ClusterRoleBinding: 4,
  RoleBinding: 4,
  ValidatingAdmissionPolicy: 6,
  ValidatingAdmissionPolicyBinding: 7,
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

/**
 * The phases of an install, in order (install.ts runs each): Furnish's in-tree policies before any
 * registration is written, even the previous install's set to Ignore (which already carry the new
 * matchConditions: mutate-namespace fails open with them, and only the policies back it up); then
 * the check that the server enforces them, infra/, every registration (Ignore), the removal of
 * policies no longer rendered, and the probes. Letting the probed webhooks fail closed follows.
 */
export const INSTALL_PHASES = ['policies', 'previous-registrations', 'enforced', 'infra', 'registrations', 'stale-policies', 'probes'] as const;
export type InstallPhase = (typeof INSTALL_PHASES)[number];

export const isPolicyObject = (o: KubeObject): boolean => o.kind === 'ValidatingAdmissionPolicy' || o.kind === 'ValidatingAdmissionPolicyBinding';

/**
 * What goes again when the lockout check after an undo refuses: every registration written back,
 * and with them the policies written back (registrations first, bindings before policies). The
 * registrations rely on the policies (mutate-namespace fails open), and the policies without
 * mutate-namespace refuse tenants' namespace creates it would have marked: both or neither.
 */
export function admissionWrittenBack(restored: readonly KubeObject[]): KubeObject[] {
  return uninstallOrder(restored.filter((o) => isWebhookConfiguration(o) || isPolicyObject(o)), { crds: true });
}

/**
 * Whether the undo leaves the policies as the install wrote them: a registration it could not
 * take back may be mutate-namespace on Ignore with matchConditions, which only the policies back.
 */
export const keepsPolicies = (failed: readonly KubeObject[]): boolean => failed.some(isWebhookConfiguration);

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

/** One object an install writes, and what the cluster held under its name before the install wrote anything. */
export interface Prior {
  object: KubeObject;
  /** The live object read before the install; undefined: there was none. */
  before?: KubeObject;
}

/** How a failed install takes one object back: delete what it created, write back what was there, or keep an identity. */
export type Undo =
  | { action: 'delete'; object: KubeObject }
  /** Created and kept: the components' ServiceAccounts and their namespace (keptIdentity). */
  | { action: 'keep'; object: KubeObject }
  /** `downgraded`: webhooks that failed closed before and are written back with failurePolicy Ignore. */
  | { action: 'restore'; object: KubeObject; downgraded: string[] };

/** What the server sets rather than the writer: dropped from an object written back as it was. */
const SERVER_SET = ['uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields', 'selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds'] as const;

/** A live object as it can be written again (server-side apply): its content, without the server's own fields or status. */
export function restorable(live: KubeObject): KubeObject {
  const { status: _status, ...rest } = live as KubeObject & { status?: unknown };
  const metadata = Object.fromEntries(Object.entries(live.metadata).filter(([field]) => !(SERVER_SET as readonly string[]).includes(field)));
  return { ...rest, metadata } as KubeObject;
}

/** Whether a registration's URL is one whose function answered; a URL WHATWG cannot parse (the API server's Go parser is laxer) answers nothing. */
function answers(url: string, answering: ReadonlySet<string>): boolean {
  try {
    return answering.has(livenessUrl(url));
  } catch {
    return false;
  }
}

/**
 * A registration of an earlier install, written back: as it was, except that a webhook fails
 * closed again only if its function answers (`answering`: liveness URLs that answered from this
 * machine); a webhook restored to fail closed on a function that is gone would lock the cluster.
 */
function restoredRegistration(before: KubeObject, answering: ReadonlySet<string>): Undo {
  const downgraded: string[] = [];
  const object = withFailurePolicy(restorable(before), (w) => {
    const policy = w.failurePolicy ?? 'Fail';
    if (policy === 'Ignore' || (w.clientConfig?.url !== undefined && answers(w.clientConfig.url, answering))) return policy;
    downgraded.push(w.name);
    return 'Ignore';
  });
  return { action: 'restore', object, downgraded };
}

/**
 * The components' identities, which a failed first install keeps: a cluster whose functions call
 * its API with a ServiceAccount token (EKS, AKS, self-managed) gets that token minted from them
 * after the install, and until then its probes fail; deleting them would void a token minted
 * meanwhile (a new ServiceAccount has a new uid) and fail every first install the same way.
 * They grant nothing without the RBAC, which is deleted.
 */
export function keptIdentity(object: KubeObject): boolean {
  return object.apiVersion === 'v1' && (object.kind === 'ServiceAccount' || object.kind === 'Namespace');
}

/**
 * How a failed install undoes itself, step by step: what it created is deleted, what existed
 * before is written back as it was (a failed upgrade leaves the previous install, not nothing);
 * registrations first, as uninstall does, then the rest in reverse install order, Furnish's
 * namespace last. Objects of someone else's are never touched: only the names this install writes
 * are in `priors`. CRDs the install created are among the deletions; install.ts keeps one that
 * already holds objects (deleting it would delete them).
 */
export function undoSteps(priors: readonly Prior[], answering: ReadonlySet<string>): Undo[] {
  const key = (o: KubeObject) => `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  const before = new Map(priors.map((p) => [key(p.object), p.before]));
  return uninstallOrder(priors.map((p) => p.object), { crds: true }).map((object): Undo => {
    const was = before.get(key(object));
    if (was === undefined) return keptIdentity(object) ? { action: 'keep', object } : { action: 'delete', object };
    return isWebhookConfiguration(object) ? restoredRegistration(was, answering) : { action: 'restore', object: restorable(was), downgraded: [] };
  });
}
