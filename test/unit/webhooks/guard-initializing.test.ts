import { describe, expect, it } from '@jest/globals';
import { guardInitializing } from '../../../shared/webhooks/handlers/guard-initializing.ts';
import { allowReconciler, allowSystemPrincipals, failedTemplates, guardOutcome, requireInitialize, stillFurnishing, subresourceLeftOpen } from '../../../shared/webhooks/rules/guard-initializing.ts';
import { admissionRequest, fakeAuthorizer, testDeps, testSettings } from '../../support/fixtures.ts';

const settings = testSettings();

describe('guard-initializing rules', () => {
  it('allow-reconciler: the reconciler furnishes the namespace', () => {
    const user = { username: 'system:serviceaccount:furnish-system:furnish-reconciler' };
    expect(allowReconciler({ user, namespace: 'n', settings })).toMatchObject({ allow: expect.stringContaining('reconciler') });
    expect(allowReconciler({ user: { username: 'alice' }, namespace: 'n', settings })).toBeUndefined();
  });

  it('allow-system-principals: the controllers that create `default` and kube-root-ca.crt (and empty deleted namespaces)', () => {
    for (const name of ['service-account-controller', 'root-ca-cert-publisher', 'namespace-controller']) {
      expect(allowSystemPrincipals({ user: { username: `system:serviceaccount:kube-system:${name}` }, namespace: 'n', settings })).toBeDefined();
    }
    expect(allowSystemPrincipals({ user: { username: 'system:serviceaccount:kube-system:evil' }, namespace: 'n', settings })).toBeUndefined();
  });

  it('allow-system-principals: the controllers that keep running workloads going, the scheduler and the nodes (issue 25 finding 10)', () => {
    for (const username of ['system:serviceaccount:kube-system:replicaset-controller', 'system:serviceaccount:kube-system:job-controller', 'system:serviceaccount:kube-system:persistent-volume-binder', 'system:kube-scheduler']) {
      expect(allowSystemPrincipals({ user: { username }, namespace: 'n', settings })).toBeDefined();
    }
    expect(allowSystemPrincipals({ user: { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] }, namespace: 'n', settings })).toBeDefined();
    // A tenant's ServiceAccount of the same name, or a user named like a node without the group, is not one.
    expect(allowSystemPrincipals({ user: { username: 'system:serviceaccount:team-a:replicaset-controller' }, namespace: 'n', settings })).toBeUndefined();
    expect(allowSystemPrincipals({ user: { username: 'system:node:n1', groups: ['system:authenticated'] }, namespace: 'n', settings })).toBeUndefined();
  });

  it('require-initialize: everyone else needs verb initialize on the namespace', () => {
    const user = { username: 'alice' };
    expect(requireInitialize({ user, namespace: 'team-a', settings })).toMatchObject({ requires: { user, verb: 'initialize', group: '', resource: 'namespaces', name: 'team-a' } });
    expect(guardOutcome({ user, namespace: 'team-a', settings })).toMatchObject({ rule: 'require-initialize' });
  });
});

describe('guard-initializing text for a failed namespace', () => {
  it('failedTemplates: the templates named by the failure annotation, once each, in order', () => {
    const failure = ['template b-net: networking.k8s.io/NetworkPolicy/x/deny: Invalid (HTTP 422): bad', 'template a-rbac: rbac.authorization.k8s.io/RoleBinding/x/r: NotFound (HTTP 404): no', 'template b-net: /ConfigMap/x/c: Invalid (HTTP 422): worse'].join('\n');
    expect(failedTemplates(failure)).toEqual(['b-net', 'a-rbac']);
    expect(failedTemplates('secret-seeder: timed out')).toEqual([]);
  });

  it('names every failed template and what to do, one line per failure, never "pending" or "retry"', () => {
    const text = stillFurnishing('x', 'template b: k/x/y: Invalid (HTTP 422): m\ntemplate c: k/x/z: Invalid (HTTP 422): n');
    expect(text).toBe(
      'namespace "x" could not be furnished (furnish.dev/phase=failed): template b: k/x/y: Invalid (HTTP 422): m; template c: k/x/z: Invalid (HTTP 422): n; '
        + 'fix NamespaceTemplate "b" (kubectl edit namespacetemplate b), NamespaceTemplate "c" (kubectl edit namespacetemplate c), or ask their owners to; '
        + 'Furnish applies the namespace\'s templates again when a template changes, and the namespace leaves phase failed once all of them apply',
    );
    // A failure that names no template (an initializer's) still says what to do.
    expect(stillFurnishing('x', 'vault: sealed')).toBe('namespace "x" could not be furnished (furnish.dev/phase=failed): vault: sealed; waiting will not help: a holder of verb "initialize" on namespace "x" repairs it, then removes its annotation furnish.dev/failure (Furnish then sets phase pending again)');
    expect(stillFurnishing('x')).toBe('namespace "x" is still being furnished; retry in a few seconds');
  });
});

