// The one transport under webhooks and reconcilers: it never throws, and each way an answer can
// go wrong comes back as `{ ok: false, status, error }` with what the caller needs to decide.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { createTransport } from '../../../shared/kube/transport.ts';

let server: Server;
let url = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/throttled') {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
      return res.end(JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'TooManyRequests', message: 'slow down', code: 429 }));
    }
    if (req.url === '/text') return res.end('not json');
    if (req.url === '/silent') return; // never answers
    if (req.url?.startsWith('/watch')) {
      res.write('{"type":"ADDED","object":{"n":1}}\n{"type":"MODIFIED",');
      setTimeout(() => res.end('"object":{"n":2}}\n'), 5);
      return;
    }
    if (req.url === '/bad-watch') return res.end('{"type":"ADDED"}\nnot json\n');
    res.setHeader('content-type', 'application/json');
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => res.end(JSON.stringify({ method: req.method, url: req.url, body, type: req.headers['content-type'] ?? null, auth: req.headers.authorization ?? null, agent: req.headers['user-agent'] ?? null })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/prefix`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('createTransport', () => {
  it('sends the path under the server prefix with query, body, content type and credentials', async () => {
    const t = createTransport({ server: url, timeoutMs: 1000, userAgent: 'furnish-test', headers: () => ({ authorization: 'Bearer x' }) });
    const a = await t.send<Record<string, unknown>>({ method: 'PATCH', path: '/api/v1/namespaces/a', query: { fieldManager: 'furnish', dryRun: undefined, force: true }, body: { a: 1 }, contentType: 'application/merge-patch+json' });
    expect(a).toMatchObject({ ok: true, status: 200, data: { method: 'PATCH', url: '/prefix/api/v1/namespaces/a?fieldManager=furnish&force=true', body: '{"a":1}', type: 'application/merge-patch+json', auth: 'Bearer x', agent: 'furnish-test' } });
    t.close();
  });

  it("gives a failure's reason, message and Retry-After", async () => {
    const t = createTransport({ server: url.replace('/prefix', ''), timeoutMs: 1000 });
    expect(await t.send({ method: 'GET', path: '/throttled' })).toMatchObject({ ok: false, status: 429, reason: 'TooManyRequests', error: 'slow down', retryAfterSeconds: 3 });
    t.close();
  });

  it('keeps a body that is not JSON as text', async () => {
    const t = createTransport({ server: url.replace('/prefix', ''), timeoutMs: 1000 });
    expect(await t.send({ method: 'GET', path: '/text' })).toMatchObject({ ok: true, status: 200, data: 'not json' });
    t.close();
  });

  it('answers status 0 for a timeout, a refused connection and failing credentials, never throwing', async () => {
    const t = createTransport({ server: url.replace('/prefix', ''), timeoutMs: 50 });
    expect(await t.send({ method: 'GET', path: '/silent' })).toMatchObject({ ok: false, status: 0, error: expect.stringMatching(/no answer from 127\.0\.0\.1:\d+ within 50 ms/) });
    t.close();
    const refused = createTransport({ server: 'http://127.0.0.1:1', timeoutMs: 1000 });
    expect(await refused.send({ method: 'GET', path: '/' })).toMatchObject({ ok: false, status: 0, error: expect.stringContaining('ECONNREFUSED') });
    const noToken = createTransport({ server: url, timeoutMs: 1000, headers: async () => { throw new Error('token file unreadable'); } });
    expect(await noToken.send({ method: 'GET', path: '/' })).toEqual({ ok: false, status: 0, data: undefined, error: 'credentials: token file unreadable' });
  });

  it('streams newline-delimited JSON across chunk boundaries, and stops at a line that is not JSON', async () => {
    const t = createTransport({ server: url.replace('/prefix', ''), timeoutMs: 1000 });
    const seen: unknown[] = [];
    expect(await t.stream({ method: 'GET', path: '/watch', timeoutMs: 0 }, (o) => seen.push(o))).toMatchObject({ ok: true, status: 200 });
    expect(seen).toEqual([{ type: 'ADDED', object: { n: 1 } }, { type: 'MODIFIED', object: { n: 2 } }]);
    const bad: unknown[] = [];
    expect(await t.stream({ method: 'GET', path: '/bad-watch' }, (o) => bad.push(o))).toMatchObject({ ok: false, status: 0, error: expect.stringContaining('bad watch line') });
    expect(bad).toEqual([{ type: 'ADDED' }]);
    t.close();
  });
});
