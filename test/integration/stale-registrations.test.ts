// npm start, after a run that was killed: the registrations that run left (field manager
// furnish-local, failing closed on a server that is gone) refuse even cluster-admin's namespace
// creates until they are removed; the next start removes exactly those, and says how by hand.
// Registrations written by anyone else (furnish install, an administrator) are left alone. A killed
// run's watchdog (scripts/start/watchdog.ts) removes that run's only, by its label. The same for
// the ValidatingAdmissionPolicies npm start writes where the server has them; where it has none
// (1.26), their lists answer 404 and nothing fails.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, createKubeClient, type KubeClient } from '../../shared/kube/client.ts';
import { collectingLogger } from '../../shared/log.ts';
import { LOCAL_FIELD_MANAGER, removeRunRegistrations, removeStaleLocalRegistrations } from '../../scripts/local-registrations.ts';
import { KEY } from '../../shared/keys.ts';
import { inTreePolicies } from '../../shared/kube/features.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';

const run = Math.random().toString(36).slice(2, 7);
const PATH = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const once = { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 };
let cluster: TestCluster;
let admin: KubeClient;

/** A fail-closed registration for namespaces pointing at a port nothing listens on. */
function deadRegistration(name: string, labels: Record<string, string> = {}) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name, labels },
    webhooks: [{
      name: `${name}.furnish.dev`, admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: 'Fail', timeoutSeconds: 2,
      clientConfig: { url: 'https://127.0.0.1:1/gone' },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], operations: ['CREATE'], scope: 'Cluster' }],
      // Only this run's namespaces: a real cluster is shared by the other suites.
      namespaceSelector: { matchLabels: { 'stale-test': run } },
    }],
  };
}

const register = (name: string, fieldManager: string, labels?: Record<string, string>) =>
  admin.call({ method: 'PATCH', path: `${PATH}/${name}`, query: { fieldManager, force: true }, contentType: 'application/apply-patch+yaml', body: deadRegistration(name, labels) });

const createNamespace = (name: string) =>
  admin.call({ method: 'POST', path: '/api/v1/namespaces', query: { dryRun: 'All' }, body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'stale-test': run } } }, retry: once });

describe('npm start removes the registrations a killed run left', () => {
  const local = `stale-local-${run}`;
  const installed = `stale-installed-${run}`;

  beforeAll(async () => {
    cluster = await useTestCluster();
    admin = createKubeClient(await connect({ kubeconfigPath: cluster.kubeconfigPath, context: 'admin' }));
  });
  afterAll(async () => {
    for (const name of [local, `${local}-2`, installed]) await admin?.call({ method: 'DELETE', path: `${PATH}/${name}`, retry: once });
    admin?.close();
    await cluster?.stop();
  });

  it('removes its own (furnish-local) and nothing else, and logs the kubectl command', async () => {
    expect((await register(local, LOCAL_FIELD_MANAGER)).ok).toBe(true);
    const refused = await createNamespace(`locked-${run}`);
    expect(refused.status).toBe(500);
    expect(refused.error).toContain(`failed calling webhook "${local}.furnish.dev"`);

    const log = collectingLogger();
    const removed = await removeStaleLocalRegistrations(admin, log);
    expect(removed.map((o) => o.metadata.name)).toContain(local);
    expect(log.lines.find((l) => l.message.includes('left by an earlier npm start'))?.fields.byHand).toContain(`kubectl delete mutatingwebhookconfiguration ${local}`);
    expect((await createNamespace(`unlocked-${run}`)).status).toBe(201);
  });

  it("a killed run's watchdog removes that run's registrations, never one a later run has written over", async () => {
    const [killed, later] = [`killed-${run}`, `later-${run}`];
    expect((await register(local, LOCAL_FIELD_MANAGER, { [KEY.localRun]: killed })).ok).toBe(true);
    expect((await register(`${local}-2`, LOCAL_FIELD_MANAGER, { [KEY.localRun]: killed })).ok).toBe(true);
    // The next npm start registered the same name over it (its label now).
    expect((await register(`${local}-2`, LOCAL_FIELD_MANAGER, { [KEY.localRun]: later })).ok).toBe(true);
    expect((await createNamespace(`locked-${run}-2`)).status).toBe(500);

    expect(await removeRunRegistrations(admin, killed)).toEqual([local]);
    expect((await admin.call({ method: 'GET', path: `${PATH}/${local}` })).status).toBe(404);
    expect((await admin.call({ method: 'GET', path: `${PATH}/${local}-2` })).status).toBe(200);
    expect(await removeRunRegistrations(admin, later)).toEqual([`${local}-2`]);
    expect((await createNamespace(`unlocked-${run}-2`)).status).toBe(201);
  });

  it('removes a run\'s policies as its registrations (by its label, never an install\'s); where the server has none, it is not an error', async () => {
    const policies = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
    const policy = (name: string, fieldManager: string) => admin.call({
      method: 'PATCH', path: `${policies}/${name}`, query: { fieldManager, force: true }, contentType: 'application/apply-patch+yaml',
      body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name, labels: { [KEY.localRun]: `policy-${run}` } }, spec: { matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE'] }] }, validations: [{ expression: 'true' }] } },
    });
    const [ours, installs, stale] = [`run-policy-${run}`, `install-policy-${run}`, `stale-policy-${run}`];
    try {
      if (!(await inTreePolicies(admin))) {
        expect(await removeRunRegistrations(admin, `policy-${run}`)).toEqual([]);
        expect((await removeStaleLocalRegistrations(admin, collectingLogger())).map((o) => o.metadata.name)).not.toContain(ours);
        return;
      }
      expect((await policy(ours, LOCAL_FIELD_MANAGER)).ok).toBe(true);
      expect((await policy(installs, 'furnish-install')).ok).toBe(true);
      expect(await removeRunRegistrations(admin, `policy-${run}`)).toEqual([ours]);
      expect((await admin.call({ method: 'GET', path: `${policies}/${installs}` })).status).toBe(200);
      // After a reboot, the next start removes every npm start policy left, as its registrations.
      expect((await policy(stale, LOCAL_FIELD_MANAGER)).ok).toBe(true);
      const log = collectingLogger();
      expect((await removeStaleLocalRegistrations(admin, log)).map((o) => o.metadata.name)).toContain(stale);
      expect(log.lines.find((l) => l.message.includes('left by an earlier npm start'))?.fields.byHand).toContain(`kubectl delete validatingadmissionpolicy ${stale}`);
      expect((await admin.call({ method: 'GET', path: `${policies}/${installs}` })).status).toBe(200);
    } finally {
      for (const name of [ours, installs, stale]) await admin.call({ method: 'DELETE', path: `${policies}/${name}`, retry: once });
    }
  });

  it('leaves a registration that furnish install (or anyone else) wrote', async () => {
    expect((await register(installed, 'furnish-install')).ok).toBe(true);
    await removeStaleLocalRegistrations(admin, collectingLogger());
    expect((await admin.call({ method: 'GET', path: `${PATH}/${installed}` })).status).toBe(200);
  });
});
