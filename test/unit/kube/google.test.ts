// The Google credential source (issue 27, item 1), without a network: where the metadata server is
// (as google-auth-library finds it), the token cache, FURNISH_CLUSTERS' google entries, the vars
// furnish install takes for the Google users, and the User subjects it renders from them.
import { describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readSetting } from '../../../shared/config/settings.ts';
import { configFrom } from '../../../shared/config/load.ts';
import { fillObject } from '../../../shared/install/manifests.ts';
import { defaultTopicVars, parseInstallVars } from '../../../shared/install/vars.ts';
import { metadataServer, metadataTokens } from '../../../shared/kube/google.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

const EMAIL = 'acme-reconciler@acme-prod.iam.gserviceaccount.com';

describe('the metadata server', () => {
  it('is found as gcp-metadata finds it: GCE_METADATA_IP, else GCE_METADATA_HOST, else 169.254.169.254, http unless a scheme is given', () => {
    expect(metadataServer({})).toBe('http://169.254.169.254');
    expect(metadataServer({ GCE_METADATA_HOST: '127.0.0.1:9' })).toBe('http://127.0.0.1:9');
    expect(metadataServer({ GCE_METADATA_HOST: 'https://md.example', GCE_METADATA_IP: '10.0.0.1' })).toBe('http://10.0.0.1');
  });

  it('hands out one token per lifetime however many callers ask, a new one shortly before it expires, and says why when there is none', async () => {
    let served = 0;
    const server = createServer((req, res) => {
      served += 1;
      const ok = req.headers['metadata-flavor'] === 'Google';
      res.writeHead(ok ? 200 : 403, { 'content-type': 'application/json' }).end(ok ? JSON.stringify({ access_token: `t${served}`, expires_in: 3600 }) : '{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    let now = 0;
    try {
      const tokens = metadataTokens({ GCE_METADATA_HOST: host }, () => now);
      expect(await Promise.all([tokens(), tokens(), tokens()])).toEqual(['t1', 't1', 't1']);
      now = 3600_000 - 5 * 60_000;
      expect(await tokens()).toBe('t1');
      now = 3600_000 - 3 * 60_000;
      expect(await tokens()).toBe('t2');
      expect(served).toBe(2);
      await expect(metadataTokens({ GCE_METADATA_HOST: '127.0.0.1:1' })()).rejects.toThrow(/metadata server http:\/\/127\.0\.0\.1:1: no access token/);
    } finally {
      server.close();
    }
  });
});

describe('configuration of the google credential source', () => {
  it('FURNISH_CLUSTERS: a google entry needs an https server and a PEM CA or none, and is the only source of its cluster', () => {
    expect(readSetting({ FURNISH_CLUSTERS: '{"prod":{"google":{"server":"https://gke.example"}}}' }, 'clusters')).toEqual({ prod: { google: { server: 'https://gke.example' } } });
    expect(() => readSetting({ FURNISH_CLUSTERS: '{"prod":{"google":{"server":"http://gke.example"}}}' }, 'clusters')).toThrow(/FURNISH_CLUSTERS: prod.google.server: must be the API server's https:\/\/ URL/);
    expect(() => readSetting({ FURNISH_CLUSTERS: '{"prod":{"google":{"server":"https://g","caPem":"x"}}}' }, 'clusters')).toThrow(/prod.google.caPem: must be PEM/);
    expect(() => readSetting({ FURNISH_CLUSTERS: '{"prod":{"google":{"server":"https://g"},"secret":"s"}}' }, 'clusters')).toThrow(/prod: give one of google, secret or kubeconfigPath, not google and secret/);
  });

  it('the webhooks\' api.credential google: accepted alone, refused beside a token, and nothing but google', () => {
    const cluster = (api: Record<string, unknown>) => ({ clusters: [{ id: 'prod', pathCredentials: ['a'.repeat(32)], api: { server: 'https://gke.example', ...api } }] });
    expect(configFrom(cluster({ credential: 'google' })).clusters[0]!.api).toMatchObject({ credential: 'google' });
    expect(() => configFrom(cluster({ credential: 'google', token: 't' }))).toThrow(/clusters\[0\]\.api\.credential: is google, so the webhooks present their Google identity: drop api.token/);
    expect(() => configFrom(cluster({ credential: 'gcp' }))).toThrow(/clusters\[0\]\.api\.credential: must be google/);
  });

  it('the webhooks\' api.credential google: the API server must be https (the access token is good for all of GCP, never sent in clear text)', () => {
    const cluster = (server: string, api: Record<string, unknown> = {}) => ({ clusters: [{ id: 'prod', pathCredentials: ['a'.repeat(32)], api: { server, ...api } }] });
    expect(() => configFrom(cluster('http://gke.example', { credential: 'google' }))).toThrow(/clusters\[0\]\.api\.server: must be an https:\/\/ URL when api\.credential is google/);
    expect(configFrom(cluster('HTTPS://gke.example', { credential: 'google' })).clusters[0]!.api).toMatchObject({ credential: 'google' });
    expect(configFrom(cluster('http://127.0.0.1:8001', { token: 't' })).clusters[0]!.api).toMatchObject({ server: 'http://127.0.0.1:8001' });
  });
});

describe('furnish install and the Google users', () => {
  const vars = { ...defaultTopicVars(), FURNISH_RECONCILER_USER: EMAIL };

  it('takes a service account e-mail and refuses anything else, naming the variable', () => {
    expect(parseInstallVars(JSON.stringify(vars), 'prod.json').FURNISH_RECONCILER_USER).toBe(EMAIL);
    expect(() => parseInstallVars(JSON.stringify({ ...vars, FURNISH_WEBHOOK_USER: 'system:masters' }), 'prod.json')).toThrow(/prod\.json: FURNISH_WEBHOOK_USER: expected a Google service account's e-mail/);
  });

  it('binds the user beside its component\'s ServiceAccount, in no other binding, once', () => {
    const binding = (name: string, account: string, extra: object[] = []): KubeObject => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects: [{ kind: 'ServiceAccount', name: account, namespace: 'furnish-system' }, ...extra] });
    const user = { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: EMAIL };
    expect(fillObject(binding('r', 'furnish-reconciler'), vars).subjects).toEqual([{ kind: 'ServiceAccount', name: 'furnish-reconciler', namespace: 'furnish-system' }, user]);
    expect(fillObject(binding('w', 'furnish-webhook'), vars).subjects).toHaveLength(1);
    expect(fillObject(binding('r', 'furnish-reconciler', [user]), vars).subjects).toHaveLength(2);
    expect(fillObject(binding('r', 'furnish-reconciler'), { ...vars, FURNISH_RECONCILER_USER: '' }).subjects).toHaveLength(1);
  });
});
