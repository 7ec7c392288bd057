// How `furnish install` knows each function answers before it lets the security webhooks fail
// closed: one server-side dry-run request per webhook whose answer differs when the function is
// down (registered with failurePolicy Ignore, a missing answer lets the request through untouched).
// Mutating webhooks must leave their mark on the returned object; validating ones must refuse a
// request they exist to refuse. Requests that need an unprivileged requester are sent as
// PROBE_USER (impersonated, with PROBE_RULES and nothing else).
import { FIELD_MANAGER, INSTALL_FIELD_MANAGER, KEY, PHASE } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { APPLYSET_PARENT_NAME, applySetId } from '../render/applyset.ts';

/** Impersonated for the probes that need a requester without Furnish's verbs. */
export const PROBE_USER = 'furnish:install-probe';
/** Marks the installer's probe objects: the namespaces it writes into (an enforcement check's carries its nonce) and the template's selector. */
export const PROBE_KEY = 'furnish.dev/install-probe';
/** What PROBE_USER may do (bound while the probes run, removed after): write what the probes write. */
export const PROBE_RULES = [
  { apiGroups: [''], resources: ['namespaces', 'configmaps'], verbs: ['create'] },
];

export interface ProbeAnswer {
  status: number;
  data?: unknown;
  error?: string;
}

export interface Probe {
  /** The function it checks (infra/webhooks/<webhook>.yaml). */
  webhook: string;
  /** Who sends it: the installer's own identity, or the unprivileged PROBE_USER. */
  as: 'installer' | 'probe-user';
  /** apiVersion/kind/namespace of the object, and the object; always sent with dryRun=All. */
  object(names: ProbeNames): KubeObject;
  /** The request's fieldManager, when the probe is about who writes (default: the installer's). */
  fieldManager?: string;
  /** undefined: the function answered as it must; otherwise why not. */
  judge(answer: ProbeAnswer): string | undefined;
}

export interface ProbeNames {
  /** A fresh name for objects that are never stored. */
  dryRun: string;
  /** A namespace the installer keeps pending while the probes run (guard-initializing needs one). */
  pendingNamespace: string;
  /**
   * Furnish's own namespace, written first by the install: never pending nor furnished, so of the
   * webhooks a ConfigMap write there meets only the protect-* ones its labels select.
   */
  furnishNamespace: string;
}

const deniedBy = (webhook: string) => `admission webhook "${webhook}.furnish.dev" denied the request`;

function describe(answer: ProbeAnswer): string {
  // Admitted untouched is what the API server does, under failurePolicy Ignore, when its call to the function fails.
  return answer.status >= 200 && answer.status < 300 ? `admitted without its answer (HTTP ${answer.status}): the cluster's call to the function failed, or it answered otherwise` : `HTTP ${answer.status}: ${answer.error ?? 'no message'}`;
}

/** A mutating webhook answered if its mark is on the object the API server returns. */
function mutatedWith(webhook: string, annotation: string) {
  return (answer: ProbeAnswer): string | undefined => {
    const annotations = (answer.data as KubeObject | undefined)?.metadata?.annotations;
    if (answer.status >= 200 && answer.status < 300 && annotations?.[annotation] !== undefined) return undefined;
    return `${webhook}: expected the dry run admitted with annotation ${annotation} set, got ${describe(answer)}`;
  };
}

/** A validating webhook answered if the refusal is its own. */
function refusedBy(webhook: string) {
  return (answer: ProbeAnswer): string | undefined => {
    if (answer.status >= 400 && (answer.error ?? '').includes(deniedBy(webhook))) return undefined;
    return `${webhook}: expected the dry run refused by ${webhook}.furnish.dev, got ${describe(answer)}`;
  };
}

