// The four functions as the functions framework serves them (getTestServer + supertest), fed the
// AdmissionReviews kube-apiserver 1.26 really sent, with the headers and path it used.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import type { Server } from 'node:http';
import { decodePatch } from '../../shared/admission/index.ts';
import type { AdmissionReview } from '../../shared/admission/index.ts';
import { admissionFixture, asApplySetMembers, mintToken, namespaceTemplate, SCENARIO_TEMPLATES, TEST_CLUSTER, testEnv } from '../support/fixtures.ts';
import { credentialPath } from '../../shared/auth/path-credential.ts';
import { gateServer } from '../../shared/webhooks/body-gate.ts';
import type { AdmissionFixtureName } from '../support/fixtures.ts';
import { grant, startFakeApiServer } from './fake-api-server.ts';
import type { FakeApiServer } from './fake-api-server.ts';

let api: FakeApiServer;
let token: string;
const servers: Record<string, Server> = {};
/** The cluster's path credential (managed control planes), besides its JWT. */
const PATH_CREDENTIAL = 'path-credential-of-the-test-cluster-0123456789';

beforeAll(async () => {
  api = await startFakeApiServer(SCENARIO_TEMPLATES);
  Object.assign(process.env, testEnv({ FURNISH_API_SERVER: api.url, FURNISH_SAR_CACHE_TTL_MS: '0', FURNISH_PATH_CREDENTIALS: PATH_CREDENTIAL }));
  for (const name of ['mutate-namespace', 'validate-namespace', 'validate-template', 'guard-initializing', 'protect-objects']) {
    await import(`../../functions/${name}/index.ts`);
    // As deployed: the gate holds every body until the caller is authenticated.
    servers[name] = gateServer(getTestServer(name));
  }
  token = await mintToken();
});
let listened: Server | undefined;
/** The URL of a server started on loopback (closed after the suite). */
async function listening(server: Server): Promise<string> {
  if (!server.listening) await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  listened = server;
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
}
afterAll(async () => {
  if (listened) {
    listened.closeAllConnections();
    await new Promise<void>((r) => listened!.close(() => r()));
  }
  await api.close();
});

/** Posts a captured call as kube-apiserver did (same path and content type), with our token. */
/** The protect-objects captures predate the ApplySet label counting as ownership: add it as Furnish applies it now. */
const members = (review: AdmissionReview) => void asApplySetMembers(review.request!);

async function send(fn: string, fixture: AdmissionFixtureName, change?: (review: AdmissionReview) => void) {
  const captured = admissionFixture(fixture);
  change?.(captured.review);
  const res = await request(servers[fn]!)
    .post(captured.path)
    .set('content-type', captured.headers['content-type']!)
    .set('authorization', `Bearer ${token}`)
    .send(JSON.stringify(captured.review));
  expect(res.status).toBe(200);
  const review = res.body as AdmissionReview;
  expect(review).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: captured.review.request!.uid } });
  return review.response!;
}

describe('mutate-namespace function', () => {
  it('kubectl create namespace as alice: creator annotation, the built-in initializer and phase=pending', async () => {
    const response = await send('mutate-namespace', '001-mutate-CREATE-namespaces-team-a-alice');
    expect(response.allowed).toBe(true);
    expect(response.patchType).toBe('JSONPatch');
    // The fake API server serves no NamespaceInitializationConfiguration (404): only `furnish`.
    expect(decodePatch(response)).toEqual(
      expect.arrayContaining([
        { op: 'add', path: '/metadata/annotations', value: { 'furnish.dev/creator': 'alice', 'furnish.dev/creator-identity': 'user=alice&group=system%3Aauthenticated', 'furnish.dev/initializers': 'furnish' } },
        { op: 'add', path: '/metadata/labels/furnish.dev~1phase', value: 'pending' },
      ]),
    );
  });

  it('kubectl annotate --overwrite furnish.dev/creator=mallory leaves alice in place', async () => {
    const response = await send('mutate-namespace', '009-mutate-UPDATE-namespaces-team-a-admin', (r) => {
      r.request!.oldObject!.metadata.annotations = { 'furnish.dev/creator': 'alice' };
    });
    expect(decodePatch(response)).toEqual([{ op: 'replace', path: '/metadata/annotations/furnish.dev~1creator', value: 'alice' }]);
  });

  it('answers every mutate call kube-apiserver made without error', async () => {
    for (const name of ['007-mutate-UPDATE-namespaces-team-a-alice', '011-mutate-CREATE-namespaces-dry-one-alice', '018-mutate-DELETE-namespaces-priv-b-admin', '024-mutate-CREATE-namespaces-team-c-alice'] as const) {
      expect((await send('mutate-namespace', name)).allowed).toBe(true);
    }
  });
});

