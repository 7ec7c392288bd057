// validate-organization: an Organization's own rules, and that a user is default in at most one
// (the other Organizations read fresh, only when this one marks a default).
import { allow, deny } from '../../admission/response.ts';
import { marksDefaultUsers, validateOrganization } from '../../org/validate.ts';
import type { Organization } from '../../org/types.ts';
import { ORGANIZATIONS_RESOURCE } from '../../org/types.ts';
import { GROUP } from '../../render/types.ts';
import type { ValidationProblem } from '../../render/types.ts';
import type { AdmissionHandler } from '../deps.ts';
import { requireObject, requireResource } from '../request.ts';

export function describeOrganizationProblems(name: string, problems: readonly ValidationProblem[]): string {
  const list = problems.map((p) => `${p.path}: ${p.message}`).join('; ');
  return `Organization "${name}" is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'}): ${list}`;
}

export const validateOrganizationHandler: AdmissionHandler = (request, { organizations }) => {
  requireResource(request, 'validate-organization', GROUP, ORGANIZATIONS_RESOURCE);
  const { operation } = request;
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || request.subResource) return allow(request);
  const object = requireObject(request, 'object');
  const name = object.metadata?.name ?? request.name ?? '';
  const answer = (others: readonly Organization[]) => {
    const problems = validateOrganization(object, others);
    return problems.length === 0 ? allow(request) : deny(request, describeOrganizationProblems(name, problems), 422);
  };
  if (!marksDefaultUsers(object)) return answer([]);
  if (!organizations) return deny(request, 'could not read the other Organizations: this cluster has no API configured; retry', 503);
  return organizations.list().then(answer, (e: unknown) => deny(request, `could not read the other Organizations (${(e as Error).message}); retry`, 503));
};
