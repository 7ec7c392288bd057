// On GKE the functions reach a cluster with their own Google service accounts (issue 27, item 1):
// a reconciler and the webhooks' API client present the access token of their runtime's metadata
// server (a fake one here, through GCE_METADATA_HOST), the API server authenticates it through a
// token webhook (test/support/google-identity.ts: kube-sim's tokenWebhookConfigFile, or a real
// kube-apiserver started with --authentication-token-webhook-config-file) as the user
// `<account>@<project>.iam.gserviceaccount.com`, and RBAC is exactly what `furnish install`
// renders for those users (clusterObjects with FURNISH_RECONCILER_USER / FURNISH_WEBHOOK_USER from
// Terraform's install_vars). Without those User subjects the same identities are refused.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MESSAGE_VERSION, type ReconcileMessage } from '../../shared/bus/envelope.ts';
import { createMemoryBus } from '../../shared/bus/memory.ts';
import { loadConfig } from '../../shared/config/load.ts';
import { clusterObjects } from '../../shared/install/install.ts';
import { defaultTopicVars } from '../../shared/install/vars.ts';
import { applyObject } from '../../shared/kube/api.ts';
import { connect, createKubeClient, type KubeClient } from '../../shared/kube/client.ts';
import { ResourceResolver } from '../../shared/kube/resources.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { silentLogger } from '../../shared/log.ts';
import { KEY } from '../../shared/keys.ts';
import { reconcileConfig } from '../../shared/reconcile/config.ts';
import { createRuntime, type Runtime } from '../../shared/reconcile/runtime.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import { depsForCluster } from '../../shared/webhooks/cluster-deps.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { mintTestAccessToken, startFakeMetadataServer, startTokenAuthenticator, type FakeMetadataServer, type TokenAuthenticator } from '../support/google-identity.ts';
import { applyTemplate, clientFor, createNamespace, deleteTemplate, waitFor } from './helpers.ts';

const PROJECT = 'acme-prod';
const RECONCILER = `acme-reconciler@${PROJECT}.iam.gserviceaccount.com`;
const WEBHOOK = `acme-webhook@${PROJECT}.iam.gserviceaccount.com`;
const suffix = Math.random().toString(36).slice(2, 7);
const NS = `google-id-${suffix}`;
const TEMPLATE = `google-id-${suffix}`;
const DIGEST = `europe-docker.pkg.dev/acme-prod/furnish/relay@sha256:${'0f'.repeat(32)}`;

/** What Terraform's install_vars hands `furnish install --vars` for a GKE cluster (test/terraform/deployment.test.ts checks the output). */
const INSTALL_VARS = {
  ...defaultTopicVars(), FURNISH_CLUSTER_ID: 'prod', FURNISH_PROJECT: PROJECT, FURNISH_RELAY_SERVICE_ACCOUNT: `acme-relay@${PROJECT}.iam.gserviceaccount.com`,
  FURNISH_FUNCTIONS_URL: 'https://europe-west1-acme-prod.cloudfunctions.net', FURNISH_CA_BUNDLE: '', FURNISH_RELAY_IMAGE: DIGEST,
  FURNISH_RECONCILER_USER: RECONCILER, FURNISH_WEBHOOK_USER: WEBHOOK,
};
const MESSAGE: ReconcileMessage = { v: MESSAGE_VERSION, cluster: 'prod', kind: 'Namespace', name: NS, type: 'ADDED' };
const IDENTITY_KINDS = new Set(['Namespace', 'CustomResourceDefinition', 'ServiceAccount', 'ClusterRole', 'Role', 'ClusterRoleBinding', 'RoleBinding']);

let cluster: TestCluster;
let authn: TokenAuthenticator | undefined;
let authnDir: string | undefined;
let admin: KubeClient;
let reconcilerMetadata: FakeMetadataServer;
let webhookMetadata: FakeMetadataServer;
const savedMetadataHost = process.env.GCE_METADATA_HOST;

/** infra/'s namespace, CRDs, identities and RBAC as `furnish install` renders them from `vars` (the relay and registrations aside). */
async function installRbac(vars: Record<string, string>): Promise<void> {
  await applyAll(clusterObjects(vars).filter((x) => IDENTITY_KINDS.has(x.kind)));
}

/** As `furnish install` applies (its field manager). */
async function applyAll(objects: readonly KubeObject[]): Promise<void> {
  const resolver = new ResourceResolver(admin);
  for (const o of objects) {
    const res = await applyObject(admin, (await resolver.forObject(o.apiVersion, o.kind))!, o, { fieldManager: 'furnish-install' });
    if (!res.ok) throw new Error(`apply ${o.kind}/${o.metadata.name}: ${res.status} ${res.error}`);
  }
}

const bindingsOf = (vars: Record<string, string>): KubeObject[] => clusterObjects(vars).filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding');

