// The webhook bundles as Cloud Functions runs them: self-contained apart from the framework, and
// never carrying the full Kubernetes client (DESIGN.md, Performance budget).
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { buildFunction } from '../../../scripts/build.ts';
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
