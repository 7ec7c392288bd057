// validate-organization: an Organization's own rules, and that a user is default in at most one
// (the other Organizations read fresh, only when this one marks a default); at DELETE, that it has
// no namespaces left (read fresh) and no create in flight.
import { allow, deny } from '../../admission/response.ts';
import { liveReservations } from '../../org/ledger.ts';
import { deletionRefusal, marksDefaultUsers, validateOrganization } from '../../org/validate.ts';
import type { Organization } from '../../org/types.ts';
import { ORGANIZATIONS_RESOURCE } from '../../org/types.ts';
import { organizationSettings } from '../../org/settings.ts';
import { GROUP } from '../../render/types.ts';
import type { ValidationProblem } from '../../render/types.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../admission/types.ts';
import type { KubeObject } from '../../kube/types.ts';
import type { OrganizationApi } from '../../org/source.ts';
import type { AdmissionHandler } from '../deps.ts';
import { requireObject, requireResource } from '../request.ts';

export function describeOrganizationProblems(name: string, problems: readonly ValidationProblem[]): string {
  const list = problems.map((p) => `${p.path}: ${p.message}`).join('; ');
  return `Organization "${name}" is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'}): ${list}`;
}

const terminating = (ns: KubeObject) => Boolean(ns.metadata.deletionTimestamp) || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating';

async function judgeDeletion(request: AdmissionRequest, organizations: OrganizationApi | undefined): Promise<AdmissionResponse> {
  const old = requireObject(request, 'oldObject') as Organization;
  const name = old.metadata?.name ?? request.name ?? '';
  if (!organizations) return deny(request, `could not read the namespaces of organization "${name}": this cluster has no API configured; retry`, 503);
  let live: string[];
  try {
    live = (await organizations.namespacesOf(name)).filter((ns) => !terminating(ns)).map((ns) => ns.metadata.name ?? '').sort();
  } catch (e) {
    return deny(request, `could not read the namespaces of organization "${name}" (${(e as Error).message}); retry`, 503);
  }
  const refusal = deletionRefusal(name, live, liveReservations(old.status, Date.now()).length);
  return refusal ? deny(request, refusal, 403) : allow(request);
}

/** Said to whoever writes an Organization while the rules are off: at once, where the condition Enforced comes at its next true-up. */
export function rulesOffWarning(name: string): string {
  return `the organization rules are off in this cluster (FURNISH_ORGANIZATIONS, clusters[].organizations.enabled): Organization "${name}" is kept, and enforces nothing until they are on`;
}

export const validateOrganizationHandler: AdmissionHandler = (request, { organizations, settings }) => {
  requireResource(request, 'validate-organization', GROUP, ORGANIZATIONS_RESOURCE);
  const { operation } = request;
  if (operation === 'DELETE' && !request.subResource) return judgeDeletion(request, organizations);
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || request.subResource) return allow(request);
  const object = requireObject(request, 'object');
  const name = object.metadata?.name ?? request.name ?? '';
  const warnings = organizationSettings(settings).enabled ? [] : [rulesOffWarning(name)];
  const answer = (others: readonly Organization[]) => {
    const problems = validateOrganization(object, others);
    return problems.length === 0 ? allow(request, { warnings }) : deny(request, describeOrganizationProblems(name, problems), 422);
  };
  if (!marksDefaultUsers(object)) return answer([]);
  if (!organizations) return deny(request, 'could not read the other Organizations: this cluster has no API configured; retry', 503);
  return organizations.list().then(answer, (e: unknown) => deny(request, `could not read the other Organizations (${(e as Error).message}); retry`, 503));
};
