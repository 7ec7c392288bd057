// The credentials kube-sim presents to webhooks: users of the admission kubeconfig, chosen by the
// webhook's host:port with kube-apiserver's rules (k8s.io/apiserver/pkg/util/webhook
// defaultAuthenticationInfoResolver), and carried on the call.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';
import { parseArgs } from '../support/kube-sim/main.ts';
import { candidateNames, WebhookAuthResolver, webhookTarget, type AdmissionKubeconfig } from '../support/kube-sim/webhook-auth.ts';
import { webhookCallHint } from '../support/cluster.ts';
import { call, CONFIGMAP, webhookServer, type WebhookServer } from './helpers.ts';

const resolver = (...names: string[]): WebhookAuthResolver =>
  new WebhookAuthResolver({ users: names.map((name) => ({ name, user: { token: `token-for-${name}` } })) });
const userFor = (r: WebhookAuthResolver, url: string): string | undefined => r.userFor(webhookTarget(new URL(url)));

describe('choosing the kubeconfig user for a webhook URL', () => {
  it('looks up host:port, with 443 when the URL has no port (or says :443)', () => {
    expect(webhookTarget(new URL('https://hooks.example.com/x'))).toBe('hooks.example.com:443');
    expect(webhookTarget(new URL('https://hooks.example.com:443/x'))).toBe('hooks.example.com:443');
    expect(webhookTarget(new URL('https://127.0.0.1:8443/x'))).toBe('127.0.0.1:8443');
    expect(candidateNames('www.example.com:443')).toEqual(['www.example.com:443', '*.example.com:443', '*.com:443', 'www.example.com', '*.example.com', '*.com']);
    expect(candidateNames('www.example.com:8443')).toEqual(['www.example.com:8443', '*.example.com:8443', '*.com:8443']);
  });

  it('prefers the exact host:port, then wildcards with the port, then (port 443 only) the host, then host wildcards, then *', () => {
    const all = resolver('*', '*.example.com', 'www.example.com', '*.example.com:443', 'www.example.com:443', 'www.example.com:8443');
    expect(userFor(all, 'https://www.example.com/x')).toBe('www.example.com:443');
    expect(userFor(all, 'https://www.example.com:8443/x')).toBe('www.example.com:8443');
    expect(userFor(resolver('*', '*.example.com', 'www.example.com', '*.example.com:443'), 'https://www.example.com/x')).toBe('*.example.com:443');
    expect(userFor(resolver('*', '*.example.com', 'www.example.com'), 'https://www.example.com:443/x')).toBe('www.example.com');
    expect(userFor(resolver('*', '*.example.com'), 'https://www.example.com/x')).toBe('*.example.com');
    expect(userFor(resolver('*', '*.example.com'), 'https://www.example.com:8443/x')).toBe('*');
    expect(userFor(resolver('*', 'www.example.com'), 'https://www.example.com:8443/x')).toBe('*');
    expect(userFor(resolver('*', '*.example.com:8443'), 'https://www.example.com:8443/x')).toBe('*.example.com:8443');
  });

  it('tries the longest wildcard first and never lets *.example.com match example.com itself', () => {
    expect(userFor(resolver('*.com', '*.example.com', '*.a.example.com'), 'https://hooks.a.example.com/x')).toBe('*.a.example.com');
    expect(userFor(resolver('*.com', '*.example.com'), 'https://hooks.a.example.com/x')).toBe('*.example.com');
    expect(userFor(resolver('*.example.com'), 'https://example.com/x')).toBeUndefined();
  });

  it('falls back to *, then to the current context\'s user, else calls anonymously', () => {
    const withContext: AdmissionKubeconfig = {
      users: [{ name: 'webhook-caller', user: { token: 't' } }],
      contexts: [{ name: 'default', context: { user: 'webhook-caller' } }],
      'current-context': 'default',
    };
    expect(new WebhookAuthResolver(withContext).userFor('anything.example.org:9443')).toBe('webhook-caller');
    expect(new WebhookAuthResolver({ ...withContext, users: [...withContext.users!, { name: '*', user: {} }] }).userFor('a.b:1')).toBe('*');
    expect(new WebhookAuthResolver({ ...withContext, 'current-context': 'other' }).userFor('a.b:1')).toBeUndefined();
    expect(resolver('hooks.example.com:443').credentialsFor(new URL('https://127.0.0.1:8443/x'))).toEqual({ headers: {} });
  });
});

