// Bad input, fuzzed: over 10,000 generated requests to the four functions as the framework serves
// them: not JSON, JSON of the wrong shape, real reviews with fields replaced or removed (uid,
// object, kind, userInfo, ...), wrong content types, oversized bodies, unknown kinds. Every answer
// is a 200 AdmissionReview echoing the uid, or a 4xx with a message; never a 5xx, never a crash.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import fc from 'fast-check';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { admissionFixture, ADMISSION_FIXTURES, mintToken, SCENARIO_TEMPLATES, testEnv } from '../support/fixtures.ts';
import { startFakeApiServer } from '../functions/fake-api-server.ts';
import type { FakeApiServer } from '../functions/fake-api-server.ts';

const WEBHOOKS = ['mutate-namespace', 'validate-namespace', 'validate-template', 'guard-initializing'] as const;
const urls: Record<string, string> = {};
const servers: Server[] = [];
let api: FakeApiServer;
let token: string;
let sent = 0;

beforeAll(async () => {
  api = await startFakeApiServer(SCENARIO_TEMPLATES);
  Object.assign(process.env, testEnv({ FURNISH_API_SERVER: api.url }));
  token = await mintToken();
  for (const name of WEBHOOKS) {
    await import(`../../functions/${name}/index.ts`);
    const server = getTestServer(name);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    urls[name] = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  }
});

afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
  await api.close();
});

interface Outcome {
  status: number;
  text: string;
}

async function post(webhook: string, body: string | Uint8Array, contentType: string | null = 'application/json'): Promise<Outcome> {
  sent += 1;
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (contentType !== null) headers['content-type'] = contentType;
  const res = await fetch(urls[webhook]!, { method: 'POST', headers, body });
  return { status: res.status, text: await res.text() };
}

/** The invariant: a decision echoing the uid, or a clear refusal; never a server error. */
function expectWellBehaved(outcome: Outcome, uid?: unknown): void {
  expect(outcome.status).not.toBeGreaterThanOrEqual(500);
  if (outcome.status === 200) {
    const review = JSON.parse(outcome.text);
    expect(review.kind).toBe('AdmissionReview');
    if (uid !== undefined) expect(review.response.uid).toBe(uid);
    return;
  }
  expect(outcome.status).toBeGreaterThanOrEqual(400);
  expect(outcome.status).toBeLessThan(500);
  const message = outcome.text.startsWith('{') ? JSON.parse(outcome.text).message : outcome.text;
  expect(typeof message).toBe('string');
  expect(message.length).toBeGreaterThan(5);
}

const webhook = fc.constantFrom(...WEBHOOKS);
const fixture = fc.constantFrom(...ADMISSION_FIXTURES);
/** Values of every JSON type, including nasty strings and deep nesting. */
const anyJson = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom(null, '', 0, -1, true, [], {}, '__proto__', { __proto__: { allowed: true } }));
const FIELDS = [
  'uid', 'kind', 'resource', 'operation', 'userInfo', 'object', 'oldObject', 'name', 'namespace', 'dryRun', 'options', 'subResource',
  'object.metadata', 'object.metadata.name', 'object.metadata.labels', 'object.metadata.annotations', 'object.spec', 'object.spec.templates',
  'oldObject.metadata', 'oldObject.metadata.labels', 'oldObject.metadata.annotations', 'userInfo.username', 'userInfo.groups', 'userInfo.extra',
  'kind.kind', 'kind.group', 'resource.resource', 'resource.group',
];

function setPath(root: Record<string, unknown>, path: string, value: unknown, remove: boolean): void {
  const keys = path.split('.');
  let node: unknown = root;
  for (const key of keys.slice(0, -1)) {
    if (typeof node !== 'object' || node === null) return;
    node = (node as Record<string, unknown>)[key];
  }
  if (typeof node !== 'object' || node === null) return;
  if (remove) Reflect.deleteProperty(node, keys.at(-1)!);
  else (node as Record<string, unknown>)[keys.at(-1)!] = value;
}

const RUNS = { notJson: 2000, jsonValues: 2000, mutatedReviews: 4000, contentTypes: 1500, unknownKinds: 600 };

