// Bad input, fuzzed: at least 10,000 generated requests to each of the four functions, served by
// the functions framework in this process and gated as deployed (no body read before the caller is
// authenticated): bodies that are not JSON, JSON of the wrong shape, real reviews with fields
// replaced or removed, wrong content types, unknown kinds, hostile headers and credentials (bearer
// tokens and path credentials, valid, forged, expired, without exp), deep nesting (up to 3,000
// levels, in the object or in fields no decoder knows) and sizes around the limit, with and
// without Content-Length. Every answer is a 200
// AdmissionReview echoing the uid, or a 4xx with a message; never a 5xx, never a crash. Cases are
// drawn from fast-check arbitraries (a fixed seed) and sent 16 at a time.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import fc from 'fast-check';
import { Agent, request } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { credentialPath } from '../../shared/auth/path-credential.ts';
import { gateServer } from '../../shared/webhooks/body-gate.ts';
import { admissionFixture, ADMISSION_FIXTURES, mintToken, SCENARIO_TEMPLATES, TEST_CLUSTER, testEnv } from '../support/fixtures.ts';
import { WEBHOOKS, type WebhookName } from '../../shared/config/types.ts';
import { startFakeApiServer } from '../functions/fake-api-server.ts';
import type { FakeApiServer } from '../functions/fake-api-server.ts';

type Webhook = WebhookName;
/** A small limit keeps the size cases cheap; the logic is the same at 4 MiB. */
const MAX_BODY = 64 * 1024;
const PATH_CREDENTIAL = 'fuzz-path-credential-0123456789abcdefghijklmnop';
const PER_WEBHOOK = 10_000;
const SEED = 20_260_901;

const ports: Record<string, number> = {};
const servers: Server[] = [];
// A fresh connection per request: measured faster here than keep-alive, and every refusal may close its connection anyway.
const agent = new Agent({ keepAlive: false, maxSockets: 16 });
let api: FakeApiServer;
let token: string;
const sent = Object.fromEntries(WEBHOOKS.map((w) => [w, 0])) as Record<Webhook, number>;

beforeAll(async () => {
  api = await startFakeApiServer(SCENARIO_TEMPLATES);
  Object.assign(process.env, testEnv({ FURNISH_API_SERVER: api.url, FURNISH_MAX_BODY_BYTES: String(MAX_BODY), FURNISH_PATH_CREDENTIALS: PATH_CREDENTIAL }));
  token = await mintToken();
  for (const name of WEBHOOKS) {
    await import(`../../functions/${name}/index.ts`);
    const server = gateServer(getTestServer(name));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    ports[name] = (server.address() as AddressInfo).port;
  }
});

afterAll(async () => {
  agent.destroy();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
  await api.close();
});

interface Case {
  webhook: Webhook;
  body: string | Buffer;
  /** null: no Content-Type header. */
  contentType?: string | null;
  /** undefined: the cluster's valid bearer token; null: none. */
  authorization?: string | null;
  path?: string;
  method?: string;
  /** Send chunked, without Content-Length. */
  chunked?: boolean;
  /** The uid a 200 must echo. */
  uid?: string;
  /** The only acceptable status, when the case decides it. */
  status?: number | number[];
}

interface Outcome {
  status: number;
  text: string;
}

function send(c: Case): Promise<Outcome> {
  sent[c.webhook] += 1;
  const body = typeof c.body === 'string' ? Buffer.from(c.body) : c.body;
  const headers: Record<string, string> = {};
  if (c.contentType !== null) headers['content-type'] = c.contentType ?? 'application/json';
  if (c.authorization !== null) headers.authorization = c.authorization ?? `Bearer ${token}`;
  if (!c.chunked) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request({ host: '127.0.0.1', port: ports[c.webhook], path: c.path ?? '/', method: c.method ?? 'POST', headers, agent }, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    // The server may answer (401, 413) and close before the body is all sent: that is not an error.
    req.on('error', (e) => (answered ? undefined : reject(e)));
    if (c.chunked) {
      for (let at = 0; at < body.length; at += 16 * 1024) req.write(body.subarray(at, at + 16 * 1024));
      req.end();
    } else req.end(body);
  });
}

