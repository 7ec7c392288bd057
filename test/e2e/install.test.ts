// End to end: `furnish install` and `furnish uninstall` (the CLI, in process) against a test
// cluster that calls the webhook functions as kube-apiserver does. The functions run in this
// process over HTTPS on 127.0.0.1 (a CA of the test's own in the registrations' caBundle); on
// kube-sim the cluster authenticates with the bearer JWT of its admission kubeconfig, on a real
// kube-apiserver (FURNISH_TEST_KUBECONFIG) with the path credential the installer puts in each URL.
// Functions that cannot be reached (DNS, TCP, TLS, HTTP 404) are named per function with the layer
// that failed, and nothing is written. The functions are killed in the middle of an install: it
// fails, undoes itself, and namespace writes keep working; a failed upgrade leaves the previous
// install as it was. Once installed, the functions are killed again: every probed security
// webhook, protect-objects' included, refuses (fail closed). On a server with in-tree policies
// (1.32, kube-sim) the install also writes Furnish's ValidatingAdmissionPolicies before any
// registration, registers the webhooks with their matchConditions and mutate-namespace failing
// open (an administrator's namespace create then works with the functions down), removes on an
// upgrade the policies it no longer renders, and its undo deletes or writes back the policies as
// it does every other object; on one without (1.26) it writes none. Every
// test ends with the registrations (and policies) removed, even when it failed, so a real cluster
// is never left refusing namespace writes.
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
import { clusterObjects, enforcementProblem } from '../../shared/install/install.ts';
import { installedPolicies, PART_OF, POLICY_KINDS } from '../../shared/install/policies.ts';
import { PROBE_KEY } from '../../shared/install/probes.ts';
import { INSTALL_FIELD_MANAGER } from '../../shared/keys.ts';
import { defaultPolicySettings } from '../../shared/config/types.ts';
import { inTreePolicies } from '../../shared/kube/features.ts';
import { keptIdentity } from '../../shared/install/plan.ts';
import { ResourceResolver, resourcePath } from '../../shared/kube/resources.ts';
import { createServer as createHttpServer } from 'node:http';
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
/** The server evaluates ValidatingAdmissionPolicies (shared/kube/features.ts). */
let inTree = false;
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
  if (refusing.has(name) && req.method === 'POST') return refuse(req, res);
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

const installArgs = (timeoutSeconds: number, url = `https://127.0.0.1:${port}`, relayImage = RELAY_IMAGE) => [
  'install', '--kubeconfig', cluster.kubeconfigPath, '--context', 'admin',
  '--url', url, '--ca-bundle', caFile, '--cluster', TEST_CLUSTER, '--project', 'furnish-e2e',
  '--relay-image', relayImage, '--timeout', String(timeoutSeconds),
  // kube-sim authenticates with the JWT of its admission kubeconfig; a real API server only with the URL.
  ...(cluster.isSimulated ? [] : ['--credential-env', 'FURNISH_E2E_PATH_CREDENTIAL']),
];

const REGISTRATIONS = webhookRegistrations({ functionsUrl: 'https://unused' }) as KubeObject[];

/** Every object install writes, by name (registrations and infra/), with its resourceVersion where it exists: the cluster's state as far as install is concerned. */
async function installState(): Promise<Record<string, string>> {
  const state: Record<string, string> = {};
  for (const o of [...REGISTRATIONS, ...clusterObjects()]) {
    const info = (await new ResourceResolver(admin).forObject(o.apiVersion, o.kind))!;
    const res = await admin.call<KubeObject>({ method: 'GET', path: resourcePath(info, o.metadata.namespace, o.metadata.name) });
    if (res.ok) state[`${o.kind}/${o.metadata.name}`] = res.data!.metadata.resourceVersion!;
  }
  return state;
}

/** What a failed install leaves beside what was there: the identities it created (plan.ts keptIdentity). */
const afterUndo = (before: Record<string, string>) => [...new Set([...Object.keys(before), ...clusterObjects().filter(keptIdentity).map((o) => `${o.kind}/${o.metadata.name}`)])].sort();