describe('validate-namespace function', () => {
  const bobCreatesPrivileged = (r: AdmissionReview) => {
    r.request!.object!.metadata.annotations!['furnish.dev/creator'] = 'bob';
    r.request!.object!.metadata.labels!['furnish.dev/phase'] = 'pending';
  };

  it('bob creating namespace-class=privileged without `use` is refused; with `use` granted succeeds', async () => {
    api.setObjects([]);
    const refused = await send('validate-namespace', '004-validate-CREATE-namespaces-priv-b-bob', bobCreatesPrivileged);
    expect(refused).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(refused.status!.message).toBe('user "bob" may not use NamespaceTemplate "privileged": needs verb "use" on namespacetemplates.furnish.dev, resourceName "privileged"');
    const sar = api.calls.filter((c) => c.path.endsWith('subjectaccessreviews')).at(-1)!;
    expect(sar.body).toMatchObject({ spec: { user: 'bob', groups: ['system:authenticated'], resourceAttributes: { verb: 'use', name: 'privileged' } } });

    api.setObjects(grant('bob', 'use', 'furnish.dev', 'namespacetemplates', 'privileged'));
    expect(await send('validate-namespace', '004-validate-CREATE-namespaces-priv-b-bob', bobCreatesPrivileged)).toMatchObject({ allowed: true });
  });

  it('opting out without `optout` and relabelling the phase (only Furnish sets it) are refused', async () => {
    api.setObjects([]);
    const optOut = await send('validate-namespace', '008-validate-UPDATE-namespaces-team-a-alice', (r) => {
      r.request!.object!.metadata.annotations = { 'furnish.dev/opt-out': 'true' };
    });
    expect(optOut.status!.message).toBe(
      'user "alice" may not opt namespace "team-a" out of NamespaceTemplates (annotation furnish.dev/opt-out="true"): needs verb "optout" on namespacetemplates.furnish.dev',
    );
    const phase = await send('validate-namespace', '008-validate-UPDATE-namespaces-team-a-alice', (r) => {
      r.request!.oldObject!.metadata.labels!['furnish.dev/phase'] = 'pending';
      r.request!.object!.metadata.labels!['furnish.dev/phase'] = 'ready';
    });
    expect(phase.status!.message).toBe(
      'user "alice" may not change label furnish.dev/phase from "pending" to "ready" on namespace "team-a": only Furnish sets the phase (its reconciler, or mutate-namespace: ready when the last initializer removes itself, failed when the working one reports failure, pending when a holder of verb "initialize" removes annotation furnish.dev/failure of a failed namespace)',
    );
  });
});

describe('guard-initializing function', () => {
  it('refuses alice writing a ConfigMap into a pending namespace, lets the controllers in', async () => {
    api.setObjects([]);
    const refused = await send('guard-initializing', '021-guard-CREATE-configmaps-app-config-alice');
    expect(refused.status!.message).toMatch(/^namespace "team-a" is still being furnished; retry in a few seconds/);
    expect(await send('guard-initializing', '005-guard-CREATE-serviceaccounts-default-system_serviceaccount_kube_system_service_account_controller')).toMatchObject({ allowed: true });
    expect(await send('guard-initializing', '006-guard-CREATE-configmaps-kube-root-ca.crt-system_serviceaccount_kube_system_root_ca_cert_publisher')).toMatchObject({ allowed: true });
  });
});

describe('protect-objects function', () => {
  afterAll(() => api.setTemplates(SCENARIO_TEMPLATES));

  it("refuses alice deleting a protecting template's NetworkPolicy, reading that one template; lets the reconciler and the namespace controller through without a read", async () => {
    const protecting = namespaceTemplate('security-defaults');
    protecting.spec.protect = true;
    api.setTemplates([...SCENARIO_TEMPLATES, protecting]);
    const before = api.calls.length;
    const refused = await send('protect-objects', '037-protect-DELETE-networkpolicies-default-deny-alice', members);
    expect(refused).toMatchObject({ allowed: false, status: { code: 403, message: expect.stringMatching(/^user "alice" may not delete NetworkPolicy "default-deny" in namespace "team-p": it belongs to NamespaceTemplate "security-defaults", which protects its objects/) } });
    expect(api.calls.slice(before).map((c) => `${c.method} ${c.path}`)).toEqual(['GET /apis/furnish.dev/v1alpha1/namespacetemplates/security-defaults']);
    expect(await send('protect-objects', '038-protect-UPDATE-networkpolicies-default-deny-system_serviceaccount_furnish_system_furnish_reconciler', members)).toMatchObject({ allowed: true });
    expect(await send('protect-objects', '039-protect-DELETE-networkpolicies-default-deny-system_serviceaccount_kube_system_namespace_controller', members)).toMatchObject({ allowed: true });
    expect(api.calls.length).toBe(before + 1);
    // A template that stops protecting stops at once (read fresh, never cached); one that is gone (404) protects nothing.
    protecting.spec.protect = false;
    expect(await send('protect-objects', '037-protect-DELETE-networkpolicies-default-deny-alice', members)).toMatchObject({ allowed: true });
    api.setTemplates(SCENARIO_TEMPLATES);
    expect(await send('protect-objects', '037-protect-DELETE-networkpolicies-default-deny-alice', members)).toMatchObject({ allowed: true });
  });
});

