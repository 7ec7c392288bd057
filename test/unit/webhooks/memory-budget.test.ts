// The memory budget of the reviews in progress (issue 25, finding 11): a review takes its cost
// before its body is read and gives it back once answered, so what a process holds is bounded by
// the budget, not by how many reviews arrive; those that cannot start within half the caller's
// timeout are refused with 429 and Retry-After (kube-apiserver retries), their bodies unread; a
// body refused for its shape is the request's denial when its uid could be read, else a 4xx.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as functions from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { allow } from '../../../shared/admission/response.ts';
import { MAX_BODY_DEPTH, MAX_BODY_VALUES } from '../../../shared/admission/scan.ts';
import type { ClusterConfig } from '../../../shared/config/types.ts';
import { collectingLogger } from '../../../shared/log.ts';
import { gateServer } from '../../../shared/webhooks/body-gate.ts';
import { budgetWaitMs, webhookHttpFunction } from '../../../shared/webhooks/http.ts';
import { MemoryBudget, reviewCost } from '../../../shared/webhooks/memory-budget.ts';
import { admissionFixture, testDeps } from '../../support/fixtures.ts';

describe('MemoryBudget', () => {
  beforeAll(() => {
    jest.useFakeTimers();
  });
  afterAll(() => {
    jest.useRealTimers();
  });

  it('grants at once what fits, in order what does not, and gives back once', async () => {
    const budget = new MemoryBudget(10);
    const a = budget.acquire(6, 1000);
    expect(a).not.toBeInstanceOf(Promise);
    const order: string[] = [];
    const b = (budget.acquire(6, 1000) as Promise<{ release(): void }>).then((p) => (order.push('b'), p));
    // Fits, but waits behind b: a large review is never overtaken for ever.
    const c = (budget.acquire(1, 1000) as Promise<{ release(): void }>).then((p) => (order.push('c'), p));
    expect(budget.waiting).toBe(2);
    (a as { release(): void }).release();
    (a as { release(): void }).release();
    await Promise.all([b, c]);
    expect(order).toEqual(['b', 'c']);
    expect(budget.inUse).toBe(7);
  });

  it('once a review is counted, what it does not need goes to the next in line', async () => {
    const budget = new MemoryBudget(10);
    const first = budget.acquire(8, 1000) as { shrink(w: number): void; release(): void };
    const next = budget.acquire(5, 1000) as Promise<unknown>;
    first.shrink(9);
    expect(budget.inUse).toBe(8);
    first.shrink(3);
    await expect(next).resolves.toBeDefined();
    expect(budget.inUse).toBe(8);
    first.release();
    expect(budget.inUse).toBe(5);
  });

  it('a review costlier than the whole budget runs alone', () => {
    const budget = new MemoryBudget(10);
    const big = budget.acquire(50, 1000) as { release(): void };
    expect(budget.inUse).toBe(10);
    big.release();
    expect(budget.inUse).toBe(0);
  });

  it('refuses with 429 once the wait is over, saying what holds the budget, and lets the next one in', async () => {
    const budget = new MemoryBudget(10 * 1048576);
    budget.acquire(8 * 1048576, 1000);
    const late = budget.acquire(4 * 1048576, 1000) as Promise<unknown>;
    const small = budget.acquire(1048576, 5000) as Promise<unknown>;
    jest.advanceTimersByTime(1000);
    await expect(late).rejects.toMatchObject({ code: 'busy', status: 429, message: 'webhook busy: reviews in progress hold 8 MiB of its 10 MiB memory budget, 1 more wait, and this one needs 4 MiB; retry' });
    await expect(small).resolves.toBeDefined();
  });

  it('waits half the timeout kube-apiserver gives the call', () => {
    expect(budgetWaitMs('/protect-objects?timeout=3s')).toBe(1500);
    expect(budgetWaitMs('/?timeout=500ms')).toBe(250);
    expect(budgetWaitMs('/')).toBe(5000);
  });
});

