// End to end: kubectl, as different users, against a test cluster that calls the four webhook
// functions exactly as kube-apiserver does (registered from infra/webhooks, HTTPS with a
// caBundle, admission.k8s.io/v1). The functions run in this process, served by the functions
// framework on 127.0.0.1; their SubjectAccessReviews and template look-ups go to the same cluster.
// On kube-sim the cluster authenticates with the bearer JWT of its admission kubeconfig
// (infra/webhooks/apiserver); on a real kube-apiserver (FURNISH_TEST_KUBECONFIG, started without an
// admission configuration, like a managed control plane) with the path credential in each URL.
// Every name carries a per-run suffix, and afterAll removes the webhook registrations first, even
// when a test failed, so a real cluster is never left refusing namespace writes.
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
import { describeWithTool } from '../support/tools.ts';
import { mintToken, testEnv } from '../support/fixtures.ts';
import { componentIdentities, useTestCluster, webhookCallHint } from '../support/cluster.ts';
import type { Identities } from '../../scripts/start/identities.ts';
import { createCertificateAuthority } from '../support/kube-sim/pki.ts';
import { gateServer } from '../../shared/webhooks/body-gate.ts';
import { registrationYaml } from '../../shared/webhooks/registration.ts';
import { TEST_CLUSTER } from '../support/fixtures.ts';
import { WEBHOOKS } from '../../shared/config/types.ts';

const root = join(import.meta.dirname, '..', '..');
type Cluster = Awaited<ReturnType<typeof useTestCluster>>;

let cluster: Cluster | undefined;
let identities: Identities | undefined;
/** The functions at the host:port the admission kubeconfig names, and the same functions at one it does not name. */
const servers: Server[] = [];
const listeners = new Map<string, RequestListener>();
let tmp: string | undefined;
/** Makes every name of this run unique: a real cluster keeps what earlier runs created. */
const run = Math.random().toString(36).slice(2, 7);
const n = (name: string) => `${name}-${run}`;
const PATH_CREDENTIAL = `e2e-path-credential-${run}-0123456789abcdefghij`;
/** What afterAll deletes: `kind/name` as kubectl names them. */
const created: string[] = [];

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

