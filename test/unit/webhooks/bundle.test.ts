// The webhook bundles as Cloud Functions runs them: self-contained apart from the framework, and
// never carrying the full Kubernetes client (DESIGN.md, Performance budget).
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFunction } from '../../../scripts/build.ts';
import { WEBHOOKS } from '../../../shared/config/types.ts';

const out = mkdtempSync(join(tmpdir(), 'furnish-build-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('webhook bundles', () => {
  it.each(WEBHOOKS.map((w) => [w]))('%s bundles without @kubernetes/client-node, depending only on the functions framework', async (name) => {
    const built = await buildFunction(name, out);
    expect(built.packages).not.toContain('@kubernetes/client-node');
    expect(built.packages).toEqual(expect.arrayContaining(['jose', 'fast-json-patch']));
    const code = readFileSync(join(built.dir, 'index.js'), 'utf8');
    expect(code).not.toMatch(/node_modules\/@kubernetes\/client-node|CoreV1Api/);
    expect(JSON.parse(readFileSync(join(built.dir, 'package.json'), 'utf8'))).toMatchObject({ type: 'module', main: 'index.js', dependencies: { '@google-cloud/functions-framework': expect.any(String) } });
    expect(built.hash).toMatch(/^[0-9a-f]{64}$/);
  });
});