/** A client that presents this Google identity's token, minted here (not through the functions' code). */
async function asGoogle(email: string, token = mintTestAccessToken(email)): Promise<KubeClient> {
  const conn = await connect({ kubeconfigYaml: JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'g',
    clusters: [{ name: 'c', cluster: { server: cluster.server, 'certificate-authority-data': Buffer.from(cluster.caPem).toString('base64') } }],
    users: [{ name: 'u', user: { token } }], contexts: [{ name: 'g', context: { cluster: 'c', user: 'u' } }],
  }) });
  return createKubeClient(conn, { userAgent: 'furnish-test' });
}

type Review = { status?: { userInfo?: { username?: string; groups?: string[] } } };

/** `kubectl auth whoami`: SelfSubjectReview, v1alpha1 on kube-apiserver 1.26, v1 on kube-sim (1.28's). */
async function whoami(kube: KubeClient) {
  const ask = (version: string) => kube.call<Review>({ method: 'POST', path: `/apis/authentication.k8s.io/${version}/selfsubjectreviews`, body: { apiVersion: `authentication.k8s.io/${version}`, kind: 'SelfSubjectReview' } });
  const alpha = await ask('v1alpha1');
  return alpha.status === 404 ? ask('v1') : alpha;
}

beforeAll(async () => {
  if (!process.env.FURNISH_TEST_KUBECONFIG) {
    authnDir = mkdtempSync(join(tmpdir(), 'furnish-google-authn-'));
    authn = await startTokenAuthenticator(authnDir);
  }
  cluster = await useTestCluster(authn ? { tokenWebhookConfigFile: authn.configFile } : {});
  admin = await clientFor(cluster.kubeconfigPath, cluster.isSimulated ? cluster.users.admin!.context : undefined);
  const probe = await asGoogle(RECONCILER);
  const review = await whoami(probe);
  probe.close();
  if (review.status === 401) {
    throw new Error(`the API server ${cluster.server} does not accept the test's Google access tokens: start its kube-apiserver with the token authenticator `
      + '(node test/support/google-identity.ts DIR PORT prints its config; EXTRA_APISERVER_FLAGS="--authentication-token-webhook-config-file=<config> --authentication-token-webhook-version=v1", as .ci/run does)');
  }
  reconcilerMetadata = await startFakeMetadataServer(RECONCILER);
  webhookMetadata = await startFakeMetadataServer(WEBHOOK);
  const template: NamespaceTemplate = {
    apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: TEMPLATE },
    spec: { namespaces: { labelSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'google-identity' }, data: { owner: '$(CREATOR)' } }] },
  } as NamespaceTemplate;
  // The ServiceAccount path first (what every other cluster gets): no Google user bound yet.
  await installRbac({ ...INSTALL_VARS, FURNISH_RECONCILER_USER: '', FURNISH_WEBHOOK_USER: '' });
  await waitFor('the NamespaceTemplate CRD served', async () => (await admin.call({ method: 'GET', path: '/apis/furnish.dev/v1alpha1/namespacetemplates' })).ok);
  await applyTemplate(admin, template);
  await createNamespace(admin, NS);
}, 120_000);

