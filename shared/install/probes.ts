// How `furnish install` knows each function answers before it lets the security webhooks fail
// closed: one server-side dry-run request per webhook whose answer differs when the function is
// down (registered with failurePolicy Ignore, a missing answer lets the request through untouched).
// Mutating webhooks must leave their mark on the returned object; validating ones must refuse a
// request they exist to refuse. Requests that need an unprivileged requester are sent as
// PROBE_USER (impersonated, with PROBE_RULES and nothing else).
import { KEY, PHASE } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';

/** Impersonated for the probes that need a requester without Furnish's verbs. */
export const PROBE_USER = 'furnish:install-probe';
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
  /** undefined: the function answered as it must; otherwise why not. */
  judge(answer: ProbeAnswer): string | undefined;
}

export interface ProbeNames {
  /** A fresh name for objects that are never stored. */
  dryRun: string;
  /** A namespace the installer keeps pending while the probes run (guard-initializing needs one). */
  pendingNamespace: string;
}

const deniedBy = (webhook: string) => `admission webhook "${webhook}.furnish.dev" denied the request`;

function describe(answer: ProbeAnswer): string {
  return answer.status >= 200 && answer.status < 300 ? `admitted (HTTP ${answer.status})` : `HTTP ${answer.status}: ${answer.error ?? 'no message'}`;
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
      spec: { namespaces: { labelSelector: { matchLabels: { 'furnish.dev/install-probe': dryRun } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe' }, data: { token: '$(NO_SUCH_TOKEN)' } }] },
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
];

/** The namespace guard-initializing's probe writes into: kept pending by the installer while probing. */
export function pendingNamespaceObject(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.phase]: PHASE.pending }, annotations: { 'furnish.dev/install-probe': 'true' } } };
}

/**
 * The webhooks no probe checks, left at `failurePolicy: Ignore` by the installer: mutate-pod by
 * design (it only fills in a default deadline, and its answer can only be seen in an organization
 * namespace); protect-objects until it has a probe (it judges only UPDATE and DELETE of an object
 * a protecting template owns, which a dry run cannot set up without writing a template first).
 */
export function unprobed(webhooks: readonly string[]): string[] {
  return webhooks.filter((w) => !PROBES.some((p) => p.webhook === w));
}
