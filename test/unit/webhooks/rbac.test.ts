import { describe, expect, it } from '@jest/globals';
import { createRbacAuthorizer, ruleAllows } from '../../../shared/rbac/authorizer.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

const rbac = 'rbac.authorization.k8s.io/v1';
const objects: KubeObject[] = [
  { apiVersion: rbac, kind: 'ClusterRole', metadata: { name: 'tpl-user' }, rules: [{ apiGroups: ['furnish.dev'], resources: ['namespacetemplates'], verbs: ['use'], resourceNames: ['privileged'] }] },
  { apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: { name: 'bob-tpl' }, roleRef: { kind: 'ClusterRole', name: 'tpl-user' }, subjects: [{ kind: 'User', name: 'bob' }] },
  { apiVersion: rbac, kind: 'ClusterRole', metadata: { name: 'initializer' }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['initialize'] }] },
  { apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: { name: 'ops' }, roleRef: { kind: 'ClusterRole', name: 'initializer' }, subjects: [{ kind: 'Group', name: 'ops' }, { kind: 'ServiceAccount', namespace: 'furnish-system', name: 'r' }] },
  { apiVersion: rbac, kind: 'Role', metadata: { name: 'cm', namespace: 'team-a' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
  { apiVersion: rbac, kind: 'RoleBinding', metadata: { name: 'alice-cm', namespace: 'team-a' }, roleRef: { kind: 'Role', name: 'cm' }, subjects: [{ kind: 'User', name: 'alice' }] },
];
const authz = createRbacAuthorizer(objects);
const use = (username: string, name: string) => ({ user: { username }, verb: 'use', group: 'furnish.dev', resource: 'namespacetemplates', name });

describe('offline RBAC evaluation', () => {
  it('grants through ClusterRoleBindings with resourceNames, and refuses other names and users', async () => {
    expect(await authz.check(use('bob', 'privileged'))).toEqual({ allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "bob-tpl"' });
    expect((await authz.check(use('bob', 'other'))).allowed).toBe(false);
    expect((await authz.check(use('alice', 'privileged'))).allowed).toBe(false);
  });

  it('matches Group and ServiceAccount subjects, and system:masters', async () => {
    const init = (user: object) => authz.check({ user, verb: 'initialize', group: '', resource: 'namespaces', name: 'x' });
    expect((await init({ username: 'carol', groups: ['ops'] })).allowed).toBe(true);
    expect((await init({ username: 'system:serviceaccount:furnish-system:r' })).allowed).toBe(true);
    expect((await init({ username: 'admin', groups: ['system:masters'] })).allowed).toBe(true);
    expect((await init({ username: 'dave', groups: ['dev'] })).allowed).toBe(false);
  });

  it('RoleBindings grant only inside their namespace', async () => {
    const cm = (namespace: string) => authz.check({ user: { username: 'alice' }, verb: 'create', group: '', resource: 'configmaps', namespace });
    expect((await cm('team-a')).allowed).toBe(true);
    expect((await cm('team-b')).allowed).toBe(false);
  });

  it('rules match subresources only when named', () => {
    const rule = { apiGroups: [''], resources: ['pods'], verbs: ['get'] };
    expect(ruleAllows(rule, { user: {}, verb: 'get', group: '', resource: 'pods', subresource: 'log' })).toBe(false);
    expect(ruleAllows({ ...rule, resources: ['pods/log'] }, { user: {}, verb: 'get', group: '', resource: 'pods', subresource: 'log' })).toBe(true);
  });
});
