// The webhook bundles as Cloud Functions runs them: self-contained apart from the framework, and
// never carrying the full Kubernetes client (DESIGN.md, Performance budget).
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { buildFunction, FORBIDDEN_AT_START } from '../../../scripts/build.ts';
import { testEnv } from '../../support/fixtures.ts';
import { WEBHOOKS } from '../../../shared/config/types.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const out = mkdtempSync(join(tmpdir(), 'furnish-build-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('webhook bundles', () => {
  it.each(WEBHOOKS.map((w) => [w]))('%s bundles without @kubernetes/client-node; the framework and (loaded on demand) yaml stay outside', async (name) => {
    const built = await buildFunction(name, out);
    expect(built.packages).not.toContain('@kubernetes/client-node');
    expect(built.packages).toEqual(expect.arrayContaining(['jose', 'fast-json-patch']));
    const code = readFileSync(join(built.dir, 'index.js'), 'utf8');
    expect(code).not.toMatch(/node_modules\/@kubernetes\/client-node|CoreV1Api/);
    expect(JSON.parse(readFileSync(join(built.dir, 'package.json'), 'utf8'))).toMatchObject({ type: 'module', main: 'index.js', dependencies: { '@google-cloud/functions-framework': expect.any(String), yaml: expect.any(String) } });
    expect(built.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("starts without loading Node's undici, http2 or worker_threads", async () => {
    const built = await buildFunction('validate-namespace', join(root, 'dist', 'test-bundles'));
    const probe = `await import(${JSON.stringify(join(built.dir, 'index.js'))}); console.log(JSON.stringify(process.moduleLoadList));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { encoding: 'utf8', env: { ...process.env, ...testEnv() }, cwd: root });
    expect(run.stderr).toBe('');
    const loaded = JSON.parse(run.stdout) as string[];
    for (const heavy of ['undici', 'http2', 'worker_threads']) expect(loaded.filter((m) => m.includes(heavy))).toEqual([]);
    rmSync(join(root, 'dist', 'test-bundles'), { recursive: true, force: true });
  });
});

describe('reconciler bundles', () => {
  it.each([['reconcile-namespace'], ['reconcile-template'], ['record-billing'], ['watch-relay']])('%s loads the Kubernetes client, gRPC Pub/Sub and BigQuery only where used (lazy chunks)', async (name) => {
    const built = await buildFunction(name, join(root, 'dist', `test-start-${name}`));
    try {
      expect(built.startPackages.filter((p) => FORBIDDEN_AT_START.includes(p))).toEqual([]);
      // The lazy chunks hold them still: a kubeconfig plugin or a publish loads them on first use.
      expect(built.packages).toEqual(expect.arrayContaining(name === 'record-billing' ? ['@kubernetes/client-node', '@google-cloud/bigquery'] : ['@kubernetes/client-node', '@google-cloud/pubsub']));
      // What importing the bundle actually reads from it: index.js and small shared chunks, not the MiBs of the lazy ones.
      const probe = `import { registerHooks } from 'node:module'; const seen = []; registerHooks({ load(url, ctx, next) { seen.push(url); return next(url, ctx); } }); await import(${JSON.stringify(join(built.dir, 'index.js'))}); console.log(JSON.stringify(seen));`;
      const run = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { encoding: 'utf8', env: { ...process.env, ...testEnv() }, cwd: root });
      expect(run.stderr).toBe('');
      const loaded = (JSON.parse(run.stdout) as string[]).filter((u) => u.startsWith('file:') && u.includes(built.dir)).map((u) => new URL(u).pathname);
      expect(loaded).toContain(join(built.dir, 'index.js'));
      const loadedBytes = loaded.reduce((n, f) => n + statSync(f).size, 0);
      expect(loadedBytes).toBeLessThan(1024 * 1024);
      expect(built.totalBytes).toBeGreaterThan(10 * 1024 * 1024);
    } finally {
      rmSync(built.dir, { recursive: true, force: true });
    }
  });
});
