// The webhooks' seam repeats a read only while kube-apiserver 1.31+ answers "storage is
// (re)initializing" (a CRD just established: its watch cache is filling), a bounded number of times;
// every other failure comes back at once, as before.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { storageInitializing } from '../../../shared/kube/errors.ts';
import { createKubeHttp, INITIALIZING_RETRY_MS } from '../../../shared/kube/http.ts';

/** What kube-apiserver 1.32 answers a list of a CRD whose cache is still filling (captured). */
const INITIALIZING = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'storage is (re)initializing', reason: 'TooManyRequests', details: { retryAfterSeconds: 1 }, code: 429 };
const THROTTLED = { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Too many requests, please try again later.', reason: 'TooManyRequests', code: 429 };

let server: Server;
let url = '';
/** Per path: how many more requests are refused as initializing. */
const initializingFor = new Map<string, number>();
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '';
    seen.push(`${req.method} ${path}`);
    const left = initializingFor.get(path) ?? 0;
    if (left > 0) {
      initializingFor.set(path, left - 1);
      return res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify(INITIALIZING));
    }
    if (path === '/throttled') return res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify(THROTTLED));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: [] }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function client() {
  const waits: number[] = [];
  const http = createKubeHttp({ server: url, sleep: async (ms) => void waits.push(ms) });
  return { http, waits };
}

describe('storageInitializing', () => {
  it('is the 429 of a filling watch cache, not any other throttling', () => {
    expect(storageInitializing({ status: 429, reason: 'TooManyRequests', message: 'storage is (re)initializing' })).toBe(true);
    expect(storageInitializing({ status: 429, reason: 'TooManyRequests', message: THROTTLED.message })).toBe(false);
    expect(storageInitializing({ status: 500, message: 'storage is (re)initializing' })).toBe(false);
  });
});

describe('createKubeHttp and a filling watch cache', () => {
  it('repeats a list answered "storage is (re)initializing" until it answers', async () => {
    initializingFor.set('/apis/furnish.dev/v1alpha1/namespaceinitializationconfigurations', 2);
    const { http, waits } = client();
    const r = await http({ method: 'GET', path: '/apis/furnish.dev/v1alpha1/namespaceinitializationconfigurations' });
    expect(r).toMatchObject({ ok: true, status: 200, data: { items: [] } });
    expect(waits).toEqual(INITIALIZING_RETRY_MS.slice(0, 2));
  });

  it('gives up after a bounded number of repeats, answering the 429 with its message', async () => {
    initializingFor.set('/apis/furnish.dev/v1alpha1/namespacetemplates', 100);
    const { http, waits } = client();
    const r = await http({ method: 'GET', path: '/apis/furnish.dev/v1alpha1/namespacetemplates' });
    expect(r).toMatchObject({ ok: false, status: 429, error: 'storage is (re)initializing' });
    expect(waits).toEqual(INITIALIZING_RETRY_MS);
    expect(initializingFor.get('/apis/furnish.dev/v1alpha1/namespacetemplates')).toBe(100 - 1 - INITIALIZING_RETRY_MS.length);
  });

  it('answers any other 429 at once, and never repeats a write', async () => {
    const { http, waits } = client();
    expect(await http({ method: 'GET', path: '/throttled' })).toMatchObject({ ok: false, status: 429 });
    initializingFor.set('/apis/furnish.dev/v1alpha1/organizations', 1);
    seen.length = 0;
    expect(await http({ method: 'POST', path: '/apis/furnish.dev/v1alpha1/organizations', body: {} })).toMatchObject({ ok: false, status: 429 });
    expect(seen).toEqual(['POST /apis/furnish.dev/v1alpha1/organizations']);
    expect(waits).toEqual([]);
  });
});