/** The invariant: a decision echoing the uid, or a clear refusal; never a server error. */
function check(c: Case, outcome: Outcome): void {
  const where = `${c.webhook} ${c.method ?? 'POST'} ${c.path ?? '/'} (${outcome.status}): ${outcome.text.slice(0, 200)}`;
  if (outcome.status >= 500 || outcome.status < 200) throw new Error(`server error or no answer from ${where}`);
  if (c.status !== undefined && ![c.status].flat().includes(outcome.status)) throw new Error(`expected ${JSON.stringify(c.status)} from ${where}`);
  if (outcome.status === 200) {
    const review = JSON.parse(outcome.text) as { kind?: string; response?: { uid?: string } };
    if (review.kind !== 'AdmissionReview' && outcome.text !== '{"status":"ok"}') throw new Error(`200 without an AdmissionReview from ${where}`);
    if (c.uid !== undefined && review.kind === 'AdmissionReview' && review.response?.uid !== c.uid) throw new Error(`uid not echoed by ${where}`);
    return;
  }
  if (outcome.status < 400) throw new Error(`unexpected status from ${where}`);
  const message = outcome.text.startsWith('{') ? (JSON.parse(outcome.text) as { message?: unknown }).message : outcome.text;
  if (typeof message !== 'string' || message.length <= 5) throw new Error(`refusal without a message from ${where}`);
  if (message.includes(PATH_CREDENTIAL)) throw new Error(`the path credential was echoed by ${where}`);
}

/** Sends every case, 16 at a time, and checks each answer. */
async function runAll(cases: readonly Case[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]!;
      check(c, await send(c));
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

const draw = <T,>(arb: fc.Arbitrary<T>, n: number, salt: number): T[] => fc.sample(arb, { numRuns: n, seed: SEED + salt });
const fixture = fc.constantFrom(...ADMISSION_FIXTURES);
/** Values of every JSON type, including nasty strings and prototype keys. */
const anyJson = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom(null, '', 0, -1, true, [], {}, '__proto__', { __proto__: { allowed: true } }, 'constructor'));
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

/** A review captured from kube-apiserver, for this webhook when there is one of its kind. */
function reviewFor(name: (typeof ADMISSION_FIXTURES)[number]) {
  return admissionFixture(name).review as unknown as { request: Record<string, unknown> & { uid: string } };
}

/** Nested `levels` deep, as objects or arrays. */
function nested(levels: number, arrays: boolean): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < levels; i++) v = arrays ? [v] : { a: v };
  return v;
}

// Cases per webhook, by kind: together 10,400 for each.
const COUNTS = { notJson: 1500, wrongShape: 1500, mutated: 3000, contentTypes: 800, unknownKinds: 500, credentials: 1600, nesting: 800, sizes: 700 };

function notJsonCases(w: Webhook, n: number, salt: number): Case[] {
  const notJson = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string().map((s) => `{${s}`), fc.constantFrom('', ' ', '\u0000', '{"kind":"AdmissionReview"', '[[[[[[')).filter((s) => {
    try {
      JSON.parse(s);
      return false;
    } catch {
      return true;
    }
  });
  return draw(notJson, n, salt).map((body) => ({ webhook: w, body, status: 400 }));
}

function wrongShapeCases(w: Webhook, n: number, salt: number): Case[] {
  const wrongShape = fc.oneof(
    anyJson,
    fc.record({ kind: fc.oneof(fc.constant('AdmissionReview'), fc.string()), apiVersion: fc.oneof(fc.constant('admission.k8s.io/v1'), fc.constant('admission.k8s.io/v1beta1'), fc.string()), request: anyJson }, { requiredKeys: [] }),
  );
  return draw(wrongShape, n, salt).map((value) => ({ webhook: w, body: JSON.stringify(value) ?? 'null', status: 400 }));
}