/** The relay's image, or undefined when there is no relay. */
async function relayImageNow(): Promise<string | undefined> {
  const relay = await admin.call<{ spec: { template: { spec: { containers: { image: string }[] } } } }>({ method: 'GET', path: '/apis/apps/v1/namespaces/furnish-system/deployments/furnish-relay' });
  return relay.ok ? relay.data!.spec.template.spec.containers[0]!.image : undefined;
}
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

/** Furnish's policies and bindings an install wrote (its label, not a local run's), as `Kind/name`; none where the server has no such API. */
async function installPolicies(): Promise<string[]> {
  const found: string[] = [];
  for (const { kind, plural } of POLICY_KINDS) {
    const res = await admin.call<{ items: KubeObject[] }>({ method: 'GET', path: `${ADMISSION}/${plural}`, query: { labelSelector: `${PART_OF.key}=${PART_OF.value},!${KEY.localRun}` } });
    found.push(...(res.ok ? res.data!.items : []).map((o) => `${kind}/${o.metadata.name}`));
  }
  return found.sort();
}

/** What `furnish install` writes on this server with these settings, as `Kind/name`. */
const expectedPolicies = (organizations = false) => (inTree ? installedPolicies({ ...defaultPolicySettings(), organizations: { enabled: organizations } }).map((o) => `${o.kind}/${o.metadata.name}`).sort() : []);