describe('validate-template function', () => {
  it('admits a valid template and refuses an invalid one listing each problem', async () => {
    expect(await send('validate-template', '014-mutate-CREATE-namespacetemplates-default-admin')).toMatchObject({ allowed: true });
    const refused = await send('validate-template', '014-mutate-CREATE-namespacetemplates-default-admin', (r) => {
      (r.request!.object!.spec as { templates: unknown[] }).templates.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} });
    });
    expect(refused.status).toMatchObject({ code: 422, message: expect.stringContaining('spec.templates[1].metadata.name') });
  });
});

describe('trust and transport', () => {
  const body = () => JSON.stringify(admissionFixture('001-mutate-CREATE-namespaces-team-a-alice').review);

  it('no or bad token: 401 and no decision (nothing asked of the API server)', async () => {
    const before = api.calls.length;
    for (const auth of [undefined, 'Bearer nope', `Bearer ${await mintToken({ secret: 'x'.repeat(40) })}`]) {
      let req = request(servers['validate-namespace']!).post('/').set('content-type', 'application/json');
      if (auth) req = req.set('authorization', auth);
      const res = await req.send(body());
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.body).toMatchObject({ kind: 'Status', code: 401, message: expect.any(String) });
      expect(res.body.response).toBeUndefined();
    }
    expect(api.calls.length).toBe(before);
  });

  it('liveness needs no token', async () => {
    const res = await request(servers['guard-initializing']!).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('wrong content type 415, empty body 400, oversized 413, not POST 405, malformed 400 — each with a clear message', async () => {
    const post = (type: string, payload: string | Buffer) =>
      request(servers['mutate-namespace']!).post('/').set('authorization', `Bearer ${token}`).set('content-type', type).send(payload);
    const cases: [() => Promise<request.Response>, number, RegExp][] = [
      [() => post('text/plain', body()), 415, /content type must be application\/json, got "text\/plain"/],
      [() => post('application/yaml', 'kind: AdmissionReview'), 415, /got "application\/yaml"/],
      [() => post('application/json', ''), 400, /body is empty/],
      [() => post('application/json', JSON.stringify({ kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1', pad: 'x'.repeat(5 * 1024 * 1024) })), 413, /more than the limit of 4194304/],
      [() => post('application/json', '[]'), 400, /not an AdmissionReview/],
      [() => post('application/json', '{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"}'), 400, /AdmissionReview has no request/],
      [() => request(servers['mutate-namespace']!).get('/').set('authorization', `Bearer ${token}`), 405, /method GET not allowed/],
    ];
    for (const [run, status, message] of cases) {
      const res = await run();
      expect({ status: res.status, message: res.body.message }).toEqual({ status, message: expect.stringMatching(message) });
    }
  });

  it('a path credential authenticates without a bearer token; a wrong one is 401 and never echoed', async () => {
    const path = `/mutate-namespace${credentialPath(TEST_CLUSTER, PATH_CREDENTIAL)}`;
    const ok = await request(servers['mutate-namespace']!).post(path).set('content-type', 'application/json').send(body());
    expect(ok.status).toBe(200);
    expect(ok.body.response.allowed).toBe(true);
    const wrong = await request(servers['mutate-namespace']!).post(`/mutate-namespace${credentialPath(TEST_CLUSTER, 'w'.repeat(40))}`).set('content-type', 'application/json').send(body());
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain('w'.repeat(40));
  });

  it('an anonymous caller\'s body is never read: 401 from the headers', async () => {
    const res = await request(servers['validate-template']!).post('/').set('content-type', 'application/json').send(Buffer.alloc(8 * 1024 * 1024, 32));
    expect(res.status).toBe(401);
    expect(res.body.message).toMatch(/^no credential/);
  });

  it('over the limit: 413 from Content-Length before reading, and while streaming when there is none', async () => {
    const declared = await request(servers['mutate-namespace']!).post('/').set('authorization', `Bearer ${token}`).set('content-type', 'application/json')
      .set('content-length', String(64 * 1024 * 1024)).send('{}');
    expect(declared.status).toBe(413);
    expect(declared.body.message).toBe('request body is 67108864 bytes, more than the limit of 4194304 bytes');
    const url = await listening(servers['mutate-namespace']!);
    async function* chunks() {
      for (let i = 0; i < 80; i++) yield Buffer.alloc(64 * 1024, 32);
    }
    const streamed = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: ReadableStream.from(chunks()), duplex: 'half' } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(((await streamed.json()) as { message: string }).message).toBe('request body streamed past the limit of 4194304 bytes');
  });

  it('a body that is not JSON is refused with 400 before any decision', async () => {
    const res = await request(servers['mutate-namespace']!).post('/').set('authorization', `Bearer ${token}`).set('content-type', 'application/json').send('{"kind": nope');
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/not valid JSON|Unexpected token/);
  });
});
