// End to end: kubectl, as different users, against a test cluster that calls the four webhook
// functions exactly as kube-apiserver does (registered from infra/webhooks, HTTPS with a
// caBundle, admission.k8s.io/v1, the bearer JWT from the admission kubeconfig of
// infra/webhooks/apiserver). The functions run in this process, served by the functions
// framework; their SubjectAccessReviews and template look-ups go to the same cluster.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { requireTool } from '../support/tools.ts';
import { mintToken, testEnv } from '../support/fixtures.ts';
import { useTestCluster, webhookCallHint } from '../support/cluster.ts';
import { createCertificateAuthority } from '../support/kube-sim/pki.ts';
import { WEBHOOKS } from '../../shared/config/types.ts';

const root = join(import.meta.dirname, '..', '..');
type Cluster = Awaited<ReturnType<typeof useTestCluster>>;

let cluster: Cluster | undefined;
/** The functions at the host:port the admission kubeconfig names, and the same functions at one it does not name. */
const servers: Server[] = [];
const listeners = new Map<string, RequestListener>();
let tmp: string | undefined;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl as `user`, asynchronously: the webhooks answering kube-sim live in this process. */
function kubectl(user: string, args: string[], stdin?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', ['--kubeconfig', cluster!.kubeconfigPath, '--context', user, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

async function ok(user: string, args: string[], stdin?: string): Promise<string> {
  const run = await kubectl(user, args, stdin);
  if (run.code !== 0) throw new Error(`kubectl ${args.join(' ')} as ${user} failed: ${run.stderr}${webhookCallHint(cluster!, run.stderr)}`);
  return run.stdout;
}

async function namespace(name: string): Promise<{ metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } }> {
  return JSON.parse(await ok('admin', ['get', 'namespace', name, '-o', 'json']));
}

const yaml = (...docs: object[]) => docs.map((d) => stringify(d)).join('---\n');
const rbac = 'rbac.authorization.k8s.io/v1';

function clusterRole(name: string, rules: object[], subjects: object[]): string {
  return yaml(
    { apiVersion: rbac, kind: 'ClusterRole', metadata: { name }, rules },
    { apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects },
  );
}

/** The four functions, one path each, as they are served in the cloud; requests reach them untouched. */
function route(req: IncomingMessage, res: ServerResponse): void {
  const name = (req.url ?? '').split('?')[0]!.split('/')[1] ?? '';
  const listener = listeners.get(name);
  if (!listener) return void res.writeHead(404).end();
  listener(req, res);
}

