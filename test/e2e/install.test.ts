// End to end: `furnish install` and `furnish uninstall` (the CLI, in process) against a test
// cluster that calls the webhook functions as kube-apiserver does. The functions run in this
// process over HTTPS on 127.0.0.1 (a CA of the test's own in the registrations' caBundle); on
// kube-sim the cluster authenticates with the bearer JWT of its admission kubeconfig, on a real
// kube-apiserver (FURNISH_TEST_KUBECONFIG) with the path credential the installer puts in each URL.
// The functions are killed in the middle of an install: namespace writes must keep working; once
// installed, they are killed again: every probed security webhook, protect-objects' included,
// refuses (fail closed). Every
// test ends with the registrations removed, even when it failed, so a real cluster is never left
// refusing namespace writes.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createKubeClient, type KubeClient } from '../../shared/kube/client.ts';
import { runCli } from '../../shared/cli/command.ts';
import { COMMANDS } from '../../shared/cli/commands.ts';
import { WEBHOOKS } from '../../shared/config/types.ts';
import { webhookRegistrations } from '../../shared/webhooks/registration.ts';
import { failurePolicies } from '../../shared/install/plan.ts';
import { gateServer } from '../../shared/webhooks/body-gate.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { FIELD_MANAGER, KEY } from '../../shared/keys.ts';
import { applySetId, applySetParent } from '../../shared/render/applyset.ts';
import { createCertificateAuthority } from '../support/kube-sim/pki.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { mintToken, testEnv, TEST_CLUSTER } from '../support/fixtures.ts';

const run = Math.random().toString(36).slice(2, 7);
const PATH_CREDENTIAL = `e2e-install-credential-${run}-0123456789abcdefghij`;
const RELAY_IMAGE = `registry.example/furnish/relay@sha256:${'ab'.repeat(32)}`;
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
const NO_RETRY = { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 };

let cluster: TestCluster;
let admin: KubeClient;
let tmp: string;
let caFile: string;
let port = 0;
let server: Server | undefined;
let tls: { cert: string; key: string };
const listeners = new Map<string, RequestListener>();

/** Functions that answer every review with a refusal, as one without API access does ("retry"). */
const refusing = new Set<string>();

function refuse(req: IncomingMessage, res: ServerResponse): void {
  let body = '';
  req.on('data', (c: Buffer) => (body += c));
  req.on('end', () => {
    const uid = (JSON.parse(body) as { request: { uid: string } }).request.uid;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: false, status: { code: 503, message: 'could not list NamespaceInitializationConfigurations (no api configured); retry' } } }));
  });
}

function route(req: IncomingMessage, res: ServerResponse): void {
  const name = (req.url ?? '').split('?')[0]!.split('/')[1] ?? '';
  if (refusing.has(name)) return refuse(req, res);
  const listener = listeners.get(name);
  if (!listener) return void res.writeHead(404).end();
  listener(req, res);
}

/** The functions, served at the same host:port each time (the registrations and the admission kubeconfig name it). */
async function startFunctions(): Promise<void> {
  server = gateServer(createServer(tls, route));
  await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
}

/** As a crashed deployment: open connections cut, nothing listening. */
function killFunctions(): void {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
}

async function furnish(args: string[], onLog?: (line: string) => void): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(COMMANDS, args, { stdout: (t) => (stdout += t), stderr: (t) => { stderr += t; onLog?.(t); }, env: process.env, readStdin: () => '' });
  return { code, stdout, stderr };
}

const installArgs = (timeoutSeconds: number) => [
  'install', '--kubeconfig', cluster.kubeconfigPath, '--context', 'admin',
  '--url', `https://127.0.0.1:${port}`, '--ca-bundle', caFile, '--cluster', TEST_CLUSTER, '--project', 'furnish-e2e',
  '--relay-image', RELAY_IMAGE, '--timeout', String(timeoutSeconds),
  // kube-sim authenticates with the JWT of its admission kubeconfig; a real API server only with the URL.
  ...(cluster.isSimulated ? [] : ['--credential-env', 'FURNISH_E2E_PATH_CREDENTIAL']),
];

const REGISTRATIONS = webhookRegistrations({ functionsUrl: 'https://unused' }) as KubeObject[];
const registrationPath = (c: KubeObject) => `${ADMISSION}/${c.kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations'}/${c.metadata.name}`;

