// `npm start`'s stack registers the webhooks as `furnish install` does, so that every suite runs as
// deployed: on a server with in-tree policies (1.32, kube-sim) Furnish's ValidatingAdmissionPolicies
// and bindings first, rendered from the stack's own settings, then the registrations with their
// matchConditions and mutate-namespace failing open; on one without (1.26) today's registrations
// and no policy. Its stop removes what this run wrote (labelled with its run id), registrations
// first, and never a policy of another run or of an install, and returns once the server no longer
// enforces them. (Its watchdog, when it is killed: start-lockout.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startLocalStack, type LocalStack } from '../../scripts/start.ts';
import { LOCAL_FIELD_MANAGER } from '../../scripts/local-registrations.ts';
import { loadConfig } from '../../shared/config/load.ts';
import { enforcementProblem } from '../../shared/install/install.ts';
import { installedPolicies, PART_OF, POLICY_KINDS } from '../../shared/install/policies.ts';
import { INSTALL_FIELD_MANAGER, KEY } from '../../shared/keys.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { inTreePolicies } from '../../shared/kube/features.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { silentLogger } from '../../shared/log.ts';
import { clientFor } from '../integration/helpers.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';

const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
const run = Math.random().toString(36).slice(2, 7);
const once = { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 };

let cluster: TestCluster;
let admin: KubeClient;
let stack: LocalStack | undefined;
let inTree: boolean;

/** A policy that judges nothing (no binding): only whose it is matters here. */
const inertPolicy = (name: string, labels: Record<string, string>) => ({
  apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name, labels },
  spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE'] }] }, validations: [{ expression: 'true' }] },
});

const write = (o: ReturnType<typeof inertPolicy>, fieldManager: string) =>
  admin.call({ method: 'PATCH', path: `${ADMISSION}/validatingadmissionpolicies/${o.metadata.name}`, query: { fieldManager, force: true }, contentType: 'application/apply-patch+yaml', body: o });

/** Policies and bindings carrying this label selector, as `Kind/name`. */
async function policies(labelSelector: string): Promise<string[]> {
  const found: string[] = [];
  for (const { kind, plural } of POLICY_KINDS) {
    const res = await admin.call<{ items: KubeObject[] }>({ method: 'GET', path: `${ADMISSION}/${plural}`, query: { labelSelector } });
    if (!inTree) expect(res.status).toBe(404);
    found.push(...(res.data?.items ?? []).map((o) => `${kind}/${o.metadata.name}`));
  }
  return found.sort();
}

interface Hook { name: string; failurePolicy: string; matchConditions?: unknown[] }
async function hooks(plural: string, name: string): Promise<Hook[]> {
  const res = await admin.call<{ webhooks: Hook[] }>({ method: 'GET', path: `${ADMISSION}/${plural}/${name}` });
  return res.data?.webhooks ?? [];
}

beforeAll(async () => {
  cluster = await useTestCluster();
  admin = await clientFor(cluster.kubeconfigPath, 'admin');
  inTree = await inTreePolicies(admin);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  for (const name of [`other-run-${run}`, `installed-${run}`]) await admin?.call({ method: 'DELETE', path: `${ADMISSION}/validatingadmissionpolicies/${name}`, retry: once });
  admin?.close();
  await cluster?.stop();
}, 60_000);

describe('npm start: policies and registrations as furnish install writes them', () => {
  it('writes the variant the server supports, and its stop removes this run\'s policies only', async () => {
    stack = await startLocalStack({ kubeconfigPath: cluster.kubeconfigPath, context: 'admin', log: silentLogger, port: 0, relayPort: 0, webhookPort: 0 });
    expect(stack.inTreePolicies).toBe(inTree);
    const registration = await admin.call<KubeObject>({ method: 'GET', path: `${ADMISSION}/mutatingwebhookconfigurations/furnish-mutate-namespace` });
    const runId = registration.data!.metadata.labels![KEY.localRun]!;
    expect(runId).toBeTruthy();

    // The policies the stack's own settings render (organizations on, as npm start's default), labelled with this run.
    const settings = (await loadConfig({ FURNISH_ORGANIZATIONS: 'true', ...process.env, FURNISH_CLUSTER_ID: 'local', FURNISH_JWT_SECRET: 'x'.repeat(32) })).clusters[0]!;
    const expected = inTree ? installedPolicies(settings).map((o) => `${o.kind}/${o.metadata.name}`).sort() : [];
    expect(await policies(`${KEY.localRun}=${runId}`)).toEqual(expected);
    if (inTree) expect(expected).toContain('ValidatingAdmissionPolicy/furnish-namespace-marks');
    const mutate = await hooks('mutatingwebhookconfigurations', 'furnish-mutate-namespace');
    const validate = await hooks('validatingwebhookconfigurations', 'furnish-validate-namespace');
    expect(mutate[0]!.failurePolicy).toBe(inTree ? 'Ignore' : 'Fail');
    expect(validate[0]!.failurePolicy).toBe('Fail');
    expect(validate[0]!.matchConditions === undefined).toBe(!inTree);

    // Written meanwhile: another run's (its label, npm start's field manager) and an install's.
    if (inTree) {
      expect((await write(inertPolicy(`other-run-${run}`, { [PART_OF.key]: PART_OF.value, [KEY.localRun]: `other-${run}` }), LOCAL_FIELD_MANAGER)).ok).toBe(true);
      expect((await write(inertPolicy(`installed-${run}`, { [PART_OF.key]: PART_OF.value, [KEY.localRun]: runId }), INSTALL_FIELD_MANAGER)).ok).toBe(true);
    }
    await stack.stop();
    stack = undefined;
    // Stopped means no longer enforced: the server keeps a deleted policy for up to a second, and stop waits that out.
    expect(await enforcementProblem(admin, `after-stop-${run}`, { until: 0, lifted: true })).toBeUndefined();
    expect(await policies(`${KEY.localRun}=${runId}`)).toEqual(inTree ? [`ValidatingAdmissionPolicy/installed-${run}`] : []);
    expect(await policies(`${KEY.localRun}=other-${run}`)).toEqual(inTree ? [`ValidatingAdmissionPolicy/other-run-${run}`] : []);
    expect(await hooks('mutatingwebhookconfigurations', 'furnish-mutate-namespace')).toEqual([]);
  }, 120_000);

  it('the enforcement check leaves a namespace of its name that someone else made first alone: neither taken over nor deleted', async () => {
    const name = `taken-${run}`;
    const made = await admin.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { owner: 'someone-else' } } } });
    expect(made.ok).toBe(true);
    try {
      expect(await enforcementProblem(admin, name, { until: 0 })).toBe(`could not create namespace ${name} to check them: it already exists (someone else's: it was left alone); run again: each check picks a new name`);
      const after = await admin.call<KubeObject>({ method: 'GET', path: `/api/v1/namespaces/${name}` });
      expect(after.data?.metadata.uid).toBe(made.data!.metadata.uid);
      expect(after.data?.metadata.deletionTimestamp).toBeUndefined();
      expect(after.data?.metadata.annotations?.['furnish.dev/install-probe']).toBeUndefined();
    } finally {
      await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${name}`, retry: once });
    }
  }, 60_000);
});
