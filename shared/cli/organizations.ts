// `--organizations FILE` of `furnish render` and `furnish admit`: the cluster's Organizations,
// read from YAML or JSON (files or directories, multi-document, Lists), each checked as
// validate-organization would; any problem is the user's input at fault (exit 2).
import { KEY } from '../keys.ts';
import { defaultOrganizationOf, findOrganization, isMember } from '../org/members.ts';
import type { Organization } from '../org/types.ts';
import { validateOrganization } from '../org/validate.ts';
import { API_VERSION } from '../render/types.ts';
import type { NamespaceInfo, RenderContext } from '../render/types.ts';
import { CliError, repeatedOption, type OptionSpec, type OptionValues } from './command.ts';
import { formatLoadProblem, loadObjects } from './load.ts';

export const ORGANIZATIONS_OPTION: OptionSpec = {
  type: 'string',
  multiple: true,
  value: 'file|dir',
  description: 'the cluster\'s Organizations (furnish.dev/v1alpha1), read recursively: membership, default organizations, quota',
};

/** The Organizations named by --organizations, or undefined when the flag is absent. */
export function organizationsOption(values: OptionValues): Organization[] | undefined {
  const paths = repeatedOption(values, 'organizations');
  if (paths.length === 0) return undefined;
  const loaded = loadObjects(paths);
  const problems = loaded.problems.map(formatLoadProblem);
  const organizations: Organization[] = [];
  for (const { file, where, object } of loaded.items) {
    if (object.kind !== 'Organization' || object.apiVersion !== API_VERSION) {
      problems.push(`${file}: ${where}: ${object.kind} is not an Organization (${API_VERSION})`);
      continue;
    }
    organizations.push(object as Organization);
  }
  for (const o of organizations) {
    const others = organizations.filter((x) => x !== o);
    problems.push(...validateOrganization(o, others).map((p) => `--organizations: Organization/${o.metadata.name}: ${p.path}: ${p.message}`));
  }
  if (problems.length > 0) throw new CliError(problems.join('\n'));
  return organizations;
}

/**
 * The organization a namespace rendered offline belongs to, as admission would decide it for
 * `ctx.creator` (a user: offline there are no groups): the named one if the creator is a member,
 * else the creator's default. Throws the refusal admission would give.
 */
export function resolveOrganization(organizations: readonly Organization[], ns: NamespaceInfo, ctx: RenderContext): { ns: NamespaceInfo; ctx: RenderContext; note: string } {
  const user = { username: ctx.creator };
  const named = ctx.organization;
  const org = named ? findOrganization(organizations, named) : defaultOrganizationOf(ctx.creator, organizations);
  if (!org) {
    throw new CliError(named
      ? `organization "${named}" is not among --organizations`
      : `user "${ctx.creator}" has no default organization among --organizations: admission would refuse the namespace (name one with --organization)`);
  }
  const name = org.metadata.name!;
  if (!isMember(org, user)) throw new CliError(`user "${ctx.creator}" is not a member of organization "${name}": admission would refuse the namespace`);
  const note = named ? `organization "${name}": "${ctx.creator}" is a member` : `organization "${name}": default organization of "${ctx.creator}"`;
  return { ns: { ...ns, labels: { ...ns.labels, [KEY.organization]: name } }, ctx: { ...ctx, organization: name }, note };
}