describe('the credentials of the chosen user', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kube-sim-webhook-auth-'));
    writeFileSync(join(dir, 'token'), 'from-file\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const url = new URL('https://hooks.example.com/x');
  const only = (user: Record<string, unknown>, baseDir?: string): WebhookAuthResolver =>
    new WebhookAuthResolver({ users: [{ name: '*', user }] }, baseDir);

  it('sends token as a bearer token, else tokenFile (trimmed, relative to the kubeconfig), else Basic', () => {
    expect(only({ token: 'abc', tokenFile: 'token' }, dir).credentialsFor(url)).toEqual({ user: '*', headers: { Authorization: 'Bearer abc' } });
    expect(only({ tokenFile: 'token' }, dir).credentialsFor(url).headers).toEqual({ Authorization: 'Bearer from-file' });
    expect(only({ tokenFile: join(dir, 'token') }).credentialsFor(url).headers).toEqual({ Authorization: 'Bearer from-file' });
    expect(only({ username: 'u', password: 'p' }).credentialsFor(url).headers).toEqual({ Authorization: `Basic ${Buffer.from('u:p').toString('base64')}` });
    expect(only({}).credentialsFor(url)).toEqual({ user: '*', headers: {} });
  });

  it('presents a client certificate from data or files', () => {
    const certData = Buffer.from('CERT').toString('base64');
    const keyData = Buffer.from('KEY').toString('base64');
    expect(only({ 'client-certificate-data': certData, 'client-key-data': keyData }).credentialsFor(url)).toMatchObject({ cert: 'CERT', key: 'KEY' });
    writeFileSync(join(dir, 'client.crt'), 'CERT-FILE');
    writeFileSync(join(dir, 'client.key'), 'KEY-FILE');
    expect(only({ 'client-certificate': 'client.crt', 'client-key': 'client.key' }, dir).credentialsFor(url)).toMatchObject({ cert: 'CERT-FILE', key: 'KEY-FILE' });
  });

  it('fails like kube-apiserver building the client: unreadable tokenFile, auth provider, token and password together', () => {
    expect(() => only({ tokenFile: join(dir, 'missing') }).credentialsFor(url)).toThrow(`open ${join(dir, 'missing')}: no such file or directory`);
    expect(() => only({ 'auth-provider': { name: 'gcp' } }).credentialsFor(url)).toThrow('auth provider not supported');
    expect(() => only({ token: 't', username: 'u' }).credentialsFor(url)).toThrow('username/password or bearer token may be set, but not both');
  });

  it('loads a kubeconfig file once, and refuses a missing or malformed one (kube-apiserver would not start)', () => {
    const path = join(dir, 'kubeconfig.yaml');
    writeFileSync(path, stringify({ apiVersion: 'v1', kind: 'Config', users: [{ name: 'hooks.example.com', user: { tokenFile: 'token' } }] }));
    expect(WebhookAuthResolver.load(path).credentialsFor(url)).toEqual({ user: 'hooks.example.com', headers: { Authorization: 'Bearer from-file' } });
    expect(() => WebhookAuthResolver.load(join(dir, 'absent.yaml'))).toThrow(/^admission kubeconfig .*absent\.yaml: open .*: no such file or directory$/);
    writeFileSync(join(dir, 'bad.yaml'), 'users: {name: x}\n');
    expect(() => WebhookAuthResolver.load(join(dir, 'bad.yaml'))).toThrow(/users must be a list/);
    expect(() => WebhookAuthResolver.load({ users: [{ name: '' }] })).toThrow(/users\[0\]\.name must be a non-empty string/);
  });

  it('is the --admission-kubeconfig flag of `npm run kube-sim`', () => {
    expect(parseArgs(['--admission-kubeconfig', '/etc/kube-sim/webhooks.yaml'])).toEqual({ admissionKubeconfig: '/etc/kube-sim/webhooks.yaml' });
  });

  it('--user NAME:GROUPS splits at the first colon: group names have colons of their own', () => {
    expect(parseArgs(['--user', 'admin:system:masters,ops', '--user', 'carol']).users).toEqual([{ name: 'admin', groups: ['system:masters', 'ops'] }, { name: 'carol', groups: [] }]);
  });
});