function mutatedCases(w: Webhook, n: number, salt: number): Case[] {
  const edits = fc.array(fc.record({ path: fc.constantFrom(...FIELDS), value: anyJson, remove: fc.boolean() }), { minLength: 1, maxLength: 3 });
  return draw(fc.tuple(fixture, edits), n, salt).map(([name, changes]) => {
    const review = reviewFor(name);
    for (const c of changes) setPath(review.request, c.path, structuredClone(c.value), c.remove);
    return { webhook: w, body: JSON.stringify(review), uid: typeof review.request.uid === 'string' ? review.request.uid : undefined };
  });
}

function contentTypeCases(w: Webhook, n: number, salt: number): Case[] {
  const contentType = fc.oneof(
    fc.constantFrom('text/plain', 'application/yaml', 'application/x-www-form-urlencoded', 'application/octet-stream', 'application/merge-patch+json', 'multipart/form-data; boundary=x', 'application/cloudevents+json'),
    fc.string({ maxLength: 40 }).filter((s) => !/^\s*application\/json\s*(;|$)/i.test(s) && /^[\x21-\x7e ]*$/.test(s)),
  );
  return draw(fc.tuple(fixture, fc.option(contentType, { nil: null })), n, salt).map(([name, type]) => ({ webhook: w, body: JSON.stringify(reviewFor(name)), contentType: type, status: 415 }));
}

function unknownKindCases(w: Webhook, n: number, salt: number): Case[] {
  const gvk = fc.record({ group: fc.string({ maxLength: 10 }), version: fc.constantFrom('v1', 'v2beta1', ''), kind: fc.string({ maxLength: 12 }) });
  return draw(fc.tuple(fixture, gvk, fc.string({ maxLength: 12 })), n, salt).map(([name, kind, resource]) => {
    const review = reviewFor(name);
    review.request.kind = kind;
    review.request.resource = { group: kind.group, version: kind.version, resource };
    return { webhook: w, body: JSON.stringify(review), uid: review.request.uid };
  });
}

/** Hostile Authorization headers, paths and methods: only the valid credentials get past 401. */
async function credentialCases(w: Webhook, n: number, salt: number): Promise<Case[]> {
  const body = JSON.stringify(reviewFor('001-mutate-CREATE-namespaces-team-a-alice'));
  const tokens = [
    await mintToken({ expiresIn: null }), await mintToken({ expiresIn: '-1h' }), await mintToken({ secret: 'x'.repeat(40) }),
    await mintToken({ cluster: 'other' }), await mintToken({ audience: 'https://elsewhere.example/mutate-namespace' }),
  ];
  const header = fc.oneof(
    fc.constantFrom(...tokens.map((t) => `Bearer ${t}`), 'Bearer', 'Bearer ', 'Basic YWxpY2U6eA==', `bearer ${token}x`, `Bearer ${token.split('.').slice(0, 2).join('.')}.`, 'Bearer a.b.c'),
    fc.string({ maxLength: 300 }).filter((s) => /^[\x20-\x7e]*$/.test(s) && s.trim() !== ''),
    fc.string({ maxLength: 200 }).filter((s) => /^[A-Za-z0-9._~+/=-]+$/.test(s)).map((s) => `Bearer ${s}`),
  );
  const segment = fc.string({ maxLength: 60 }).map((s) => encodeURIComponent(s));
  const path = fc.oneof(
    fc.tuple(segment, segment).map(([c, k]) => `/${w}/c/${c}/${k}`),
    segment.map((k) => credentialPath(TEST_CLUSTER, k || 'x')),
    fc.constantFrom(credentialPath(TEST_CLUSTER, PATH_CREDENTIAL.slice(0, -1)), credentialPath('other', PATH_CREDENTIAL), `/c/${TEST_CLUSTER}/${PATH_CREDENTIAL}/more`, `/c//${PATH_CREDENTIAL}`),
  );
  const drawn = draw(fc.oneof(
    fc.record({ authorization: fc.option(header, { nil: null }), path: fc.constant('/') }),
    fc.record({ authorization: fc.constant(null), path }),
  ), n - 4, salt);
  const cases: Case[] = drawn.map((d) => ({ webhook: w, body, authorization: d.authorization, path: d.path, status: 401 }));
  // Between them, the valid ones: the bearer token and the path credential (with a query string).
  cases.push(
    { webhook: w, body, status: [200, 400] },
    { webhook: w, body, authorization: null, path: `/${w}${credentialPath(TEST_CLUSTER, PATH_CREDENTIAL)}`, status: [200, 400] },
    { webhook: w, body, authorization: null, path: `${credentialPath(TEST_CLUSTER, PATH_CREDENTIAL)}?timeout=5s`, status: [200, 400] },
    { webhook: w, body, method: 'PUT', status: 405 },
  );
  return cases;
}