describe('guard-initializing handler on what kube-apiserver sent', () => {
  it('lets the controllers create the default ServiceAccount and kube-root-ca.crt without asking', async () => {
    const authorizer = fakeAuthorizer();
    for (const name of [
      '005-guard-CREATE-serviceaccounts-default-system_serviceaccount_kube_system_service_account_controller',
      '006-guard-CREATE-configmaps-kube-root-ca.crt-system_serviceaccount_kube_system_root_ca_cert_publisher',
    ] as const) {
      expect(await guardInitializing(admissionRequest(name), testDeps({ authorizer }))).toMatchObject({ allowed: true });
    }
    expect(authorizer.calls).toEqual([]);
  });

  it('refuses alice writing a ConfigMap into a pending namespace, including server-side apply', async () => {
    for (const name of ['021-guard-CREATE-configmaps-app-config-alice', '022-guard-CREATE-configmaps-ssa-config-alice', '023-guard-UPDATE-configmaps-ssa-config-alice'] as const) {
      const response = await guardInitializing(admissionRequest(name), testDeps());
      expect(response).toMatchObject({ allowed: false, status: { code: 403 } });
      expect(response.status!.message).toBe(
        'namespace "team-a" is still being furnished; retry in a few seconds (user "alice" may not write into namespace "team-a" until it is furnished: needs verb "initialize" on namespaces, resourceName "team-a")',
      );
    }
  });

  it('in a namespace that could not be furnished, names the reason instead of asking to retry', async () => {
    const failure = 'template security-defaults: rbac.authorization.k8s.io/RoleBinding/team-a/namespace-admin: Invalid (HTTP 422): subjects[0].name: Required value';
    const asked: string[] = [];
    const deps = { ...testDeps(), namespaces: { exists: async () => true, state: async (ns: string) => (asked.push(ns), { phase: 'failed', failure }) } };
    const response = await guardInitializing(admissionRequest('021-guard-CREATE-configmaps-app-config-alice'), deps);
    expect(response).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(response.status!.message).toBe(
      `namespace "team-a" could not be furnished (furnish.dev/phase=failed): ${failure}; fix NamespaceTemplate "security-defaults" (kubectl edit namespacetemplate security-defaults), or ask its owner to; `
        + 'Furnish applies the namespace\'s templates again when a template changes, and the namespace leaves phase failed once all of them apply '
        + '(user "alice" may not write into namespace "team-a" until it is furnished: needs verb "initialize" on namespaces, resourceName "team-a")',
    );
    expect(response.status!.message).not.toMatch(/pending|retry|few seconds/);
    expect(asked).toEqual(['team-a']);
    // Allowed writes never look it up.
    const allowed = await guardInitializing(admissionRequest('005-guard-CREATE-serviceaccounts-default-system_serviceaccount_kube_system_service_account_controller'), deps);
    expect(allowed).toMatchObject({ allowed: true });
    expect(asked).toEqual(['team-a']);
  });

  it('a subresource write (an eviction, a scale, a token) in a failed namespace goes through, so what runs there keeps running; in a pending one it is refused', async () => {
    const eviction = { ...admissionRequest('021-guard-CREATE-configmaps-app-config-alice'), resource: { group: '', version: 'v1', resource: 'pods' }, subResource: 'eviction' };
    const inPhase = (phase: string) => ({ ...testDeps(), namespaces: { exists: async () => true, state: async () => ({ phase, failure: 'template t: x' }) } });
    expect(await guardInitializing(eviction, inPhase('failed'))).toMatchObject({ allowed: true });
    expect(await guardInitializing(eviction, inPhase('pending'))).toMatchObject({ allowed: false, status: { code: 403 } });
    // The resource itself stays guarded in a failed namespace.
    expect(await guardInitializing(admissionRequest('021-guard-CREATE-configmaps-app-config-alice'), inPhase('failed'))).toMatchObject({ allowed: false });
    expect(subresourceLeftOpen('eviction', 'failed')).toBe(true);
    expect(subresourceLeftOpen(undefined, 'failed')).toBe(false);
    expect(subresourceLeftOpen('token', 'pending')).toBe(false);
  });

  it('allows principals holding initialize', async () => {
    const deps = testDeps({ grants: [{ user: 'admin', verb: 'initialize', resource: 'namespaces', name: 'team-a' }] });
    expect(await guardInitializing(admissionRequest('026-guard-CREATE-configmaps-app-config-admin'), deps)).toMatchObject({ allowed: true });
  });
});