describe('webhook calls carry the credentials', () => {
  const NS = '/api/v1/namespaces';
  const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
  let plain: SimCluster;
  let authed: SimCluster;
  let hooks: WebhookServer;
  let dir: string;

  beforeAll(async () => {
    plain = await startCluster({ namespaceDefaultObjects: false });
    hooks = await webhookServer(plain, () => ({ allowed: true }));
    dir = mkdtempSync(join(tmpdir(), 'kube-sim-webhook-auth-'));
    writeFileSync(join(dir, 'hooks-token'), 's3cret\n');
    const kubeconfig = join(dir, 'admission-kubeconfig.yaml');
    writeFileSync(kubeconfig, stringify({
      apiVersion: 'v1', kind: 'Config',
      users: [{ name: new URL(hooks.url).host, user: { tokenFile: 'hooks-token' } }, { name: '*.example.com', user: { token: 'elsewhere' } }],
    }));
    authed = await startCluster({ namespaceDefaultObjects: false, admissionKubeconfig: kubeconfig });
    for (const cluster of [plain, authed]) {
      const reply = await call(cluster, 'POST', VWC, { body: {
        apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'check-credentials' },
        webhooks: [{
          name: 'check-credentials.furnish.dev', admissionReviewVersions: ['v1'], sideEffects: 'None', timeoutSeconds: 5,
          clientConfig: { url: `${hooks.url}/allow`, caBundle: Buffer.from(plain.caPem).toString('base64') },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        }],
      } });
      expect(reply.status).toBe(201);
    }
  });
  afterAll(async () => {
    await Promise.all([plain.stop(), authed.stop(), hooks.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends Authorization: Bearer from the user named after the webhook\'s host:port', async () => {
    hooks.reviews.length = 0;
    expect((await call(authed, 'POST', `${NS}/default/configmaps`, { body: CONFIGMAP('with-token', 'default') })).status).toBe(201);
    expect(hooks.reviews).toHaveLength(1);
    expect(hooks.reviews[0]!.headers.authorization).toBe('Bearer s3cret');
    expect(hooks.reviews[0]!.headers['user-agent']).toBe('kube-apiserver-admission');
  });

  it('calls anonymously without an admission kubeconfig', async () => {
    hooks.reviews.length = 0;
    expect((await call(plain, 'POST', `${NS}/default/configmaps`, { body: CONFIGMAP('without-token', 'default') })).status).toBe(201);
    expect(hooks.reviews).toHaveLength(1);
    expect(hooks.reviews[0]!.headers.authorization).toBeUndefined();
  });

  it('fails the call (failurePolicy applies) when the credentials cannot be read', async () => {
    rmSync(join(dir, 'hooks-token'));
    try {
      const reply = await call(authed, 'POST', `${NS}/default/configmaps`, { body: CONFIGMAP('token-gone', 'default') });
      expect([reply.status, reply.body.reason]).toEqual([500, 'InternalError']);
      expect(reply.body.message).toBe(`Internal error occurred: failed calling webhook "check-credentials.furnish.dev": could not get REST client: open ${join(dir, 'hooks-token')}: no such file or directory`);
    } finally {
      writeFileSync(join(dir, 'hooks-token'), 's3cret\n');
    }
  });

  it('refuses to start with an admission kubeconfig that does not exist', async () => {
    await expect(startCluster({ admissionKubeconfig: join(dir, 'nope.yaml') })).rejects.toThrow(/no such file or directory/);
  });
});

describe('useTestCluster hint when a webhook refuses the API server with 401', () => {
  const refused = 'Error from server (InternalError): Internal error occurred: failed calling webhook "mutate-namespace.furnish.dev": failed to call webhook: no bearer token: every webhook call must carry Authorization: Bearer <cluster JWT>';
  it('names the missing AdmissionConfiguration for a real cluster, the option for kube-sim, and stays quiet otherwise', () => {
    expect(webhookCallHint({ server: 'https://k8s:6443', webhookCredentials: 'api-server' }, refused)).toMatch(/--admission-control-config-file .*AdmissionConfiguration/);
    expect(webhookCallHint({ server: 'https://127.0.0.1:1', webhookCredentials: 'none' }, refused)).toMatch(/without admissionKubeconfig/);
    expect(webhookCallHint({ server: 'https://127.0.0.1:1', webhookCredentials: 'kube-sim' }, refused)).toMatch(/has no entry for this webhook/);
    expect(webhookCallHint({ server: 'https://k8s:6443', webhookCredentials: 'api-server' }, 'namespaces "x" already exists')).toBe('');
  });
});