describe('fuzzed bad input', () => {
  it('text that is not JSON', async () => {
    const notJson = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string().map((s) => `{${s}`)).filter((s) => {
      try {
        JSON.parse(s);
        return false;
      } catch {
        return true;
      }
    });
    await fc.assert(fc.asyncProperty(webhook, notJson, async (w, body) => expectWellBehaved(await post(w, body))), { numRuns: RUNS.notJson });
  });

  it('JSON of the wrong shape', async () => {
    const wrongShape = fc.oneof(
      anyJson,
      fc.record({ kind: fc.oneof(fc.constant('AdmissionReview'), fc.string()), apiVersion: fc.oneof(fc.constant('admission.k8s.io/v1'), fc.string()), request: anyJson }, { requiredKeys: [] }),
    );
    await fc.assert(fc.asyncProperty(webhook, wrongShape, async (w, value) => {
      const outcome = await post(w, JSON.stringify(value) ?? 'null');
      expectWellBehaved(outcome);
      expect(outcome.status).not.toBe(200); // nothing here carries a usable request
    }), { numRuns: RUNS.jsonValues });
  });

  it('real reviews with fields replaced or removed (missing uid, missing object, wrong types, ...)', async () => {
    const edits = fc.array(fc.record({ path: fc.constantFrom(...FIELDS), value: anyJson, remove: fc.boolean() }), { minLength: 1, maxLength: 3 });
    await fc.assert(fc.asyncProperty(webhook, fixture, edits, async (w, name, changes) => {
      const review = admissionFixture(name).review as unknown as { request: Record<string, unknown> };
      for (const c of changes) setPath(review.request, c.path, structuredClone(c.value), c.remove);
      expectWellBehaved(await post(w, JSON.stringify(review)), typeof review.request.uid === 'string' ? review.request.uid : undefined);
    }), { numRuns: RUNS.mutatedReviews });
  });

  it('wrong content types (and none)', async () => {
    const contentType = fc.oneof(
      fc.constantFrom('text/plain', 'application/yaml', 'application/x-www-form-urlencoded', 'application/octet-stream', 'application/merge-patch+json', 'multipart/form-data; boundary=x'),
      fc.string({ maxLength: 40 }).filter((s) => !/^\s*application\/json\s*(;|$)/i.test(s) && /^[\x21-\x7e ]*$/.test(s)),
    );
    await fc.assert(fc.asyncProperty(webhook, fixture, fc.option(contentType, { nil: null }), async (w, name, type) => {
      const outcome = await post(w, JSON.stringify(admissionFixture(name).review), type);
      expectWellBehaved(outcome);
      expect(outcome.status).toBe(415);
    }), { numRuns: RUNS.contentTypes });
    // JSON in a charset that is not UTF-8: refused by the framework's parser (415 or 400).
    for (const charset of ['utf-16', 'latin1', 'koi8-r']) {
      const outcome = await post('mutate-namespace', JSON.stringify(admissionFixture('001-mutate-CREATE-namespaces-team-a-alice').review), `application/json; charset=${charset}`);
      expectWellBehaved(outcome);
      expect([400, 415]).toContain(outcome.status);
    }
  });

  it('unknown kinds and resources', async () => {
    const gvk = fc.record({ group: fc.string({ maxLength: 10 }), version: fc.constantFrom('v1', 'v2beta1', ''), kind: fc.string({ maxLength: 12 }) });
    await fc.assert(fc.asyncProperty(webhook, fixture, gvk, fc.string({ maxLength: 12 }), async (w, name, kind, resource) => {
      const review = admissionFixture(name).review;
      review.request.kind = kind;
      review.request.resource = { group: kind.group, version: kind.version, resource };
      const outcome = await post(w, JSON.stringify(review));
      expectWellBehaved(outcome, review.request.uid);
      if (w !== 'guard-initializing' && outcome.status !== 200) expect(JSON.parse(outcome.text).message).toMatch(/judges|must be|required/);
    }), { numRuns: RUNS.unknownKinds });
  });

  it('oversized bodies get 413', async () => {
    const big = JSON.stringify({ ...admissionFixture('001-mutate-CREATE-namespaces-team-a-alice').review, pad: 'x'.repeat(4 * 1024 * 1024) });
    for (const w of WEBHOOKS) {
      const outcome = await post(w, big);
      expectWellBehaved(outcome);
      expect(outcome.status).toBe(413);
    }
  });

  it('sent at least 10,000 cases and every function still answers', async () => {
    expect(sent).toBeGreaterThanOrEqual(10_000);
    for (const w of WEBHOOKS) expect((await fetch(`${urls[w]}healthz`)).status).toBe(200);
  });
});
