// Reaching an API server from a kubeconfig without @kubernetes/client-node: bearer token, token
// file, client certificate, basic auth, CA and insecure-skip-tls-verify, read by Furnish itself;
// an exec plugin still works, through client-node. Each case talks to a real TLS server on
// loopback that reports what it saw of the caller (client certificate, Authorization header).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { connect, createKubeClient, type Connection } from '../../../shared/kube/client.ts';
import { defaultKubeconfigSource, inClusterConfig, KubeconfigError, resolveKubeconfig } from '../../../shared/kube/kubeconfig.ts';
import { createCertificateAuthority } from '../../support/kube-sim/pki.ts';

const ca = createCertificateAuthority('test-ca');
const otherCa = createCertificateAuthority('other-ca');
const serving = ca.issue(['127.0.0.1', 'localhost'], 'api');
const clientCert = ca.issue([], 'cert-user');
const dir = mkdtempSync(join(tmpdir(), 'furnish-kubeconfig-'));
let server: Server;
let url = '';

beforeAll(async () => {
  server = createServer({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path: req.url, cn: peer?.subject?.CN ?? null, authorization: req.headers.authorization ?? null }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const b64 = (s: string) => Buffer.from(s).toString('base64');

function kubeconfig(user: Record<string, unknown>, cluster: Record<string, unknown> = { 'certificate-authority-data': b64(ca.certPem) }, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: url, ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'ctx',
    ...extra,
  };
}

function writeConfig(name: string, doc: Record<string, unknown>): string {
  const path = join(dir, name);
  writeFileSync(path, stringify(doc));
  return path;
}

async function whoAmI(conn: Connection): Promise<{ status: number; data?: { cn: string | null; authorization: string | null }; error?: string }> {
  const kube = createKubeClient(conn, { retry: { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 } });
  try {
    return await kube.call<{ cn: string | null; authorization: string | null }>({ method: 'GET', path: '/version' });
  } finally {
    kube.close();
  }
}

describe('connect() reads kubeconfigs itself', () => {
  it('a bearer token, inline', async () => {
    const conn = await connect({ kubeconfigYaml: stringify(kubeconfig({ token: 'tok-1' })) });
    expect(conn.via).toBe('kubeconfig');
    expect((await whoAmI(conn)).data).toMatchObject({ authorization: 'Bearer tok-1', cn: null });
  });

  it("a token file, relative to the kubeconfig's directory", async () => {
    writeFileSync(join(dir, 'token'), 'from-file\n');
    const conn = await connect({ kubeconfigPath: writeConfig('tokenfile.yaml', kubeconfig({ tokenFile: 'token' })) });
    expect((await whoAmI(conn)).data?.authorization).toBe('Bearer from-file');
  });

  it('a client certificate (file relative to the kubeconfig) and key (inline)', async () => {
    writeFileSync(join(dir, 'client.crt'), clientCert.certPem);
    const conn = await connect({ kubeconfigPath: writeConfig('cert.yaml', kubeconfig({ 'client-certificate': 'client.crt', 'client-key-data': b64(clientCert.keyPem) })) });
    expect((await whoAmI(conn)).data).toMatchObject({ cn: 'cert-user', authorization: null });
  });

  it('basic auth', async () => {
    const conn = await connect({ kubeconfigYaml: stringify(kubeconfig({ username: 'ann', password: 'pw' })) });
    expect((await whoAmI(conn)).data?.authorization).toBe(`Basic ${b64('ann:pw')}`);
  });

  it('refuses a server whose certificate does not chain to the CA, unless insecure-skip-tls-verify', async () => {
    const wrongCa = await connect({ kubeconfigYaml: stringify(kubeconfig({ token: 't' }, { 'certificate-authority-data': b64(otherCa.certPem) })) });
    const refused = await whoAmI(wrongCa);
    expect(refused.status).toBe(0);
    expect(refused.error).toMatch(/certificate/i);
    const insecure = await connect({ kubeconfigYaml: stringify(kubeconfig({ token: 't' }, { 'insecure-skip-tls-verify': true })) });
    expect((await whoAmI(insecure)).status).toBe(200);
  });

  it('the named context wins over current-context', async () => {
    const doc = kubeconfig({ token: 'first' });
    (doc.users as unknown[]).push({ name: 'v', user: { token: 'second' } });
    (doc.contexts as unknown[]).push({ name: 'other', context: { cluster: 'c', user: 'v' } });
    const conn = await connect({ kubeconfigYaml: stringify(doc), context: 'other' });
    expect((await whoAmI(conn)).data?.authorization).toBe('Bearer second');
  });

  it('an exec plugin goes through @kubernetes/client-node', async () => {
    const plugin = join(dir, 'cred-plugin.sh');
    writeFileSync(plugin, `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-exec"}}'\n`);
    chmodSync(plugin, 0o755);
    const conn = await connect({ kubeconfigYaml: stringify(kubeconfig({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' } })) });
    expect(conn.via).toBe('client-node');
    expect((await whoAmI(conn)).data?.authorization).toBe('Bearer from-exec');
  });

  it('names the file and the entry when the kubeconfig is unusable', async () => {
    const path = writeConfig('broken.yaml', kubeconfig({ token: 't' }, undefined, { 'current-context': 'missing' }));
    await expect(connect({ kubeconfigPath: path })).rejects.toThrow(`${path}: contexts: no entry named "missing"`);
    await expect(connect({ kubeconfigPath: join(dir, 'absent.yaml') })).rejects.toThrow(KubeconfigError);
    await expect(connect({ kubeconfigYaml: 'clusters: [' })).rejects.toThrow(/kubeconfig \(inline\): not YAML/);
  });
});

describe('kubeconfig resolution (pure)', () => {
  it('names what needs client-node', () => {
    const base = { baseDir: '/k', where: 'k' };
    expect(resolveKubeconfig(kubeconfig({ exec: { command: 'x' } }), base).plugin).toBe('exec');
    expect(resolveKubeconfig(kubeconfig({ 'auth-provider': { name: 'oidc' } }), base).plugin).toBe('auth-provider');
    expect(resolveKubeconfig(kubeconfig({ token: 't' }, { 'proxy-url': 'http://proxy:3128' }), base).plugin).toBe('proxy-url');
    expect(resolveKubeconfig(kubeconfig({ token: 't' }), base).plugin).toBeUndefined();
  });

  it('reports a missing server and a bad base64 field with their path', () => {
    expect(() => resolveKubeconfig(kubeconfig({ token: 't' }, { server: '' }), { baseDir: '/', where: 'k' })).toThrow('k: clusters[0].cluster.server is missing');
    expect(() => resolveKubeconfig(kubeconfig({ 'client-key-data': '%%%' }), { baseDir: '/', where: 'k' })).toThrow('k: users[0].user: client-key-data is not base64');
  });

  it('the default chain: one KUBECONFIG file, ~/.kube/config, in-cluster, else a clear error', () => {
    const none = () => false;
    expect(defaultKubeconfigSource({ KUBECONFIG: '/a' }, none, '/home/x')).toEqual({ file: '/a' });
    expect(defaultKubeconfigSource({ KUBECONFIG: '/a:/b' }, none, '/home/x')).toEqual({ plugin: 'KUBECONFIG names 2 files' });
    expect(defaultKubeconfigSource({}, (p) => p === '/home/x/.kube/config', '/home/x')).toEqual({ file: '/home/x/.kube/config' });
    expect(defaultKubeconfigSource({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' }, none, '/home/x')).toEqual({ inCluster: inClusterConfig({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' }) });
    expect(inClusterConfig({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' })).toMatchObject({ server: 'https://[fd00::1]:6443', tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token', ca: { path: '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt' } });
    expect(defaultKubeconfigSource({}, none, '/home/x')).toEqual({ none: expect.stringContaining('no kubeconfig') });
  });
});