/** Listens before the cluster starts: the admission kubeconfig names the functions' host:port. */
async function listenForWebhooks(): Promise<{ url: string; uncredentialedUrl: string; caBundle: string }> {
  const ca = createCertificateAuthority('furnish-e2e-ca');
  const cert = ca.issue(['127.0.0.1', 'localhost']);
  const urls: string[] = [];
  for (let i = 0; i < 2; i++) {
    const server = createServer({ cert: cert.certPem, key: cert.keyPem }, route);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    urls.push(`https://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }
  return { url: urls[0]!, uncredentialedUrl: urls[1]!, caBundle: Buffer.from(ca.certPem).toString('base64') };
}

async function loadFunctions(): Promise<void> {
  for (const name of WEBHOOKS) {
    await import(`../../functions/${name}/index.ts`);
    listeners.set(name, getTestServer(name).listeners('request')[0] as RequestListener);
  }
}

/** infra/webhooks/apiserver/webhook-kubeconfig.yaml, rendered for the functions' host:port and the cluster JWT. */
function admissionKubeconfig(functionsUrl: string, token: string): string {
  tmp = mkdtempSync(join(tmpdir(), 'furnish-e2e-'));
  const path = join(tmp, 'webhook-kubeconfig.yaml');
  writeFileSync(path, readFileSync(join(root, 'infra', 'webhooks', 'apiserver', 'webhook-kubeconfig.yaml'), 'utf8')
    .replaceAll('${FURNISH_FUNCTIONS_HOST}', new URL(functionsUrl).host)
    .replaceAll('${FURNISH_WEBHOOK_TOKEN}', token), { mode: 0o600 });
  return path;
}

async function registerWebhooks(url: string, caBundle: string): Promise<void> {
  const rendered = (await ok('admin', ['kustomize', join(root, 'infra', 'webhooks')]))
    .replaceAll('${FURNISH_FUNCTIONS_URL}', url)
    .replaceAll('${FURNISH_CA_BUNDLE}', caBundle);
  await ok('admin', ['apply', '--validate=false', '-f', '-'], rendered);
}

/** Set in beforeAll: without kubectl the suite says so loudly and (outside CI only) checks nothing. */
let kubectlInstalled = false;
let functions: { url: string; uncredentialedUrl: string; caBundle: string };

describe('admission end to end (kubectl as alice, bob, mallory, admin)', () => {
  beforeAll(async () => {
    kubectlInstalled = requireTool('kubectl', 'the end-to-end admission suite drives the cluster with kubectl');
    if (!kubectlInstalled) return;
    functions = await listenForWebhooks();
    // A cluster older than 1.22, without the built-in kubernetes.io/metadata.name label: Furnish adds
    // it. Its admission plugins authenticate to the functions with the cluster JWT.
    cluster = await useTestCluster({ metadataNameLabel: false, admissionKubeconfig: admissionKubeconfig(functions.url, await mintToken()) });
    if (!cluster.isSimulated) {
      // The functions listen on this machine's loopback: a real API server cannot reach them, and
      // registering fail-closed webhooks it cannot call would block every namespace write there.
      throw new Error('the admission end-to-end suite serves the webhooks on 127.0.0.1 and runs only against kube-sim (unset FURNISH_TEST_KUBECONFIG)');
    }
    Object.assign(process.env, testEnv({
      FURNISH_API_SERVER: cluster.server,
      FURNISH_API_CA: cluster.caPem,
      FURNISH_API_TOKEN: cluster.users.admin!.token,
      FURNISH_AUTO_OPT_OUT_PRINCIPALS: 'system:serviceaccount:ci:*',
      // Grants made during the test take effect at once.
      FURNISH_SAR_CACHE_TTL_MS: '0',
      FURNISH_TEMPLATE_CACHE_TTL_MS: '0',
    }));
    await loadFunctions();
    await ok('admin', ['create', 'namespace', 'furnish-system']);
    await ok('admin', ['apply', '--validate=false', '-f', join(root, 'infra', 'crds', 'namespacetemplates.yaml')]);
    // Users may create and change namespaces and write ConfigMaps; nothing of Furnish's verbs.
    await ok('admin', ['apply', '--validate=false', '-f', '-'], clusterRole('e2e-users', [
      { apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'get', 'list', 'patch', 'update'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get', 'list'] },
    ], [{ kind: 'Group', name: 'system:authenticated', apiGroup: 'rbac.authorization.k8s.io' }]));
    await ok('admin', ['apply', '--validate=false', '-f', '-'], yaml({
      apiVersion: 'furnish.dev/v1alpha1',
      kind: 'NamespaceTemplate',
      metadata: { name: 'privileged', annotations: { 'furnish.dev/require-permission': 'true' } },
      spec: { namespaces: { labelSelector: { matchLabels: { 'namespace-class': 'privileged' } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'privileged' }, data: { by: '$(CREATOR)' } }] },
    }));
    await registerWebhooks(functions.url, functions.caBundle);
  });

  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
    await cluster?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('kubectl create namespace as alice gets the creator annotation, phase=pending and the name label', async () => {
    if (!kubectlInstalled) return;
    await ok('alice', ['create', 'namespace', 'team-a']);
    const ns = await namespace('team-a');
    expect(ns.metadata.annotations?.['furnish.dev/creator']).toBe('alice');
    expect(ns.metadata.labels).toMatchObject({ 'furnish.dev/phase': 'pending', 'kubernetes.io/metadata.name': 'team-a' });
  });

  it('lets the controllers create the default ServiceAccount and kube-root-ca.crt in the pending namespace', async () => {
    if (!kubectlInstalled) return;
    for (let i = 0; i < 50; i++) {
      const sa = await kubectl('admin', ['get', 'serviceaccount', 'default', '-n', 'team-a']);
      const cm = await kubectl('admin', ['get', 'configmap', 'kube-root-ca.crt', '-n', 'team-a']);
      if (sa.code === 0 && cm.code === 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the controllers never furnished team-a with default and kube-root-ca.crt');
  });

  it('refuses alice writing a ConfigMap into the pending namespace', async () => {
    if (!kubectlInstalled) return;
    const run = await kubectl('alice', ['create', 'configmap', 'app', '-n', 'team-a', '--from-literal=a=b']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('admission webhook "guard-initializing.furnish.dev" denied the request: namespace "team-a" is still being furnished; retry in a few seconds');
  });

  it('refuses kubectl label of the phase without initialize', async () => {
    if (!kubectlInstalled) return;
    const run = await kubectl('alice', ['label', 'namespace', 'team-a', 'furnish.dev/phase=ready', '--overwrite']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('user "alice" may not change label furnish.dev/phase from "pending" to "ready" on namespace "team-a": needs verb "initialize" on namespaces, resourceName "team-a"');
    expect((await namespace('team-a')).metadata.labels?.['furnish.dev/phase']).toBe('pending');
  });

  it('kubectl annotate --overwrite furnish.dev/creator=mallory leaves alice in place', async () => {
    if (!kubectlInstalled) return;
    await ok('admin', ['annotate', 'namespace', 'team-a', 'furnish.dev/creator=mallory', '--overwrite']);
    expect((await namespace('team-a')).metadata.annotations?.['furnish.dev/creator']).toBe('alice');
  });

  it('refuses bob a namespace labelled namespace-class=privileged without `use`, and admits it once granted', async () => {
    if (!kubectlInstalled) return;
    const privileged = yaml({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'priv-b', labels: { 'namespace-class': 'privileged' } } });
    const refused = await kubectl('bob', ['create', '--validate=false', '-f', '-'], privileged);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'admission webhook "validate-namespace.furnish.dev" denied the request: user "bob" may not use NamespaceTemplate "privileged": needs verb "use" on namespacetemplates.furnish.dev, resourceName "privileged"',
    );
    await ok('admin', ['apply', '--validate=false', '-f', '-'], clusterRole('bob-uses-privileged', [
      { apiGroups: ['furnish.dev'], resources: ['namespacetemplates'], verbs: ['use'], resourceNames: ['privileged'] },
    ], [{ kind: 'User', name: 'bob', apiGroup: 'rbac.authorization.k8s.io' }]));
    await ok('bob', ['create', '--validate=false', '-f', '-'], privileged);
    expect((await namespace('priv-b')).metadata.annotations?.['furnish.dev/creator']).toBe('bob');
  });

  it('refuses opting out without optout', async () => {
    if (!kubectlInstalled) return;
    const run = await kubectl('mallory', ['create', '--validate=false', '-f', '-'], yaml({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'sneaky', annotations: { 'furnish.dev/opt-out': 'true' } } }));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('user "mallory" may not opt namespace "sneaky" out of NamespaceTemplates (annotation furnish.dev/opt-out="true"): needs verb "optout" on namespacetemplates.furnish.dev');
  });

  it('a call without the cluster token is refused by the function (401), so the request fails closed', async () => {
    if (!kubectlInstalled) return;
    // The same mutate-namespace function at a host:port the admission kubeconfig has no entry for:
    // the API server calls it anonymously.
    await ok('admin', ['apply', '--validate=false', '-f', '-'], yaml({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'e2e-uncredentialed' },
      webhooks: [{
        name: 'uncredentialed.furnish.dev', admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: 'Fail', timeoutSeconds: 5,
        clientConfig: { url: `${functions.uncredentialedUrl}/mutate-namespace`, caBundle: functions.caBundle },
        rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], operations: ['CREATE'] }],
        objectSelector: { matchLabels: { 'e2e-credentials': 'none' } },
      }],
    }));
    try {
      const run = await kubectl('alice', ['create', '--validate=false', '-f', '-'],
        yaml({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'no-token', labels: { 'e2e-credentials': 'none' } } }));
      expect(run.code).not.toBe(0);
      // As kube-apiserver words it: the message of the function's 401 Status, after the webhook's name.
      expect(run.stderr).toMatch(/failed calling webhook "uncredentialed\.furnish\.dev": failed to call webhook: no bearer token/);
      expect(run.stderr).toContain('no bearer token');
      expect((await kubectl('admin', ['get', 'namespace', 'no-token'])).code).not.toBe(0);
    } finally {
      await ok('admin', ['delete', 'mutatingwebhookconfiguration', 'e2e-uncredentialed']);
    }
  });
});