export const PROBES: readonly Probe[] = [
  {
    webhook: 'mutate-namespace',
    as: 'installer',
    object: ({ dryRun }) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: dryRun } }),
    judge: mutatedWith('mutate-namespace', KEY.creator),
  },
  {
    // Opting out needs verb `optout`, which the probe user lacks.
    webhook: 'validate-namespace',
    as: 'probe-user',
    object: ({ dryRun }) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: dryRun, annotations: { [KEY.optOut]: 'true' } } }),
    judge: refusedBy('validate-namespace'),
  },
  {
    webhook: 'validate-template',
    as: 'installer',
    object: ({ dryRun }) => ({
      apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: dryRun },
      spec: { namespaces: { labelSelector: { matchLabels: { [PROBE_KEY]: dryRun } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe' }, data: { token: '$(NO_SUCH_TOKEN)' } }] },
    }),
    judge: refusedBy('validate-template'),
  },
  {
    // Writes into a pending namespace need verb `initialize`, which the probe user lacks.
    webhook: 'guard-initializing',
    as: 'probe-user',
    object: ({ dryRun, pendingNamespace }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: dryRun, namespace: pendingNamespace } }),
    judge: refusedBy('guard-initializing'),
  },
  {
    // Only a User may call an organization its default.
    webhook: 'validate-organization',
    as: 'installer',
    object: ({ dryRun }) => ({ apiVersion: 'furnish.dev/v1alpha1', kind: 'Organization', metadata: { name: dryRun }, spec: { members: [{ kind: 'Group', name: PROBE_USER, default: true }] } }),
    judge: refusedBy('validate-organization'),
  },
  {
    webhook: 'mutate-lnamespace',
    as: 'installer',
    object: ({ dryRun }) => ({ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', metadata: { name: dryRun }, spec: {} }),
    judge: mutatedWith('mutate-lnamespace', KEY.creator),
  },
  {
    // Only the reconciler may make an object Furnish's: a member of the namespace's ApplySet whose
    // label field manager `furnish` owns. The installer is not the reconciler. No applyset id
    // label, so protect-applyset does not see it.
    webhook: 'protect-objects',
    as: 'installer',
    fieldManager: FIELD_MANAGER,
    object: ({ dryRun, furnishNamespace }) => ({
      apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: dryRun, namespace: furnishNamespace, labels: { [KEY.applySetPartOf]: applySetId(furnishNamespace) } },
    }),
    judge: refusedBy('protect-objects'),
  },
  {
    // Only the reconciler writes Furnish's ApplySet parent. No part-of label, so protect-objects does not see it.
    webhook: 'protect-applyset',
    as: 'installer',
    object: ({ furnishNamespace }) => ({
      apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: APPLYSET_PARENT_NAME, namespace: furnishNamespace, labels: { [KEY.applySetId]: applySetId(furnishNamespace) } },
    }),
    judge: refusedBy('protect-applyset'),
  },
];

/** The installer's own namespaces, `<prefix><id>`: the one it keeps pending while probing, and each enforcement check's. */
export const PROBE_NAMESPACE_PREFIX = 'install-probe-';
export const CHECK_NAMESPACE_PREFIX = 'install-check-';

/**
 * Whether `ns` is one of the installer's own namespaces (its name, PROBE_KEY, created by the
 * installer's field manager): one an install killed while it probed (SIGKILL, a second Ctrl-C)
 * left behind, which uninstall removes. All three, so that no namespace is taken for one by its
 * name alone.
 */
export function isInstallerNamespace(ns: KubeObject): boolean {
  const name = ns.metadata.name ?? '';
  const named = [PROBE_NAMESPACE_PREFIX, CHECK_NAMESPACE_PREFIX].some((prefix) => name.startsWith(prefix) && /^[a-z0-9]+$/.test(name.slice(prefix.length)));
  const managers = (ns.metadata.managedFields ?? []) as Array<{ manager?: string }>;
  return named && ns.metadata.annotations?.[PROBE_KEY] !== undefined && managers.some((m) => m.manager === INSTALL_FIELD_MANAGER);
}

/** The namespace guard-initializing's probe writes into: kept pending by the installer while probing. */
export function pendingNamespaceObject(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.phase]: PHASE.pending }, annotations: { [PROBE_KEY]: 'true' } } };
}

/**
 * Why no probe checks these webhooks: the installer registers each of them with failurePolicy
 * Ignore (the others of its configuration fail closed once probed). mutate-pod's manifest says
 * Ignore anyway. protect-scale judges only `<workload>/scale` in a namespace Furnish governs,
 * refusing only for a workload a protecting template applied: a dry run cannot reach that
 * without a stored template, namespace and workload, and the probes store nothing.
 */
const UNPROBED: Readonly<Record<string, string>> = {
  'mutate-pod': 'by design (it only fills in a default deadline, and its answer shows only in an organization namespace)',
  'protect-scale': 'it refuses only a scale of a workload a protecting template applied in a namespace Furnish governs, which a dry run cannot reach without storing all three',
};

export interface Unprobed {
  webhook: string;
  why: string;
}

/** Whether a probe checks this webhook's function (infra/webhooks/<webhook>.yaml). */
export const isProbed = (webhook: string): boolean => PROBES.some((p) => p.webhook === webhook);

/** The webhooks no probe checks, with why; the installer leaves each at `failurePolicy: Ignore`. */
export function unprobed(webhooks: readonly string[]): Unprobed[] {
  return webhooks.filter((w) => !isProbed(w)).map((webhook) => ({ webhook, why: UNPROBED[webhook] ?? 'no probe checks it yet' }));
}
