// A small RBAC evaluator over Role/ClusterRole/RoleBinding/ClusterRoleBinding objects, for
// answering access checks offline (`furnish admit --cluster <dir>`). It follows the RBAC
// authorizer's rules for the parts Furnish asks about: verbs, apiGroups, resources (with
// subresources), resourceNames, `*`, User/Group/ServiceAccount subjects and the
// system:masters superuser group. Aggregated ClusterRoles are used as written (their rules).
import type { KubeObject, UserInfo } from '../kube/types.ts';
import type { AccessCheck, AccessDecision, Authorizer } from '../kube/sar.ts';

interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

interface Binding extends KubeObject {
  roleRef?: { kind?: string; name?: string };
  subjects?: Subject[];
}

const RBAC_GROUP = 'rbac.authorization.k8s.io/';

function has(values: readonly string[] | undefined, value: string): boolean {
  return (values ?? []).some((v) => v === '*' || v === value);
}

export function ruleAllows(rule: PolicyRule, check: AccessCheck): boolean {
  const resource = check.subresource ? `${check.resource}/${check.subresource}` : check.resource;
  const resourceMatches = (rule.resources ?? []).some((r) => r === '*' || r === resource || (check.subresource && r === `*/${check.subresource}`));
  const nameMatches = !rule.resourceNames?.length || (check.name !== undefined && rule.resourceNames.includes(check.name));
  return has(rule.verbs, check.verb) && has(rule.apiGroups, check.group) && resourceMatches && nameMatches;
}

export function subjectMatches(subject: Subject, user: UserInfo): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.username;
    case 'Group':
      return (user.groups ?? []).includes(subject.name ?? '');
    case 'ServiceAccount':
      return user.username === `system:serviceaccount:${subject.namespace}:${subject.name}`;
    default:
      return false;
  }
}

export function createRbacAuthorizer(objects: readonly KubeObject[]): Authorizer {
  const of = (kind: string) => objects.filter((o) => o.kind === kind && (o.apiVersion ?? '').startsWith(RBAC_GROUP));
  const roles = new Map<string, PolicyRule[]>();
  for (const r of of('ClusterRole')) roles.set(`ClusterRole//${r.metadata.name}`, (r.rules as PolicyRule[]) ?? []);
  for (const r of of('Role')) roles.set(`Role/${r.metadata.namespace ?? ''}/${r.metadata.name}`, (r.rules as PolicyRule[]) ?? []);
  const clusterBindings = of('ClusterRoleBinding') as Binding[];
  const bindings = of('RoleBinding') as Binding[];

  function rulesOf(binding: Binding): PolicyRule[] {
    const ref = binding.roleRef ?? {};
    const ns = ref.kind === 'Role' ? (binding.metadata.namespace ?? '') : '';
    return roles.get(`${ref.kind}/${ns}/${ref.name}`) ?? [];
  }

  function grantedBy(list: Binding[], check: AccessCheck): Binding | undefined {
    return list.find((b) => (b.subjects ?? []).some((s) => subjectMatches(s, check.user)) && rulesOf(b).some((rule) => ruleAllows(rule, check)));
  }

  return {
    async check(check): Promise<AccessDecision> {
      if ((check.user.groups ?? []).includes('system:masters')) return { allowed: true, reason: 'member of system:masters' };
      const cluster = grantedBy(clusterBindings, check);
      if (cluster) return { allowed: true, reason: `RBAC: allowed by ClusterRoleBinding "${cluster.metadata.name}"` };
      if (check.namespace) {
        const local = grantedBy(bindings.filter((b) => b.metadata.namespace === check.namespace), check);
        if (local) return { allowed: true, reason: `RBAC: allowed by RoleBinding "${local.metadata.name}/${check.namespace}"` };
      }
      return { allowed: false, reason: 'no RBAC rule allows it' };
    },
  };
}