describe('over HTTP, as deployed (the body held until authenticated)', () => {
  let server: Server;
  let url: string;
  // Room for one 64 KiB review of few values, once counted.
  const budget = new MemoryBudget(reviewCost(64 * 1024, 1_000));
  const log = collectingLogger();
  let release: () => void = () => undefined;

  beforeAll(async () => {
    functions.http('budget-test', webhookHttpFunction({
      webhook: 'protect-objects',
      // Holds its answer until the test lets it go: the review's memory stays taken meanwhile.
      handler: (request) => (request.name === 'hold' ? new Promise((resolve) => (release = () => resolve(allow(request)))) : allow(request)),
      authenticator: { cached: () => ({ ok: true, cluster: {} as ClusterConfig }), authenticate: async () => ({ ok: true, cluster: {} as ClusterConfig }) },
      depsFor: () => testDeps(),
      maxBodyBytes: 4 << 20,
      log,
      budget,
    }));
    server = gateServer(getTestServer('budget-test'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const review = () => structuredClone(admissionFixture('034-protect-UPDATE-networkpolicies-default-deny-alice').review) as unknown as { request: Record<string, unknown> & { uid: string; object: Record<string, unknown> } };
  /** A fresh connection per call: a kept-alive one may be closed by the server between tests. */
  const post = (body: string, query = ''): Promise<{ status: number; headers: IncomingHttpHeaders; json(): Promise<unknown> }> =>
    new Promise((resolve, reject) => {
      const req = request(`${url}/${query}`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d)).on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: async () => JSON.parse(text) as unknown }));
      });
      req.on('error', reject).end(body);
    });

  it('a 1.5-million-deep array in a field no decoder knows: the request is denied (422) before parsing, naming the limit', async () => {
    const r = review();
    r.request.unknown = '@';
    const body = JSON.stringify(r).replace('"@"', `${'['.repeat(1_500_000)}${']'.repeat(1_500_000)}`);
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ kind: 'AdmissionReview', response: { uid: r.request.uid, allowed: false, status: { code: 422, reason: 'Invalid', message: `request.unknown${'[0]'.repeat(MAX_BODY_DEPTH - 2)}: nested more than ${MAX_BODY_DEPTH} levels deep in the AdmissionReview; refused before parsing` } } });
    expect(log.lines.at(-1)).toMatchObject({ severity: 'INFO', message: 'review refused before parsing', fields: { uid: r.request.uid, code: 422 } });
  });

  it('220,000 small keys: denied (413) before parsing, naming the limit', async () => {
    const r = review();
    r.request.object.data = '@';
    const res = await post(JSON.stringify(r).replace('"@"', `{${Array.from({ length: 220_000 }, (_, i) => `"k${i}":""`).join(',')}}`));
    expect(await res.json()).toMatchObject({ response: { uid: r.request.uid, allowed: false, status: { code: 413, reason: 'RequestEntityTooLarge', message: expect.stringContaining(`more than ${MAX_BODY_VALUES} JSON values`) } } });
  });

  it('without a uid to deny, a plain 4xx naming the limit', async () => {
    const res = await post(`{"kind":"AdmissionReview","request":{"x":${'['.repeat(200)}${']'.repeat(200)}}}`);
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ kind: 'Status', code: 422, message: expect.stringContaining(`nested more than ${MAX_BODY_DEPTH} levels deep`) });
  });

  it('while the budget is taken, the next review waits, then gets 429 with Retry-After; once given back, reviews are decided again', async () => {
    const held = review();
    held.request.name = 'hold';
    // Padded to 60 KiB: its cost is nearly the whole budget.
    const holding = post(JSON.stringify(held) + ' '.repeat(60 * 1024));
    await new Promise((r) => setTimeout(r, 200));
    expect(budget.inUse).toBeGreaterThan(budget.capacity / 2);
    const started = performance.now();
    const refused = await post(JSON.stringify(review()) + ' '.repeat(60 * 1024), '?timeout=400ms');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(await refused.json()).toMatchObject({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: expect.stringMatching(/^webhook busy: .* memory budget.*; retry$/) });
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    release();
    expect((await holding).status).toBe(200);
    const after = await post(JSON.stringify(review()));
    expect(await after.json()).toMatchObject({ response: { allowed: true } });
    await new Promise((r) => setTimeout(r, 50));
    expect(budget.inUse).toBe(0);
  });
});