type Namespace = { metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> } };
async function namespace(name: string): Promise<Namespace> {
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
    // Gated as a deployed function: no body is read before the caller is authenticated.
    const server = gateServer(createServer({ cert: cert.certPem, key: cert.keyPem }, route));
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

/** What `furnish webhooks` prints: path credentials for a real (unconfigurable) API server, JWT mode on kube-sim. */
async function registerWebhooks(url: string, caBundle: string): Promise<void> {
  const pathCredential = cluster!.isSimulated ? undefined : { cluster: TEST_CLUSTER, credential: PATH_CREDENTIAL };
  await ok('admin', ['apply', '--validate=false', '-f', '-'], registrationYaml({ functionsUrl: url, caBundle, pathCredential }));
}

/** Every configuration registerWebhooks applied (one per webhook, mutate-* mutating), and the suite's own. */
const REGISTRATIONS = [
  ...WEBHOOKS.map((w) => `${w.startsWith('mutate-') ? 'mutating' : 'validating'}webhookconfiguration/furnish-${w}`),
  'mutatingwebhookconfiguration/e2e-uncredentialed',
];

/** Webhook registrations first (a real cluster must never keep calling functions that are gone), then what the run created. */
async function cleanUp(): Promise<void> {
  for (const what of [...REGISTRATIONS, ...created.reverse()]) {
    await kubectl('admin', ['delete', what, '--ignore-not-found', '--wait=false']).catch(() => undefined);
  }
}

/** Without kubectl the suite is skipped loudly (and fails under CI=true). */
const describeKubectl = describeWithTool('kubectl', 'the end-to-end admission suite drives the cluster with kubectl');
let functions: { url: string; uncredentialedUrl: string; caBundle: string };

describeKubectl('admission end to end (kubectl as alice, bob, mallory, admin)', () => {
  beforeAll(async () => {
    functions = await listenForWebhooks();
    // kube-sim: a cluster older than 1.22, without the built-in kubernetes.io/metadata.name label
    // (Furnish adds it), whose admission plugins authenticate with the cluster JWT. A real API
    // server on this machine reaches the functions on loopback too, and authenticates with the
    // path credential of the URLs it is given.
    cluster = await useTestCluster({ metadataNameLabel: false, admissionKubeconfig: admissionKubeconfig(functions.url, await mintToken()) });
    // The webhooks ask the API server as deployed: furnish-webhook with infra/'s RBAC, never the admin.
    identities = await componentIdentities(cluster);
    Object.assign(process.env, testEnv({
      FURNISH_PATH_CREDENTIALS: PATH_CREDENTIAL,
      FURNISH_API_SERVER: cluster.server,
      FURNISH_API_CA: cluster.caPem,
      FURNISH_API_TOKEN: identities.webhook.token(),
      FURNISH_AUTO_OPT_OUT_PRINCIPALS: 'system:serviceaccount:ci:*',
      // Grants made during the test take effect at once.
      // The default SubjectAccessReview cache (10 s): denials are never cached, so grants count at once.
    }));
    await loadFunctions();
    // Furnish's own namespace exists before its webhooks are registered (as `npm start` and infra/ do).
    await ok('admin', ['apply', '--validate=false', '-f', join(root, 'infra', 'namespace.yaml')]);
    await ok('admin', ['apply', '--validate=false', '-f', join(root, 'infra', 'crds', 'namespacetemplates.yaml')]);
    // Users may create and change namespaces (and their status and finalize subresources) and write
    // ConfigMaps; nothing of Furnish's verbs.
    created.push(`clusterrole/${n('e2e-users')}`, `clusterrolebinding/${n('e2e-users')}`);
    await ok('admin', ['apply', '--validate=false', '-f', '-'], clusterRole(n('e2e-users'), [
      { apiGroups: [''], resources: ['namespaces', 'namespaces/status', 'namespaces/finalize'], verbs: ['create', 'get', 'list', 'patch', 'update'] },
      { apiGroups: [''], resources: ['configmaps', 'serviceaccounts/token'], verbs: ['create', 'get', 'list'] },
    ], [{ kind: 'Group', name: 'system:authenticated', apiGroup: 'rbac.authorization.k8s.io' }]));
    created.push(`namespacetemplate/${n('privileged')}`);
    await ok('admin', ['apply', '--validate=false', '-f', '-'], yaml({
      apiVersion: 'furnish.dev/v1alpha1',
      kind: 'NamespaceTemplate',
      metadata: { name: n('privileged'), annotations: { 'furnish.dev/require-permission': 'true' } },
      spec: { namespaces: { labelSelector: { matchLabels: { 'namespace-class': n('privileged') } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'privileged' }, data: { by: '$(CREATOR)' } }] },
    }));
    await registerWebhooks(functions.url, functions.caBundle);
  }, 60_000);

  afterAll(async () => {
    if (cluster) await cleanUp();
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
    identities?.remove();
    await cluster?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  /** Creates a namespace (as `user`, from a manifest) and records it for afterAll. */
  async function createNamespace(user: string, manifest: object): Promise<Run> {
    const result = await kubectl(user, ['create', '--validate=false', '-o', 'name', '-f', '-'], yaml(manifest));
    const name = /^namespace\/(\S+)/m.exec(result.stdout)?.[1];
    if (name) created.push(`namespace/${name}`);
    return result;
  }
  const teamA = n('team-a');

  it('kubectl create namespace as alice gets the creator (and the identity admission saw), phase=pending and the name label', async () => {
    created.push(`namespace/${teamA}`);
    await ok('alice', ['create', 'namespace', teamA]);
    const ns = await namespace(teamA);
    expect(ns.metadata.annotations?.['furnish.dev/creator']).toBe('alice');
    // Readable form-urlencoded text, not JSON (kubectl describe ns shows no Furnish JSON).
    const identity = ns.metadata.annotations?.['furnish.dev/creator-identity'] ?? '';
    expect(identity).toMatch(/^user=alice(&|$)/);
    expect(new URLSearchParams(identity).getAll('group')).toContain('system:authenticated');
    expect(() => JSON.parse(identity) as unknown).toThrow();
    expect(ns.metadata.labels).toMatchObject({ 'furnish.dev/phase': 'pending', 'kubernetes.io/metadata.name': teamA });
  });

  it('lets the controllers create the default ServiceAccount and kube-root-ca.crt in the pending namespace', async () => {
    for (let i = 0; i < 100; i++) {
      const sa = await kubectl('admin', ['get', 'serviceaccount', 'default', '-n', teamA]);
      const cm = await kubectl('admin', ['get', 'configmap', 'kube-root-ca.crt', '-n', teamA]);
      if (sa.code === 0 && cm.code === 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the controllers never furnished ${teamA} with default and kube-root-ca.crt`);
  });

  it('refuses alice writing a ConfigMap into the pending namespace', async () => {
    const result = await kubectl('alice', ['create', 'configmap', 'app', '-n', teamA, '--from-literal=a=b']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`admission webhook "guard-initializing.furnish.dev" denied the request: namespace "${teamA}" is still being furnished; retry in a few seconds`);
  });

  it('refuses alice a token of the pending namespace\'s default ServiceAccount: a subresource that issues a credential is a write into it', async () => {
    // As kubectl create token sends it, in JSON (kube-sim decodes no protobuf TokenRequest).
    const request = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [] } });
    const result = await kubectl('alice', ['create', '--raw', `/api/v1/namespaces/${teamA}/serviceaccounts/default/token`, '-f', '-'], request);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`namespace "${teamA}" is still being furnished; retry in a few seconds`);
  });

  it('refuses kubectl label of the phase: only Furnish sets it', async () => {
    const result = await kubectl('alice', ['label', 'namespace', teamA, 'furnish.dev/phase=ready', '--overwrite']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`user "alice" may not change label furnish.dev/phase from "pending" to "ready" on namespace "${teamA}": only Furnish sets the phase`);
    expect((await namespace(teamA)).metadata.labels?.['furnish.dev/phase']).toBe('pending');
  });

  it('kubectl annotate --overwrite furnish.dev/creator=mallory leaves alice in place', async () => {
    await ok('admin', ['annotate', 'namespace', teamA, 'furnish.dev/creator=mallory', '--overwrite']);
    expect((await namespace(teamA)).metadata.annotations?.['furnish.dev/creator']).toBe('alice');
  });

  describe('namespaces/status and namespaces/finalize are judged like the namespace (item 6)', () => {
    for (const sub of ['status', 'finalize']) {
      it(`${sub}: the phase cannot be changed (only Furnish sets it), the creator is restored`, async () => {
        const ns = await namespace(teamA);
        const phase = structuredClone(ns);
        phase.metadata.labels = { ...phase.metadata.labels, 'furnish.dev/phase': 'ready' };
        const refused = await kubectl('alice', ['replace', '--raw', `/api/v1/namespaces/${teamA}/${sub}`, '-f', '-'], JSON.stringify(phase));
        expect(refused.code).not.toBe(0);
        expect(refused.stderr).toContain(`user "alice" may not change label furnish.dev/phase from "pending" to "ready" on namespace "${teamA}"`);
        const forged = structuredClone(ns);
        forged.metadata.annotations = { ...forged.metadata.annotations, 'furnish.dev/creator': 'mallory' };
        await ok('admin', ['replace', '--raw', `/api/v1/namespaces/${teamA}/${sub}`, '-f', '-'], JSON.stringify(forged));
        const after = await namespace(teamA);
        expect(after.metadata.labels?.['furnish.dev/phase']).toBe('pending');
        expect(after.metadata.annotations?.['furnish.dev/creator']).toBe('alice');
      });
    }
  });

  describe('no label a requester writes skips the namespace webhooks (item 1)', () => {
    it('generateName: the namespace reaches mutate-namespace without a name, and still gets alice as creator and phase=pending', async () => {
      const result = await createNamespace('alice', { apiVersion: 'v1', kind: 'Namespace', metadata: { generateName: n('gen') + '-' } });
      expect(result.code).toBe(0);
      const name = /^namespace\/(\S+)/m.exec(result.stdout)![1]!;
      const ns = await namespace(name);
      expect(ns.metadata.annotations?.['furnish.dev/creator']).toBe('alice');
      expect(ns.metadata.labels?.['furnish.dev/phase']).toBe('pending');
      // kube-apiserver >= 1.22 labels it once named; a cluster without the built-in label (kube-sim
      // here) leaves it to the first update, which mutate-namespace labels (it has no name before).
      if (!cluster!.isSimulated) expect(ns.metadata.labels?.['kubernetes.io/metadata.name']).toBe(name);
      else expect([undefined, name]).toContain(ns.metadata.labels?.['kubernetes.io/metadata.name']);
    });

    it('a pre-set kubernetes.io/metadata.name=kube-system exempts nothing', async () => {
      const name = n('preset');
      const result = await createNamespace('alice', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'kubernetes.io/metadata.name': 'kube-system' } } });
      expect(result.code).toBe(0);
      const ns = await namespace(name);
      expect(ns.metadata.annotations?.['furnish.dev/creator']).toBe('alice');
      expect(ns.metadata.labels).toMatchObject({ 'furnish.dev/phase': 'pending', 'kubernetes.io/metadata.name': name });
    });

    it('generateName with kubernetes.io/metadata.name=furnish-system: never admitted without creator and phase', async () => {
      const result = await createNamespace('mallory', { apiVersion: 'v1', kind: 'Namespace', metadata: { generateName: n('sneak') + '-', labels: { 'kubernetes.io/metadata.name': 'furnish-system' } } });
      if (result.code !== 0) {
        // A cluster without the built-in name label (kube-sim here, like Kubernetes < 1.22) keeps the forged label: refused.
        expect(result.stderr).toMatch(/may not set label kubernetes\.io\/metadata\.name="furnish-system" on namespace "[^"]+": it must equal the name/);
        return;
      }
      // kube-apiserver >= 1.22 sets the label to the generated name after mutating admission.
      const ns = await namespace(/^namespace\/(\S+)/m.exec(result.stdout)![1]!);
      expect(ns.metadata.annotations?.['furnish.dev/creator']).toBe('mallory');
      expect(ns.metadata.labels?.['furnish.dev/phase']).toBe('pending');
    });
  });

  it('refuses bob a namespace of the privileged class without `use`, and admits it once granted', async () => {
    const privileged = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: n('priv-b'), labels: { 'namespace-class': n('privileged') } } };
    const refused = await createNamespace('bob', privileged);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      `admission webhook "validate-namespace.furnish.dev" denied the request: user "bob" may not use NamespaceTemplate "${n('privileged')}": needs verb "use" on namespacetemplates.furnish.dev, resourceName "${n('privileged')}"`,
    );
    created.push(`clusterrole/${n('bob-uses-privileged')}`, `clusterrolebinding/${n('bob-uses-privileged')}`);
    await ok('admin', ['apply', '--validate=false', '-f', '-'], clusterRole(n('bob-uses-privileged'), [
      { apiGroups: ['furnish.dev'], resources: ['namespacetemplates'], verbs: ['use'], resourceNames: [n('privileged')] },
    ], [{ kind: 'User', name: 'bob', apiGroup: 'rbac.authorization.k8s.io' }]));
    // Denials are never cached and templates are read fresh: the grant counts at once.
    expect((await createNamespace('bob', privileged)).code).toBe(0);
    expect((await namespace(n('priv-b'))).metadata.annotations?.['furnish.dev/creator']).toBe('bob');
  });

  it('a require-permission template created just before a namespace that selects it is checked (templates read fresh)', async () => {
    created.push(`namespacetemplate/${n('fresh')}`);
    await ok('admin', ['create', '--validate=false', '-f', '-'], yaml({
      apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate',
      metadata: { name: n('fresh'), annotations: { 'furnish.dev/require-permission': 'true' } },
      spec: { namespaces: { labelSelector: { matchLabels: { fresh: run } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fresh' } }] },
    }));
    const result = await createNamespace('mallory', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: n('fresh-ns'), labels: { fresh: run } } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`user "mallory" may not use NamespaceTemplate "${n('fresh')}"`);
  });

  it('refuses opting out without optout', async () => {
    const result = await createNamespace('mallory', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: n('sneaky'), annotations: { 'furnish.dev/opt-out': 'true' } } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`user "mallory" may not opt namespace "${n('sneaky')}" out of NamespaceTemplates (annotation furnish.dev/opt-out="true"): needs verb "optout" on namespacetemplates.furnish.dev`);
  });

  it('a misspelt selector (matchLabel) is refused with its path, whatever the field validation (item 7)', async () => {
    const typo = yaml({
      apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: n('typo') },
      spec: { namespaces: { labelSelector: { matchLabel: { team: 'a' } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }] },
    });
    for (const validate of ['strict', 'warn', 'ignore']) {
      const result = await kubectl('admin', ['apply', `--validate=${validate}`, '-f', '-'], typo);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('admission webhook "validate-template.furnish.dev" denied the request');
      expect(result.stderr).toContain('spec.namespaces.labelSelector.matchLabel');
    }
  });

  it('a template nested 2,000 levels is refused with 422 and a path, not a 500 (item 8)', async () => {
    // kube-sim itself copies objects with structuredClone, which overflows near 1,000 levels before
    // any webhook is called: there, 500 levels (still five times the limit) show the same refusal.
    const levels = cluster!.isSimulated ? 500 : 2000;
    let deep: Record<string, unknown> = { leaf: 'x' };
    for (let i = 0; i < levels; i++) deep = { a: deep };
    const template = { apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: n('deep') }, spec: { templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: deep }] } };
    const result = await kubectl('admin', ['create', '--validate=false', '-f', '-'], JSON.stringify(template));
    expect(result.code).not.toBe(0);
    expect(result.stderr).not.toMatch(/InternalError|Maximum call stack/);
    expect(result.stderr).toContain('admission webhook "validate-template.furnish.dev" denied the request');
    expect(result.stderr).toMatch(/spec\.templates\[0\]\.data(\.a)+: nested more than 100 levels deep/);
  });

  it('a template of more than 100,000 JSON values is denied (413) before the webhook parses it, naming the limit (issue 25, finding 11)', async () => {
    // An array of 110,000 zeros in a template's object (220 KB: under every size limit of the API server).
    const template = JSON.stringify({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: n('wide') }, spec: { templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, bulk: '@' }] } });
    const result = await kubectl('admin', ['create', '--validate=false', '-f', '-'], template.replace('"@"', `[${'0,'.repeat(110_000)}0]`));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('admission webhook "validate-template.furnish.dev" denied the request: request body has more than 100000 JSON values');
  }, 120_000);

  it('a call without the cluster\'s credential is refused by the function (401), so the request fails closed', async () => {
    // The same mutate-namespace function at a URL without the path credential, on a host:port the
    // admission kubeconfig has no entry for: the API server calls it anonymously.
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
      const result = await createNamespace('alice', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: n('no-token'), labels: { 'e2e-credentials': 'none' } } });
      expect(result.code).not.toBe(0);
      // As kube-apiserver words it: the message of the function's 401 Status, after the webhook's name.
      expect(result.stderr).toMatch(/failed calling webhook "uncredentialed\.furnish\.dev": failed to call webhook: no credential/);
      expect((await kubectl('admin', ['get', 'namespace', n('no-token')])).code).not.toBe(0);
    } finally {
      await ok('admin', ['delete', 'mutatingwebhookconfiguration', 'e2e-uncredentialed']);
    }
  });
});