afterAll(async () => {
  if (admin) {
    // Leave the bindings as the ServiceAccount path has them, for the suites that follow on this cluster.
    await applyAll(bindingsOf({ ...INSTALL_VARS, FURNISH_RECONCILER_USER: '', FURNISH_WEBHOOK_USER: '' }));
    await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${NS}` });
    await deleteTemplate(admin, TEMPLATE);
    admin.close();
  }
  if (savedMetadataHost === undefined) delete process.env.GCE_METADATA_HOST;
  else process.env.GCE_METADATA_HOST = savedMetadataHost;
  await reconcilerMetadata?.stop();
  await webhookMetadata?.stop();
  await cluster?.stop();
  await authn?.stop();
  if (authnDir) rmSync(authnDir, { recursive: true, force: true });
});

describe('Google identities through the token authenticator', () => {
  it('authenticates a metadata-server token as the service account\'s e-mail, and refuses an altered or expired one', async () => {
    const tokenIs = async (token: string) => {
      const kube = await asGoogle(RECONCILER, token);
      try {
        return await whoami(kube);
      } finally {
        kube.close();
      }
    };
    const good = await tokenIs(mintTestAccessToken(RECONCILER));
    expect(good.data?.status?.userInfo).toMatchObject({ username: RECONCILER, groups: expect.arrayContaining(['system:authenticated']) });
    const [head, payload, signature] = mintTestAccessToken(RECONCILER).split(/\.(?=[^.]+\.[^.]+$)|\.(?=[^.]+$)/);
    const altered = `${head}.${Buffer.from(JSON.stringify({ email: WEBHOOK, exp: 4e9 })).toString('base64url')}.${signature}`;
    expect(payload).toBeDefined();
    expect((await tokenIs(altered)).status).toBe(401);
    expect((await tokenIs(mintTestAccessToken(RECONCILER, -10))).status).toBe(401);
  });
});

describe('a reconciler configured with credential source google (FURNISH_CLUSTERS), GCE_METADATA_HOST at its fake metadata server', () => {
  let runtime: Runtime;
  beforeAll(() => {
    process.env.GCE_METADATA_HOST = reconcilerMetadata.host;
    const config = reconcileConfig({ FURNISH_PUSH_AUTH: 'off', FURNISH_CLUSTER_ID: 'prod', FURNISH_CLUSTERS: JSON.stringify({ prod: { google: { server: cluster.server, caPem: cluster.caPem } } }) });
    runtime = createRuntime({ config, log: silentLogger, bus: async () => createMemoryBus() });
  });
  afterAll(async () => runtime?.close());

  it('is refused while RBAC binds only the ServiceAccount, and furnishes the namespace once furnish install bound its e-mail', async () => {
    const refused = await runtime.namespace(MESSAGE);
    expect(refused.result).not.toBe('converged');
    const phase = async () => ((await admin.call<KubeObject>({ method: 'GET', path: `/api/v1/namespaces/${NS}` })).data?.metadata.labels ?? {})[KEY.phase];
    expect(await phase()).toBe('pending');

    await installRbac(INSTALL_VARS);
    // RBAC's authorizer cache on a real server: a few hundred milliseconds.
    const done = await waitFor('the reconcile to converge as the Google identity', async () => {
      const r = await runtime.namespace(MESSAGE);
      return r.result === 'converged' ? r : undefined;
    }, 30_000, 500);
    expect(done.result).toBe('converged');
    expect(await phase()).toBe('ready');
    const cm = await admin.call<{ data?: Record<string, string> }>({ method: 'GET', path: `/api/v1/namespaces/${NS}/configmaps/google-identity` });
    expect(cm.data?.data).toEqual({ owner: 'alice' });
    expect(reconcilerMetadata.issued).toBeGreaterThan(0);
    if (cluster.log) {
      const users = new Set(cluster.log.entries.filter((e) => e.namespace === NS && e.verb !== 'get' && e.userAgent !== 'furnish-test').map((e) => e.user));
      expect([...users]).toEqual([RECONCILER]);
    }
  }, 60_000);
});

describe('the webhooks\' API client configured with api.credential google, GCE_METADATA_HOST at its fake metadata server', () => {
  beforeAll(() => {
    process.env.GCE_METADATA_HOST = webhookMetadata.host;
  });

  it('reads templates and asks SubjectAccessReviews as the webhooks\' Google user, with the RBAC furnish install rendered for it', async () => {
    await installRbac(INSTALL_VARS);
    const config = await loadConfig({
      FURNISH_CLUSTER_ID: 'prod', FURNISH_JWT_SECRET: 'x'.repeat(32), FURNISH_PUBLIC_URL: INSTALL_VARS.FURNISH_FUNCTIONS_URL,
      FURNISH_API_SERVER: cluster.server, FURNISH_API_CA: cluster.caPem, FURNISH_API_CREDENTIAL: 'google',
    });
    const deps = depsForCluster(config.clusters[0]!);
    const templates = await waitFor('the templates, as the webhooks read them', async () => deps.templates.list(), 30_000, 500);
    expect(templates.map((t) => t.metadata.name)).toContain(TEMPLATE);
    const decision = await deps.authorizer.check({ user: { username: 'mallory', groups: ['system:authenticated'] }, verb: 'delete', group: '', resource: 'namespaces', name: NS });
    expect(decision).toMatchObject({ allowed: false });
    expect(decision.error).toBeUndefined();
    expect(webhookMetadata.issued).toBe(1);
    if (cluster.log) {
      expect(cluster.log.count({ resource: 'subjectaccessreviews', user: WEBHOOK })).toBeGreaterThan(0);
      expect(cluster.log.count({ resource: 'namespacetemplates', verb: 'list', user: WEBHOOK })).toBeGreaterThan(0);
    }
  }, 60_000);

  it('is refused without the User subject furnish install adds (the ServiceAccount binding alone grants the Google identity nothing)', async () => {
    const kube = await asGoogle(WEBHOOK);
    try {
      const bindings = bindingsOf({ ...INSTALL_VARS, FURNISH_RECONCILER_USER: '', FURNISH_WEBHOOK_USER: '' });
      expect(bindings.flatMap((b) => (b.subjects ?? []) as { kind: string }[]).some((s) => s.kind === 'User')).toBe(false);
      const withUsers = bindingsOf(INSTALL_VARS).flatMap((b) => ((b.subjects ?? []) as { kind: string; name: string }[]).filter((s) => s.kind === 'User').map((s) => s.name));
      expect(new Set(withUsers)).toEqual(new Set([RECONCILER, WEBHOOK]));
      await applyAll(bindings);
      await waitFor('the Google user to lose its access', async () => (await kube.call({ method: 'GET', path: '/apis/furnish.dev/v1alpha1/namespacetemplates' })).status === 403, 30_000, 500);
    } finally {
      kube.close();
    }
  }, 60_000);
});