function nestingCases(w: Webhook, n: number, salt: number): Case[] {
  // Fields no decoder knows nest under the same limit (the body's bytes are scanned before parsing).
  const where = fc.constantFrom('object', 'oldObject', 'object.spec', 'object.metadata', 'userInfo.extra', 'object.metadata.labels', 'unknown', 'options');
  return draw(fc.tuple(fixture, where, fc.integer({ min: 90, max: 3000 }), fc.boolean()), n, salt).map(([name, at, levels, arrays]) => {
    const review = reviewFor(name);
    setPath(review.request, at === 'object' || at === 'oldObject' ? `${at}.deep` : at, nested(levels, arrays), false);
    return { webhook: w, body: JSON.stringify(review), uid: review.request.uid };
  });
}

function sizeCases(w: Webhook, n: number, salt: number): Case[] {
  const base = JSON.stringify(reviewFor('001-mutate-CREATE-namespaces-team-a-alice'));
  return draw(fc.tuple(fc.integer({ min: 0, max: 3 * MAX_BODY }), fc.boolean(), fc.boolean()), n, salt).map(([size, chunked, anonymous]) => {
    // A review padded with spaces to `size` bytes (JSON allows trailing whitespace), or cut short.
    const body = size >= base.length ? base + ' '.repeat(size - base.length) : base.slice(0, size);
    // Within the limit, a complete review is decided (200) or judged not this webhook's (400).
    const status = anonymous ? 401 : size > MAX_BODY ? 413 : size >= base.length ? [200, 400] : 400;
    return { webhook: w, body, chunked, authorization: anonymous ? null : undefined, status };
  });
}

describe('fuzzed bad input, at least 10,000 requests per webhook (every one in WEBHOOKS)', () => {
  WEBHOOKS.forEach((w, i) => {
    it(`${w}: every kind of bad input answered with a decision or a 4xx`, async () => {
      const salt = i * 100;
      const cases: Case[] = [
        ...notJsonCases(w, COUNTS.notJson, salt + 1),
        ...wrongShapeCases(w, COUNTS.wrongShape, salt + 2),
        ...mutatedCases(w, COUNTS.mutated, salt + 3),
        ...contentTypeCases(w, COUNTS.contentTypes, salt + 4),
        ...unknownKindCases(w, COUNTS.unknownKinds, salt + 5),
        ...(await credentialCases(w, COUNTS.credentials, salt + 6)),
        ...nestingCases(w, COUNTS.nesting, salt + 7),
        ...sizeCases(w, COUNTS.sizes, salt + 8),
      ];
      await runAll(cases);
      expect(sent[w]).toBeGreaterThanOrEqual(PER_WEBHOOK);
      // ~15 s on an idle 2-core machine; generous for a loaded one.
    }, 300_000);
  });

  it('reports the count, and every function still answers', async () => {
    const total = Object.values(sent).reduce((a, b) => a + b, 0);
    process.stdout.write(`fuzz: ${total} requests (${WEBHOOKS.map((w) => `${w} ${sent[w]}`).join(', ')}), 0 crashes, 0 5xx\n`);
    for (const w of WEBHOOKS) {
      expect(sent[w]).toBeGreaterThanOrEqual(PER_WEBHOOK);
      const health = await send({ webhook: w, body: '', method: 'GET', path: '/healthz', authorization: null });
      expect(health.status).toBe(200);
    }
  });
});
