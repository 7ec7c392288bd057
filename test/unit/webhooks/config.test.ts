import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { audienceFor, ConfigError, configFrom, loadConfig } from '../../../shared/config/load.ts';
import { DEFAULT_SYSTEM_PRINCIPALS } from '../../../shared/config/types.ts';
import { TEST_SECRET, testEnv } from '../../support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'furnish-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function failure(env: Record<string, string>): Promise<string> {
  try {
    await loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('builds one cluster from the environment, with defaults', async () => {
    const config = await loadConfig(testEnv({ FURNISH_API_SERVER: 'https://10.0.0.1:6443', FURNISH_SYSTEM_NAMESPACES: 'infra, monitoring' }));
    expect(config.clusters).toHaveLength(1);
    expect(config.clusters[0]).toMatchObject({
      id: 'test-cluster',
      jwt: { secret: TEST_SECRET },
      api: { server: 'https://10.0.0.1:6443', timeoutMs: 2000 },
      systemNamespaces: ['infra', 'monitoring'],
      autoOptOutPrincipals: ['system:serviceaccount:team-a:ci-bot'],
      guard: { reconciler: ['system:serviceaccount:furnish-system:furnish-reconciler'], systemPrincipals: [...DEFAULT_SYSTEM_PRINCIPALS] },
      furnishNamespace: 'furnish-system',
      sarCacheTtlMs: 10_000,
    });
    expect(audienceFor(config, 'guard-initializing')).toBe('https://europe-west1-furnish.cloudfunctions.net/guard-initializing');
  });

  it('reads many clusters from a YAML file, secrets from named environment variables, env overriding a cluster', async () => {
    const file = join(dir, 'furnish.yaml');
    writeFileSync(
      file,
      [
        'publicUrl: https://fn.example.com',
        'audiences: { validate-template: "https://vt.example.com" }',
        'clusters:',
        '  - id: prod',
        '    jwt: { secretEnv: PROD_SECRET }',
        '    api: { server: "https://prod:6443", tokenEnv: PROD_TOKEN }',
        '  - id: dev',
        '    jwt: { jwksUrl: "https://keys.example.com/jwks.json", issuer: dev-issuer }',
        '    furnishNamespace: furnish',
      ].join('\n'),
    );
    const config = await loadConfig({ FURNISH_CONFIG_FILE: file, PROD_SECRET: TEST_SECRET, PROD_TOKEN: 'sa-token', FURNISH_CLUSTER_ID: 'dev', FURNISH_SYSTEM_NAMESPACES: 'x' });
    expect(config.clusters.map((c) => c.id)).toEqual(['prod', 'dev']);
    expect(config.clusters[0]).toMatchObject({ jwt: { secret: TEST_SECRET }, api: { token: 'sa-token' } });
    expect(config.clusters[1]).toMatchObject({ jwt: { jwksUrl: 'https://keys.example.com/jwks.json', issuer: 'dev-issuer' }, systemNamespaces: ['x'], guard: { reconciler: ['system:serviceaccount:furnish:furnish-reconciler'] } });
    expect(audienceFor(config, 'validate-template')).toBe('https://vt.example.com');
    expect(audienceFor(config, 'mutate-namespace')).toBe('https://fn.example.com/mutate-namespace');
  });

  it("takes a deployed function's own URL as its audience from FURNISH_AUDIENCE, under a per-webhook audience", async () => {
    const env = { FURNISH_CLUSTER_ID: 'c', FURNISH_JWT_SECRET: TEST_SECRET, FURNISH_PUBLIC_URL: 'https://fn.example.com' };
    const deployed = await loadConfig({ ...env, FURNISH_AUDIENCE: 'https://europe-west1-p.cloudfunctions.net/furnish-mutate-namespace' });
    expect(audienceFor(deployed, 'mutate-namespace')).toBe('https://europe-west1-p.cloudfunctions.net/furnish-mutate-namespace');
    expect(audienceFor(configFrom({ ...deployed, audiences: { 'mutate-namespace': 'https://m.example.com' } }), 'mutate-namespace')).toBe('https://m.example.com');
    await expect(loadConfig({ ...env, FURNISH_AUDIENCE: 'not a url' })).rejects.toThrow('FURNISH_AUDIENCE');
  });

  it('names the bad setting: environment variable or file path', async () => {
    expect(await failure(testEnv({ FURNISH_JWT_SECRET: 'short' }))).toBe('FURNISH_JWT_SECRET (clusters[0].jwt.secret): must be at least 32 bytes');
    expect(await failure(testEnv({ FURNISH_API_SERVER: 'not a url' }))).toBe('FURNISH_API_SERVER (clusters[0].api.server): must be a URL, got "not a url"');
    expect(await failure(testEnv({ FURNISH_JWT_JWKS: '{nope' }))).toMatch(/^FURNISH_JWT_JWKS \(clusters\[0\]\.jwt\.jwks\): not valid JSON/);
    expect(await failure({})).toMatch(/^configuration clusters: at least one cluster is required/);
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ clusters: [{ id: 'a', jwt: { secret: TEST_SECRET } }, { id: 'b', jwt: { secret: 'too-short' } }] }));
    expect(await failure({ FURNISH_CONFIG_FILE: file })).toBe(`FURNISH_CONFIG_FILE(${file}) clusters[1].jwt.secret: must be at least 32 bytes`);
    expect(await failure({ FURNISH_CONFIG_FILE: join(dir, 'missing.yaml') })).toMatch(/^FURNISH_CONFIG_FILE: cannot read/);
  });

  it('refuses ambiguous or incomplete settings', () => {
    const cluster = (extra: object) => ({ clusters: [{ id: 'a', jwt: { secret: TEST_SECRET }, ...extra }] });
    const message = (raw: object) => {
      try {
        configFrom(raw as Record<string, unknown>);
        return 'accepted';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(message(cluster({ jwt: { secret: TEST_SECRET, jwksUrl: 'https://k' } }))).toBe('configuration clusters[0].jwt: needs exactly one of secret, jwks or jwksUrl (has 2)');
    expect(message(cluster({ id: 'Prod_1' }))).toMatch(/clusters\[0\]\.id: must be a DNS label/);
    expect(message(cluster({ jwt: { jwks: { keys: [] } } }))).toMatch(/clusters\[0\]\.jwt\.jwks: must be a JWKS/);
    expect(message(cluster({ api: { server: 'https://a', caPem: 'nope' } }))).toMatch(/clusters\[0\]\.api\.caPem: must be PEM/);
    expect(message(cluster({ autoOptOutPrincipals: 'ci' }))).toBe('configuration clusters[0].autoOptOutPrincipals: must be a list of strings');
    expect(message({ ...cluster({}), audiences: { 'mutate-pods': 'https://x' } })).toMatch(/audiences\.mutate-pods: is not a webhook/);
    expect(message({ clusters: [cluster({}).clusters[0], cluster({}).clusters[0]] })).toBe('configuration clusters[1].id: duplicates cluster "a"');
    expect(message({ ...cluster({}), maxBodyBytes: -1 })).toBe('configuration maxBodyBytes: must be an integer of at least 1, got -1');
    expect(() => audienceFor(configFrom(cluster({})), 'mutate-namespace')).toThrow('FURNISH_PUBLIC_URL (publicUrl): is required');
  });
});