async function removeRegistrations(): Promise<void> {
  for (const c of REGISTRATIONS) await admin.call({ method: 'DELETE', path: registrationPath(c), retry: NO_RETRY });
  // The policies after the registrations they back up, bindings first.
  for (const name of (await installPolicies()).reverse()) {
    const [kind, object] = name.split('/');
    await admin.call({ method: 'DELETE', path: `${ADMISSION}/${POLICY_KINDS.find((k) => k.kind === kind)!.plural}/${object}`, retry: NO_RETRY });
  }
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

/** Once uninstall's deletion of furnish-system has finished (a real namespace controller takes a while). */
async function furnishNamespaceGone(): Promise<void> {
  for (let i = 0; i < 120 && (await admin.call({ method: 'GET', path: FURNISH_NAMESPACE })).ok; i++) await new Promise((r) => setTimeout(r, 500));
}

/**
 * Uninstall deletes furnish-system; on a real cluster shared by the suites that follow, it is
 * put back as it was once the namespace controller has finished with it.
 */
async function restoreFurnishNamespace(): Promise<void> {
  await furnishNamespaceGone();
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
    inTree = await inTreePolicies(admin);
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

  /** A port nothing listens on (a server's, closed again). */
  async function closedPort(): Promise<number> {
    const gone = createHttpServer();
    await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
    const p = (gone.address() as AddressInfo).port;
    await new Promise((r) => gone.close(r));
    return p;
  }

  it.each([
    ['DNS', async () => ({ url: 'https://nonexistent.invalid', problem: /^ {2}- mutate-namespace: DNS: nonexistent\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)/m })],
    ['TCP', async () => {
      const closed = await closedPort();
      return { url: `https://127.0.0.1:${closed}`, problem: new RegExp(`^ {2}- mutate-namespace: TCP: no connection to 127\\.0\\.0\\.1:${closed} \\(ECONNREFUSED`, 'm') };
    }],
    ['HTTP', async () => ({ url: `https://127.0.0.1:${port}/not-furnish`, problem: new RegExp(`^ {2}- mutate-namespace: HTTP 404 from GET https://127\\.0\\.0\\.1:${port}/not-furnish/mutate-namespace/healthz: no function at this URL`, 'm') })],
  ])('a functions URL that cannot be reached (%s): exit 1, each function named with the layer that failed, nothing written', async (_layer, setup) => {
    const { url, problem } = await setup();
    const before = await installState();
    const result = await furnish(installArgs(10, url));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`furnish install: ${WEBHOOKS.length} functions of ${WEBHOOKS.length} cannot be reached from this machine, so nothing was written to the cluster:`);
    expect(result.stderr).toMatch(problem);
    for (const name of WEBHOOKS) expect(result.stderr).toContain(`\n  - ${name}: `);
    // Progress is text, one line per step; no JSON.
    expect(result.stderr).toContain('error: function unreachable: mutate-namespace (url ');
    expect(result.stderr).not.toContain('"severity"');
    expect(await installState()).toEqual(before);
  }, 60_000);

  it('TLS: without the CA bundle of the functions\' certificate, each function is named as a TLS failure; -o json gives JSON lines', async () => {
    const before = await installState();
    const args = installArgs(10);
    args.splice(args.indexOf('--ca-bundle'), 2);
    const result = await furnish([...args, '-o', 'json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`  - validate-template: TLS: the handshake with 127.0.0.1:${port} failed (`);
    expect(result.stderr).toContain('checked against the public CAs (no CA bundle given)');
    const lines = result.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { message: string; function?: string; layer?: string });
    expect(lines.filter((l) => l.message === 'function unreachable').map((l) => [l.function, l.layer]).sort()).toEqual([...WEBHOOKS].sort().map((w) => [w, 'tls']));
    expect(JSON.parse(result.stdout)).toMatchObject({ installed: false, error: expect.stringContaining('cannot be reached from this machine') });
    expect(await installState()).toEqual(before);
  }, 60_000);

  it('functions killed mid-install: the install fails naming them, undoes itself (no registration, no relay), namespaces can still be created', async () => {
    const before = await installState();
    try {
      const result = await furnish(installArgs(4), (line) => {
        if (line.includes('webhooks registered with failurePolicy Ignore')) killFunctions();
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('did not answer the cluster\'s probes as expected within 4 s:');
      expect(result.stderr).toContain('mutate-namespace: expected the dry run admitted with annotation furnish.dev/creator set');
      expect(result.stderr).toContain('The install was undone:');
      expect(result.stderr).toMatch(/deleted what it had created \(\d+\): .*Deployment furnish-system\/furnish-relay/);
      // The identities it created (none on a cluster that already had them) stay for a token minted meanwhile.
      if (!('ServiceAccount/furnish-webhook' in before)) expect(result.stderr).toMatch(/kept the identities it created \(\d+\), which grant nothing without the RBAC it deleted: .*ServiceAccount/);
      expect(await registeredPolicies()).toEqual({});
      // In-tree: it had written its policies before the registrations; the undo deleted them.
      if (inTree) expect(result.stderr).toMatch(/deleted what it had created \(\d+\): .*\d+ × ValidatingAdmissionPolicy/);
      expect(await installPolicies()).toEqual([]);
      expect(Object.keys(await installState()).sort()).toEqual(afterUndo(before));
      expect((await createNamespace(`after-kill-${run}`)).status).toBe(201);
    } finally {
      await removeRegistrations();
      if (!server) await startFunctions();
    }
  }, 120_000);

  it('interrupted (SIGINT) while applying: it stops, undoes what it wrote, exit 1', async () => {
    const before = await installState();
    let interrupted = false;
    try {
      const result = await furnish(installArgs(30), (line) => {
        if (!interrupted && line.startsWith('applied ClusterRole ')) {
          interrupted = true;
          process.emit('SIGINT', 'SIGINT');
        }
      });
      expect(interrupted).toBe(true);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('warning: interrupted: undoing what this install wrote');
      expect(result.stderr).toContain('furnish install: interrupted (SIGINT) before it was done\nThe install was undone:');
      expect(result.stderr).not.toContain('applied Deployment furnish-system/furnish-relay');
      expect(Object.keys(await installState()).sort()).toEqual(afterUndo(before));
      expect(process.listeners('SIGINT')).toHaveLength(0);
    } finally {
      await removeRegistrations();
    }
  }, 120_000);

  it('a function that answers with a refusal (no API access yet): the install fails and removes every registration, namespaces can be created', async () => {
    refusing.add('mutate-namespace');
    try {
      const result = await furnish(installArgs(3));
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('mutate-namespace: expected the dry run admitted with annotation furnish.dev/creator set, got HTTP ');
      expect(result.stderr).toContain('The install was undone:');
      expect(await registeredPolicies()).toEqual({});
      expect((await createNamespace(`after-refusal-${run}`)).status).toBe(201);
    } finally {
      refusing.clear();
      await removeRegistrations();
    }
  }, 120_000);

  it('a CRD the failed install created that holds objects by the time it undoes is kept, and said so', async () => {
    const crd = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/namespacetemplates.furnish.dev';
    const templates = '/apis/furnish.dev/v1alpha1/namespacetemplates';
    const template = {
      apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: `install-kept-${run}` },
      spec: { namespaces: { labelSelector: { matchLabels: { 'install-kept': run } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept' }, data: { a: 'b' } }] },
    };
    // The install must be the one creating the CRD (a cluster shared with other suites may have it).
    await admin.call({ method: 'DELETE', path: crd });
    for (let i = 0; i < 120 && (await admin.call({ method: 'GET', path: crd })).ok; i++) await new Promise((r) => setTimeout(r, 500));
    refusing.add('mutate-namespace');
    let created: Promise<number> | undefined;
    try {
      const result = await furnish(installArgs(5), (line) => {
        if (!created && line.includes('webhooks registered with failurePolicy Ignore')) created = admin.call({ method: 'POST', path: templates, body: template }).then((r) => r.status);
      });
      expect(await created).toBe(201);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('The install was undone, except as said below:');
      expect(result.stderr).toContain('  - kept CustomResourceDefinition namespacetemplates.furnish.dev (it holds objects now): furnish uninstall --crds removes it');
      expect((await admin.call({ method: 'GET', path: `${templates}/${template.metadata.name}` })).status).toBe(200);
      expect(await registeredPolicies()).toEqual({});
    } finally {
      refusing.clear();
      await admin.call({ method: 'DELETE', path: `${templates}/${template.metadata.name}` });
      await removeRegistrations();
    }
  }, 120_000);

  it('functions answering: installs everything, then the security webhooks fail closed; uninstall removes the registrations first', async () => {
    try {
      await furnishObject();
      const result = await furnish([...installArgs(60), '-o', 'json']);
      expect(result.stderr).not.toContain('"severity":"ERROR"');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ installed: true, inTreePolicies: inTree, failOpen: expect.arrayContaining([expect.objectContaining({ webhook: 'protect-scale' })]) });
      // In-tree: the policies, each named in the progress, written before any registration.
      expect(await installPolicies()).toEqual(expectedPolicies());
      const progress = result.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { message: string; kind?: string });
      const firstRegistration = progress.findIndex((l) => l.message.startsWith('webhooks registered with failurePolicy Ignore'));
      const applied = progress.map((l, i) => [l, i] as const).filter(([l]) => l.message === 'applied' && l.kind?.startsWith('ValidatingAdmissionPolicy'));
      expect(applied.map(([l]) => l.kind).length).toBe(expectedPolicies().length);
      expect(applied.every(([, i]) => i < firstRegistration)).toBe(true);
      const answered = result.stderr.split('\n').filter((l) => l.includes('"message":"function answers"')).map((l) => (JSON.parse(l) as { webhook: string }).webhook);
      expect(answered.sort()).toEqual([...WEBHOOKS.filter((w) => w !== 'mutate-pod'), 'protect-applyset'].sort());
      // Per webhook: protect-objects and protect-applyset were probed and fail closed; protect-scale, of the same configuration, was not.
      const policies = await registeredPolicies();
      expect(policies).toEqual({
        // In-tree, mutate-namespace fails open: the policies require what it records.
        'mutate-namespace.furnish.dev': inTree ? 'Ignore' : 'Fail', 'validate-namespace.furnish.dev': 'Fail', 'validate-template.furnish.dev': 'Fail',
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
      expect(again.stdout).toContain('every function answered, and the security webhooks now fail closed');
      expect(again.stdout).toContain('protect-scale stays failurePolicy Ignore (not enforced while its function does not answer): no probe, as it refuses only a scale');
      expect(again.stderr.indexOf('failurePolicy Ignore')).toBeLessThan(again.stderr.indexOf('applied Namespace furnish-system'));
      expect(await registeredPolicies()).toEqual(policies);
      const upgraded = await admin.call<{ spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } } }>({ method: 'GET', path: '/apis/apps/v1/namespaces/furnish-system/deployments/furnish-relay' });
      expect(upgraded.data?.spec.template.spec.containers[0]?.env).toEqual(expect.arrayContaining(Object.entries(topics).map(([name, value]) => ({ name, value }))));
      // Enforced: a namespace gets its creator; with the functions down, namespace writes are refused
      // (closed), but where the policies hold what mutate-namespace records: there the administrator's
      // namespace is created, unmarked (docs/operate/enforcement.md).
      expect((await createNamespace(`installed-${run}`)).annotations?.['furnish.dev/creator']).toBeDefined();
      killFunctions();
      const closed = await createNamespace(`closed-${run}`);
      if (inTree) {
        expect([closed.status, closed.error]).toEqual([201, undefined]);
        expect(closed.annotations?.['furnish.dev/creator']).toBeUndefined();
      } else {
        expect(closed.status).toBeGreaterThanOrEqual(500);
        expect(closed.error).toContain('failed calling webhook "mutate-namespace.furnish.dev"');
      }
      // Issue 25 findings 8 and 13 hold with the function down too: neither detaching Furnish's object nor forging its ApplySet parent gets through.
      const detached = await detach();
      expect(detached.status).toBeGreaterThanOrEqual(500);
      expect(detached.error).toContain('failed calling webhook "protect-objects.furnish.dev"');
      const parent = await admin.call({ method: 'POST', path: `/api/v1/namespaces/${OBJECTS_NAMESPACE}/configmaps`, body: applySetParent(OBJECTS_NAMESPACE, []), retry: NO_RETRY });
      expect(parent.status).toBeGreaterThanOrEqual(500);
      expect(parent.error).toContain('failed calling webhook "protect-applyset.furnish.dev"');

      const removed = await furnish(['uninstall', '--kubeconfig', cluster.kubeconfigPath, '--context', 'admin', '-o', 'json']);
      expect(removed.code).toBe(0);
      const deleted = removed.stderr.split('\n').filter((l) => l.includes('"message":"deleted"')).map((l) => (JSON.parse(l) as { kind: string }).kind);
      expect(deleted.slice(0, REGISTRATIONS.length).every((k) => k.endsWith('WebhookConfiguration'))).toBe(true);
      expect(await registeredPolicies()).toEqual({});
      expect(await installPolicies()).toEqual([]);
      // Uninstalled means no longer enforced: the server keeps a deleted policy for up to a second, and uninstall waits that out.
      if (inTree) {
        expect(await enforcementProblem(admin, `lifted-${run}`, { until: 0, lifted: true })).toBeUndefined();
      }
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

  it('a failed upgrade leaves the previous install: its registrations (URL, fail closed) and its relay as they were', async () => {
    const nextImage = `registry.example/furnish/relay@sha256:${'cd'.repeat(32)}`;
    const urls = async () => {
      const found: string[] = [];
      for (const c of REGISTRATIONS) {
        const res = await admin.call<{ webhooks: { clientConfig: { url: string } }[] }>({ method: 'GET', path: registrationPath(c) });
        for (const w of res.ok ? res.data!.webhooks : []) found.push(w.clientConfig.url);
      }
      return found;
    };
    try {
      await furnishNamespaceGone();
      const first = await furnish(installArgs(60));
      expect(first.code).toBe(0);
      const policies = await registeredPolicies();
      expect(policies['validate-namespace.furnish.dev']).toBe('Fail');
      const previousPolicies = await installPolicies();
      expect(previousPolicies).toEqual(expectedPolicies());
      // An upgrade to functions the cluster cannot reach, with another relay image (--skip-reachability: no check from this machine first).
      const closed = await closedPort();
      const upgrade = await furnish([...installArgs(3, `https://127.0.0.1:${closed}`, nextImage), '--skip-reachability']);
      expect(upgrade.code).toBe(1);
      expect(upgrade.stderr).toContain('did not answer the cluster\'s probes as expected within 3 s:');
      expect(upgrade.stderr).toMatch(/wrote back as they were the \d+ objects that existed before it \(a previous install stays\): .*Deployment furnish-system\/furnish-relay/);
      expect(upgrade.stderr).not.toContain('NOT undone');
      expect(await registeredPolicies()).toEqual(policies);
      expect(await installPolicies()).toEqual(previousPolicies);
      expect((await urls()).every((u) => u.startsWith(`https://127.0.0.1:${port}/`))).toBe(true);
      expect(await relayImageNow()).toBe(RELAY_IMAGE);
      // Enforced again by the previous functions.
      expect((await createNamespace(`after-upgrade-${run}`)).annotations?.['furnish.dev/creator']).toBeDefined();
    } finally {
      await removeRegistrations();
      await furnish(['uninstall', '--kubeconfig', cluster.kubeconfigPath, '--context', 'admin']);
    }
  }, 180_000);

  it('in-tree policies follow the settings (--config): an upgrade removes one an earlier version wrote and this one no longer renders, and a failed one writes it back; none on a server without them', async () => {
    const config = (organizations: boolean) => {
      const file = join(tmp, `policy-${organizations}.yaml`);
      writeFileSync(file, `organizations:\n  enabled: ${organizations}\n`);
      return ['--config', file];
    };
    // What an earlier version of furnish install wrote and this one does not render (its label, its field manager).
    const retired = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: `furnish-retired-${run}`, labels: { [PART_OF.key]: PART_OF.value } }, spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE'] }] }, validations: [{ expression: 'true' }] } };
    const writeRetired = () => admin.call({ method: 'PATCH', path: `${ADMISSION}/validatingadmissionpolicies/${retired.metadata.name}`, query: { fieldManager: INSTALL_FIELD_MANAGER, force: 'true' }, body: retired, contentType: 'application/apply-patch+yaml' });
    try {
      await furnishNamespaceGone();
      const on = await furnish([...installArgs(60), ...config(true)]);
      expect(on.code).toBe(0);
      expect(await installPolicies()).toEqual(expectedPolicies(true));
      if (inTree) {
        expect(on.stderr).toContain(`in-tree policies rendered from --config ${config(true)[1]}`);
        expect(on.stderr).toContain('in-tree policies enforced (policy furnish-phase-and-ready)');
        // Written, and proven, before any registration.
        expect(on.stderr.indexOf('in-tree policies enforced')).toBeLessThan(on.stderr.indexOf('applied MutatingWebhookConfiguration'));
      }
      if (!inTree) {
        // 1.26: nothing of the in-tree variant, whatever the settings: today's registrations.
        expect(on.stdout).toContain('The API server has no ValidatingAdmissionPolicies');
        const hooks = await admin.call<{ webhooks: { matchConditions?: unknown }[] }>({ method: 'GET', path: `${ADMISSION}/validatingwebhookconfigurations/furnish-validate-namespace` });
        expect(hooks.data!.webhooks[0]!.matchConditions).toBeUndefined();
        return;
      }
      // The registrations carry the matchConditions rendered from the same settings: with
      // organizations, validate-namespace is also sent an unprivileged requester's annotation changes.
      const conditions = async () => JSON.stringify((await admin.call<{ webhooks: { matchConditions?: unknown }[] }>({ method: 'GET', path: `${ADMISSION}/validatingwebhookconfigurations/furnish-validate-namespace` })).data!.webhooks[0]!.matchConditions);
      const withOrganizations = await conditions();
      expect(withOrganizations).toContain('group:system:masters'.slice('group:'.length));
      // An upgrade removes the policy this version no longer renders.
      expect((await writeRetired()).ok).toBe(true);
      const off = await furnish([...installArgs(60), ...config(false)]);
      expect(off.code).toBe(0);
      expect(off.stderr).toContain(`deleted ValidatingAdmissionPolicy ${retired.metadata.name}`);
      expect(await installPolicies()).toEqual(expectedPolicies(false));
      expect(await conditions()).not.toEqual(withOrganizations);
      // Written again, then an upgrade fails (functions unreachable): it comes back as it was.
      expect((await writeRetired()).ok).toBe(true);
      const closed = await closedPort();
      const failed = await furnish([...installArgs(3, `https://127.0.0.1:${closed}`), '--skip-reachability', ...config(true)]);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain(`deleted ValidatingAdmissionPolicy ${retired.metadata.name}`);
      expect(failed.stderr).toMatch(/wrote back as they were the \d+ objects that existed before it .*ValidatingAdmissionPolicy/);
      expect(failed.stderr).not.toContain('NOT undone');
      expect(await installPolicies()).toEqual([...expectedPolicies(false), `ValidatingAdmissionPolicy/${retired.metadata.name}`].sort());
      expect(await conditions()).not.toEqual(withOrganizations);
    } finally {
      await admin.call({ method: 'DELETE', path: `${ADMISSION}/validatingadmissionpolicies/furnish-retired-${run}` });
      await removeRegistrations();
      await furnish(['uninstall', '--kubeconfig', cluster.kubeconfigPath, '--context', 'admin']);
    }
  }, 300_000);

  it('a failed upgrade whose functions now refuse: the previous registrations written back would lock the cluster, so they are removed, and it says so', async () => {
    try {
      await furnishNamespaceGone();
      expect((await furnish(installArgs(60))).code).toBe(0);
      refusing.add('mutate-namespace');
      const upgrade = await furnish(installArgs(3));
      expect(upgrade.code).toBe(1);
      expect(upgrade.stderr).toContain('wrote back as they were');
      expect(upgrade.stderr).toContain('then a namespace create was refused (HTTP ');
      expect(upgrade.stderr).toContain('so what was written back of admission was removed again (');
      expect(upgrade.stderr).toContain('nothing of Furnish is enforced until furnish install succeeds');
      expect(await registeredPolicies()).toEqual({});
      // The policies written back went with them: without mutate-namespace they refuse tenants' creates it would have marked.
      expect(await installPolicies()).toEqual([]);
      expect((await createNamespace(`after-refused-upgrade-${run}`)).status).toBe(201);
      // The rest of the previous install stays.
      expect(await relayImageNow()).toBe(RELAY_IMAGE);
    } finally {
      refusing.clear();
      await removeRegistrations();
      await furnish(['uninstall', '--kubeconfig', cluster.kubeconfigPath, '--context', 'admin']);
    }
  }, 180_000);

  it('uninstall deletes the namespaces an install killed while probing left, and none that only looks like one', async () => {
    const make = (name: string, annotated: boolean, fieldManager: string) => admin.call({ method: 'POST', path: '/api/v1/namespaces', query: { fieldManager },
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(annotated ? { annotations: { [PROBE_KEY]: 'true' } } : {}) } } });
    const left = [`install-probe-${run}`, `install-check-${run}`];
    const lookalikes = [`install-check-${run}a`, `install-check-${run}b`, `install-check-${run}-x`];
    for (const name of left) expect((await make(name, true, INSTALL_FIELD_MANAGER)).status).toBe(201);
    // Not the installer's: no PROBE_KEY, another field manager, a name the installer never picks.
    for (const [name, annotated, manager] of [[lookalikes[0]!, false, INSTALL_FIELD_MANAGER], [lookalikes[1]!, true, 'kubectl-create'], [lookalikes[2]!, true, INSTALL_FIELD_MANAGER]] as const) {
      expect((await make(name, annotated, manager)).status).toBe(201);
    }
    try {
      const removed = await furnish(['uninstall', '--kubeconfig', cluster.kubeconfigPath, '--context', 'admin', '-o', 'json']);
      expect(removed.code).toBe(0);
      const state = async (name: string) => {
        const res = await admin.call<KubeObject>({ method: 'GET', path: `/api/v1/namespaces/${name}` });
        return !res.ok ? 'gone' : res.data?.metadata.deletionTimestamp ? 'deleting' : 'kept';
      };
      for (const name of left) expect([name, await state(name)]).toEqual([name, expect.stringMatching(/^(gone|deleting)$/)]);
      for (const name of lookalikes) expect([name, await state(name)]).toEqual([name, 'kept']);
    } finally {
      for (const name of [...left, ...lookalikes]) await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${name}` });
      await restoreFurnishNamespace();
    }
  }, 120_000);
});
