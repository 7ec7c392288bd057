// The organization part of namespace admission, called from the mutate-namespace and
// validate-namespace handlers: reads what the rules need fresh (Organizations, the
// ServiceAccount's namespace), runs the pure rules, and on a CREATE or transfer that every rule
// allows, reserves the quota slot. Kept apart from the handlers so that they change by one call.
import type { AdmissionRequest } from '../admission/types.ts';
import { KEY } from '../keys.ts';
import type { KubeObject, UserInfo } from '../kube/types.ts';
import { LNS_KIND } from '../lnamespace/types.ts';
import { serviceAccountOf } from '../org/members.ts';
import { reservationDeadline, reserveSlot } from '../org/reserve.ts';
import { organizationSettings } from '../org/settings.ts';
import type { OrganizationApi } from '../org/source.ts';
import type { Organization } from '../org/types.ts';
import type { NamespaceInfo } from '../render/types.ts';
import type { WebhookDeps } from './deps.ts';
import { applyChanges, type MetadataChange, type MutationOutcome } from './rules/mutate-namespace.ts';
import { isFurnish, isOrganizationExempt, namesOrganization, organizationExemption, organizationOf, organizationOutcomes, setDefaultOrganization, type OrganizationContext, type OrganizationRuleInput } from './rules/organization-namespace.ts';
import type { Verdict } from './rules/outcome.ts';

/** Namespace subresources whose updates can change labels and annotations, so are judged like the namespace. */
export const JUDGED_SUBRESOURCES: readonly string[] = ['status', 'finalize'];

/**
 * timeoutSeconds of the webhooks that reserve a quota slot (infra/webhooks/validate-namespace.yaml,
 * mutate-lnamespace.yaml; a unit test holds them equal): past it the API server has given up.
 */
export const RESERVING_WEBHOOK_TIMEOUT_SECONDS = 5;

export function organizationContext(deps: WebhookDeps): OrganizationContext {
  const { settings } = deps;
  return {
    settings: organizationSettings(settings),
    systemNamespaces: settings.systemNamespaces,
    furnishNamespace: settings.furnishNamespace,
    furnishPrincipals: settings.guard.reconciler,
    trustedCreators: settings.trustedCreators,
  };
}

/** The namespace as it will be once `changes` are applied (what validation will see). */
export function withChanges(namespace: NamespaceInfo, changes: readonly MetadataChange[]): NamespaceInfo {
  const next = { labels: { ...namespace.labels }, annotations: { ...namespace.annotations } };
  applyChanges(next, changes);
  return { name: namespace.name, labels: next.labels, annotations: next.annotations };
}

/** Who a namespace is created for: the recorded creator when a trusted creator named someone else, else the requester. */
export function creatorOf(requester: UserInfo, namespace: NamespaceInfo): UserInfo {
  const recorded = namespace.annotations[KEY.creator];
  return recorded && recorded !== requester.username ? { username: recorded } : requester;
}

function unavailable(message: string): Verdict {
  return { allowed: false, denials: [message], reasons: [], unavailable: true };
}

const NO_API = 'this cluster has no API configured (clusters[].api.server)';

async function serviceAccountOrganization(api: OrganizationApi, user: UserInfo): Promise<string | undefined> {
  const sa = serviceAccountOf(user);
  if (!sa) return undefined;
  const ns = await api.namespace(sa.namespace);
  return ns?.metadata.labels?.[KEY.organization] || undefined;
}

/** mutate-namespace: the default organization of a CREATE without the label; undefined when there is nothing to look up. */
export function organizationMutation(request: AdmissionRequest, deps: WebhookDeps, namespace: NamespaceInfo): Promise<MutationOutcome> | undefined {
  const ctx = organizationContext(deps);
  if (request.operation !== 'CREATE' || !ctx.settings.enabled || organizationOf(namespace)) return undefined;
  if (isOrganizationExempt(namespace.name, ctx)) return undefined;
  const creator = creatorOf(request.userInfo, namespace);
  const api = deps.organizations;
  if (!api) return Promise.reject(new Error(NO_API));
  const sa = serviceAccountOf(creator);
  return (async () => {
    const [organizations, saOrg] = await Promise.all([sa ? Promise.resolve([]) : api.list(), serviceAccountOrganization(api, creator)]);
    return setDefaultOrganization({ operation: 'CREATE', creator, namespace, organizations, serviceAccountOrganization: saOrg });
  })();
}

/**
 * The LNamespace a namespace write by Furnish's own identity follows: the one of the same name
 * that controls it (its uid among the written object's ownerReferences), read fresh; only when
 * Furnish creates the namespace or changes its organization.
 */