/** failurePolicy of every registered webhook, by webhook name (absent: not registered). */
async function registeredPolicies(): Promise<Record<string, string>> {
  const policies: Record<string, string> = {};
  for (const c of REGISTRATIONS) {
    const res = await admin.call<{ webhooks: { name: string; failurePolicy: string }[] }>({ method: 'GET', path: registrationPath(c) });
    for (const w of res.ok ? res.data!.webhooks : []) policies[w.name] = w.failurePolicy;
  }
  return policies;
}

async function removeRegistrations(): Promise<void> {
  for (const c of REGISTRATIONS) await admin.call({ method: 'DELETE', path: registrationPath(c), retry: NO_RETRY });
}

/** A real namespace create (and delete) as cluster-admin: what a lockout would refuse. */
async function createNamespace(name: string): Promise<{ status: number; error?: string; annotations?: Record<string, string> }> {
  const res = await admin.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, retry: NO_RETRY });
  if (res.ok) await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${name}` });
  return { status: res.status, error: res.error, annotations: res.data?.metadata.annotations };
}

const OBJECTS_NAMESPACE = `install-objects-${run}`;
const FURNISHED = `/api/v1/namespaces/${OBJECTS_NAMESPACE}/configmaps/furnished`;

/**
 * An object that is Furnish's (a member of its namespace's ApplySet, the label owned by field
 * manager furnish), written before any registration exists: as the reconciler would have.
 */
async function furnishObject(): Promise<void> {
  expect((await admin.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OBJECTS_NAMESPACE } } })).status).toBe(201);
  const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'furnished', namespace: OBJECTS_NAMESPACE, labels: { [KEY.applySetPartOf]: applySetId(OBJECTS_NAMESPACE) } }, data: { a: 'b' } };
  expect((await admin.call({ method: 'POST', path: `/api/v1/namespaces/${OBJECTS_NAMESPACE}/configmaps`, query: { fieldManager: FIELD_MANAGER }, body: object })).status).toBe(201);
}

/** Cluster-admin taking that object out of Furnish's ApplySet, so that pruning would never delete it (issue 25, finding 8). */
async function detach(): Promise<{ status: number; error?: string }> {
  const res = await admin.call({ method: 'PATCH', path: FURNISHED, contentType: 'application/merge-patch+json', body: { metadata: { labels: { [KEY.applySetPartOf]: null } } }, retry: NO_RETRY });
  return { status: res.status, error: res.error };
}

const FURNISH_NAMESPACE = '/api/v1/namespaces/furnish-system';
let hadFurnishNamespace = false;

/**
 * Uninstall deletes furnish-system; on a real cluster shared by the suites that follow, it is
 * put back as it was once the namespace controller has finished with it.
 */
async function restoreFurnishNamespace(): Promise<void> {
  for (let i = 0; i < 120 && (await admin.call({ method: 'GET', path: FURNISH_NAMESPACE })).ok; i++) await new Promise((r) => setTimeout(r, 500));
  if (!hadFurnishNamespace) return;
  const ns = parse(readFileSync(join(import.meta.dirname, '..', '..', 'infra', 'namespace.yaml'), 'utf8')) as KubeObject;
  await admin.call({ method: 'POST', path: '/api/v1/namespaces', body: ns });
}

describe('furnish install / uninstall (cannot lock anyone out)', () => {
  beforeAll(async () => {
    const ca = createCertificateAuthority('furnish-install-e2e-ca');
    const cert = ca.issue(['127.0.0.1', 'localhost']);
    tls = { cert: cert.certPem, key: cert.keyPem };
    tmp = mkdtempSync(join(tmpdir(), 'furnish-install-e2e-'));
    caFile = join(tmp, 'ca.pem');
    writeFileSync(caFile, ca.certPem);
    await startFunctions();
    cluster = await useTestCluster({ admissionKubeconfig: { users: [{ name: `127.0.0.1:${port}`, user: { token: await mintToken() } }] } });
    admin = createKubeClient(await connect({ kubeconfigPath: cluster.kubeconfigPath, context: 'admin' }));
    Object.assign(process.env, testEnv({
      FURNISH_PATH_CREDENTIALS: PATH_CREDENTIAL,
      FURNISH_E2E_PATH_CREDENTIAL: PATH_CREDENTIAL,
      FURNISH_API_SERVER: cluster.server,
      FURNISH_API_CA: cluster.caPem,
      FURNISH_API_TOKEN: cluster.users.admin!.token,
    }));
    for (const name of WEBHOOKS) {
      await import(`../../functions/${name}/index.ts`);
      listeners.set(name, getTestServer(name).listeners('request')[0] as RequestListener);
    }
    // Whatever an earlier, interrupted run left (a real cluster keeps it).
    await removeRegistrations();
    hadFurnishNamespace = (await admin.call({ method: 'GET', path: FURNISH_NAMESPACE })).ok;
  }, 60_000);

  afterAll(async () => {
    if (admin) {
      await removeRegistrations();
      await restoreFurnishNamespace();
      admin.close();
    }
    killFunctions();
    await cluster?.stop();
    rmSync(tmp, { recursive: true, force: true });
  }, 90_000);

  it('functions killed mid-install: the install fails naming them, every registration stays Ignore, namespaces can still be created', async () => {
    try {
      const result = await furnish(installArgs(4), (line) => {
        if (line.includes('webhooks registered with failurePolicy Ignore')) killFunctions();
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('did not answer as expected within 4 s, so every webhook stays registered with failurePolicy Ignore');
      expect(result.stderr).toContain('mutate-namespace: expected the dry run admitted with annotation furnish.dev/creator set');
      const policies = await registeredPolicies();
      expect(Object.keys(policies).sort()).toEqual(Object.keys(failurePolicies(REGISTRATIONS)).sort());
      expect(new Set(Object.values(policies))).toEqual(new Set(['Ignore']));
      expect((await createNamespace(`after-kill-${run}`)).status).toBe(201);
    } finally {
      await removeRegistrations();
      if (!server) await startFunctions();
    }
  }, 120_000);

  it('a function that answers with a refusal (no API access yet): the install fails and removes every registration, namespaces can be created', async () => {
    refusing.add('mutate-namespace');
    try {
      const result = await furnish(installArgs(3));
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('a webhook that answers with a refusal refuses whatever its failurePolicy, so every registration was removed again');
      expect(await registeredPolicies()).toEqual({});
      expect((await createNamespace(`after-refusal-${run}`)).status).toBe(201);
    } finally {
      refusing.clear();
      await removeRegistrations();
    }
  }, 120_000);

  it('functions answering: installs everything, then the security webhooks fail closed; uninstall removes the registrations first', async () => {
    try {
      await furnishObject();
      const result = await furnish(installArgs(60));
      expect(result.stderr).not.toContain('"severity":"ERROR"');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('every function answered, and the security webhooks now fail closed');
      expect(result.stdout).toContain('protect-scale stays failurePolicy Ignore (not enforced while its function does not answer): no probe, as it refuses only a scale');
      const answered = result.stderr.split('\n').filter((l) => l.includes('"message":"function answers"')).map((l) => (JSON.parse(l) as { webhook: string }).webhook);
      expect(answered.sort()).toEqual([...WEBHOOKS.filter((w) => w !== 'mutate-pod'), 'protect-applyset'].sort());
      // Per webhook: protect-objects and protect-applyset were probed and fail closed; protect-scale, of the same configuration, was not.
      const policies = await registeredPolicies();
      expect(policies).toEqual({
        'mutate-namespace.furnish.dev': 'Fail', 'validate-namespace.furnish.dev': 'Fail', 'validate-template.furnish.dev': 'Fail',
        'guard-initializing.furnish.dev': 'Fail', 'validate-organization.furnish.dev': 'Fail', 'mutate-lnamespace.furnish.dev': 'Fail',
        'mutate-pod.furnish.dev': 'Ignore', 'protect-objects.furnish.dev': 'Fail', 'protect-applyset.furnish.dev': 'Fail', 'protect-scale.furnish.dev': 'Ignore',
      });
      // Answering: the function itself refuses detaching Furnish's object.
      const refused = await detach();
      expect(refused.error).toContain('admission webhook "protect-objects.furnish.dev" denied the request: user "admin" may not update ConfigMap "furnished"');
      expect(refused.status).toBe(403);
      const relay = await admin.call<{ spec: { template: { spec: { containers: { image: string; env: { name: string; value: string }[] }[] } } } }>({ method: 'GET', path: '/apis/apps/v1/namespaces/furnish-system/deployments/furnish-relay' });
      expect(relay.data?.spec.template.spec.containers[0]).toMatchObject({ image: RELAY_IMAGE, env: expect.arrayContaining([{ name: 'FURNISH_CLUSTER_ID', value: TEST_CLUSTER }]) });
      // The probe identity is gone again.
      expect((await admin.call({ method: 'GET', path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/furnish-install-probe' })).status).toBe(404);
      // Again, over its own fail-closed registrations (an upgrade): Ignore first, probed, closed again.
      // This time from Terraform's install_vars (flags that agree with it are accepted): its topics reach the relay.
      const vars = join(mkdtempSync(join(tmpdir(), 'furnish-e2e-vars-')), 'vars.json');
      const topics = { FURNISH_TOPIC_NAMESPACES: 'e2e-namespaces', FURNISH_TOPIC_TEMPLATES: 'e2e-templates', FURNISH_TOPIC_LNAMESPACES: 'e2e-lnamespaces', FURNISH_TOPIC_BILLING: 'e2e-billing' };
      writeFileSync(vars, JSON.stringify({ ...topics, FURNISH_CLUSTER_ID: TEST_CLUSTER, FURNISH_PROJECT: 'furnish-e2e', FURNISH_FUNCTIONS_URL: `https://127.0.0.1:${port}` }));
      const again = await furnish([...installArgs(60), '--vars', vars]);
      expect(again.code).toBe(0);
      expect(again.stderr.indexOf('failurePolicy Ignore')).toBeLessThan(again.stderr.indexOf('"kind":"Namespace"'));
      expect(await registeredPolicies()).toEqual(policies);
      const upgraded = await admin.call<{ spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } } }>({ method: 'GET', path: '/apis/apps/v1/namespaces/furnish-system/deployments/furnish-relay' });
      expect(upgraded.data?.spec.template.spec.containers[0]?.env).toEqual(expect.arrayContaining(Object.entries(topics).map(([name, value]) => ({ name, value }))));
      // Enforced: a namespace gets its creator; with the functions down, namespace writes are refused (closed).
      expect((await createNamespace(`installed-${run}`)).annotations?.['furnish.dev/creator']).toBeDefined();
      killFunctions();
      const closed = await createNamespace(`closed-${run}`);
      expect(closed.status).toBeGreaterThanOrEqual(500);
      expect(closed.error).toContain('failed calling webhook "mutate-namespace.furnish.dev"');
      // Issue 25 findings 8 and 13 hold with the function down too: neither detaching Furnish's object nor forging its ApplySet parent gets through.
      const detached = await detach();
      expect(detached.status).toBeGreaterThanOrEqual(500);
      expect(detached.error).toContain('failed calling webhook "protect-objects.furnish.dev"');
      const parent = await admin.call({ method: 'POST', path: `/api/v1/namespaces/${OBJECTS_NAMESPACE}/configmaps`, body: applySetParent(OBJECTS_NAMESPACE, []), retry: NO_RETRY });
      expect(parent.status).toBeGreaterThanOrEqual(500);
      expect(parent.error).toContain('failed calling webhook "protect-applyset.furnish.dev"');

      const removed = await furnish(['uninstall', '--kubeconfig', cluster.kubeconfigPath, '--context', 'admin']);
      expect(removed.code).toBe(0);
      const deleted = removed.stderr.split('\n').filter((l) => l.includes('"message":"deleted"')).map((l) => (JSON.parse(l) as { kind: string }).kind);
      expect(deleted.slice(0, REGISTRATIONS.length).every((k) => k.endsWith('WebhookConfiguration'))).toBe(true);
      expect(await registeredPolicies()).toEqual({});
      expect((await createNamespace(`uninstalled-${run}`)).status).toBe(201);
      expect((await admin.call({ method: 'GET', path: '/apis/apps/v1/namespaces/furnish-system/deployments/furnish-relay' })).status).toBe(404);
      // CRDs (and every template in them) are kept unless --crds.
      expect((await admin.call({ method: 'GET', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/namespacetemplates.furnish.dev' })).status).toBe(200);
    } finally {
      await removeRegistrations();
      await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${OBJECTS_NAMESPACE}` });
      if (!server) await startFunctions();
    }
  }, 180_000);
});