async function followedLNamespace(api: OrganizationApi, request: AdmissionRequest, ctx: OrganizationContext, namespace: NamespaceInfo, old: NamespaceInfo | undefined): Promise<OrganizationRuleInput['lnamespace']> {
  const changes = request.operation === 'CREATE' || organizationOf(namespace) !== organizationOf(old);
  if (!changes || !isFurnish(request.userInfo, ctx)) return undefined;
  const owners = (request.object?.metadata?.ownerReferences ?? []) as Array<{ kind?: string; name?: string; uid?: string }>;
  if (!owners.some((o) => o.kind === LNS_KIND && o.name === namespace.name)) return undefined;
  const lns: KubeObject | undefined = await api.lnamespace(namespace.name);
  if (!lns || !owners.some((o) => o.kind === LNS_KIND && o.uid === lns.metadata.uid)) return undefined;
  return { name: namespace.name, organization: lns.metadata.labels?.[KEY.organization] || undefined };
}

async function judge(request: AdmissionRequest, deps: WebhookDeps, api: OrganizationApi, namespace: NamespaceInfo, old: NamespaceInfo | undefined, startedAt: number): Promise<Verdict> {
  const ctx = organizationContext(deps);
  const operation = request.operation as 'CREATE' | 'UPDATE';
  const creator = creatorOf(request.userInfo, namespace);
  const acting = operation === 'CREATE' ? creator : request.userInfo;
  const to = organizationOf(namespace);
  const from = organizationOf(old);
  const read = (name: string | undefined): Promise<Organization | undefined> => (name ? api.get(name) : Promise.resolve(undefined));
  const [target, source, saOrg, lnamespace] = await Promise.all([
    read(to),
    from !== to ? read(from) : Promise.resolve(undefined),
    serviceAccountOrganization(api, acting),
    followedLNamespace(api, request, ctx, namespace, old),
  ]);
  const outcomes = organizationOutcomes({ ...ctx, operation, requester: request.userInfo, creator, namespace, old, target, source, serviceAccountOrganization: saOrg, lnamespace });
  const denials = outcomes.flatMap((o) => ('deny' in o ? [o.deny] : []));
  const reasons = outcomes.flatMap((o) => ('allow' in o ? [`${o.rule}: ${o.allow}`] : []));
  // A cluster without Organizations behaves as before organizations existed, for a namespace
  // that names none (one that does is under the rules, as furnish-organization-metadata holds them).
  if (denials.length > 0 && !namesOrganization(namespace, old) && !(await api.anyOrganization())) return { allowed: true, denials: [], reasons: ['organizations: no Organization exists yet, no organization rule applies'], unavailable: false };
  if (denials.length > 0 || !to || (operation === 'UPDATE' && to === from)) return { allowed: denials.length === 0, denials, reasons, unavailable: false };
  // A CREATE, or a transfer (which counts against the target): take a slot.
  const slot = await reserveSlot(api, to, { uid: request.uid, namespace: namespace.name }, {
    defaultQuota: ctx.settings.defaultNamespaceQuota,
    ttlSeconds: ctx.settings.reservationSeconds,
    dryRun: request.dryRun === true,
    deadline: reservationDeadline(startedAt, RESERVING_WEBHOOK_TIMEOUT_SECONDS),
  });
  if (!slot.ok) return { allowed: false, denials: [slot.message], reasons, unavailable: slot.unavailable };
  return { allowed: true, denials: [], reasons: [...reasons, `namespace-quota: ${slot.note}`], unavailable: false };
}

/**
 * validate-namespace: the organization verdict of a CREATE or UPDATE (also through
 * namespaces/status and namespaces/finalize); undefined when organizations do not apply.
 * `startedAt`: when the webhook began on the request, from which the API server's wait is counted.
 */
export function organizationVerdict(request: AdmissionRequest, deps: WebhookDeps, namespace: NamespaceInfo, old: NamespaceInfo | undefined, startedAt: number = Date.now()): Promise<Verdict> | undefined {
  const { operation } = request;
  if (operation !== 'CREATE' && operation !== 'UPDATE') return undefined;
  if (request.subResource && !JUDGED_SUBRESOURCES.includes(request.subResource)) return undefined;
  if (organizationExemption(request.userInfo, namespace.name, organizationContext(deps)) !== undefined) return undefined;
  const api = deps.organizations;
  if (!api) return Promise.resolve(unavailable(`could not read Organizations (${NO_API}); retry`));
  return judge(request, deps, api, namespace, old, startedAt).catch((e: unknown) => unavailable(`could not read Organizations (${(e as Error).message}); retry`));
}

/** Joins two verdicts: allowed only if both allow. */
export function bothVerdicts(a: Verdict, b: Verdict | undefined): Verdict {
  if (!b) return a;
  return { allowed: a.allowed && b.allowed, denials: [...a.denials, ...b.denials], reasons: [...a.reasons, ...b.reasons], unavailable: a.unavailable || b.unavailable };
}
