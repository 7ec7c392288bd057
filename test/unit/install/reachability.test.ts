// Whether `furnish install` reaches each function, and at which layer it fails: the pure classifier
// on what a GET saw, and the GET itself against real servers on 127.0.0.1 (a closed port, a TLS
// server whose certificate is not trusted or names another host, a plain HTTP server where TLS is
// expected, a server answering 404) and a name under .invalid (RFC 6761: never resolves).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { calledFunctions, livenessUrl, reachabilityOf, type Attempt } from '../../../shared/install/reachability.ts';
import { attemptGet, reachFunctions } from '../../../shared/install/reach.ts';
import { webhookRegistrations } from '../../../shared/webhooks/registration.ts';
import { WEBHOOKS } from '../../../shared/config/types.ts';
import { createCertificateAuthority } from '../../support/kube-sim/pki.ts';

const CREDENTIAL = 'a-path-credential-0123456789abcdefghijklmnop';

describe('livenessUrl and calledFunctions', () => {
  it('drops the path credential and the query, then adds /healthz', () => {
    expect(livenessUrl(`https://fn.example/base/mutate-namespace/c/prod/${CREDENTIAL}?timeout=5s`)).toBe('https://fn.example/base/mutate-namespace/healthz');
    expect(livenessUrl('https://127.0.0.1:8443/validate-template')).toBe('https://127.0.0.1:8443/validate-template/healthz');
  });

  it('names every function the registrations call once, none with its credential', () => {
    const called = calledFunctions(webhookRegistrations({ functionsUrl: 'https://fn.example', pathCredential: { cluster: 'prod', credential: CREDENTIAL } }));
    expect(called.map((f) => f.name)).toEqual([...WEBHOOKS]);
    expect(called.find((f) => f.name === 'protect-objects')!.url).toBe('https://fn.example/protect-objects/healthz');
    expect(JSON.stringify(called)).not.toContain(CREDENTIAL);
    const withCa = calledFunctions(webhookRegistrations({ functionsUrl: 'https://fn.example', caBundle: Buffer.from('PEM').toString('base64') }));
    expect(withCa[0]).toEqual({ name: 'mutate-namespace', url: 'https://fn.example/mutate-namespace/healthz', ca: 'PEM' });
  });
});

describe('reachabilityOf (pure)', () => {
  const at = (a: Partial<Attempt>): Attempt => ({ url: 'https://fn.example/mutate-namespace/healthz', stage: 'start', caBundle: false, ...a });

  it('is reachable on a 2xx answer only', () => {
    expect(reachabilityOf(at({ stage: 'secured', status: 200 }))).toEqual({ reachable: true });
    expect(reachabilityOf(at({ stage: 'secured', status: 500 }))).toMatchObject({ reachable: false, layer: 'http', problem: expect.stringContaining('HTTP 500 from GET https://fn.example/mutate-namespace/healthz: the function fails') });
    expect(reachabilityOf(at({ stage: 'secured', status: 403 }))).toMatchObject({ layer: 'http', problem: expect.stringContaining('must allow unauthenticated invocations') });
    expect(reachabilityOf(at({ stage: 'secured', status: 302 }))).toMatchObject({ layer: 'http', problem: expect.stringContaining('does not follow') });
  });

  it('names a timeout by the stage it stopped at', () => {
    expect(reachabilityOf(at({ stage: 'start', timedOutMs: 5000 }))).toMatchObject({ layer: 'dns', problem: 'DNS: no address for fn.example within 5 s' });
    expect(reachabilityOf(at({ stage: 'resolved', timedOutMs: 5000 }))).toMatchObject({ layer: 'tcp', problem: expect.stringContaining('TCP: no connection to fn.example:443 within 5 s') });
    expect(reachabilityOf(at({ stage: 'connected', timedOutMs: 5000 }))).toMatchObject({ layer: 'tls', problem: 'TLS: no handshake with fn.example:443 within 5 s' });
    expect(reachabilityOf(at({ stage: 'secured', timedOutMs: 5000 }))).toMatchObject({ layer: 'http', problem: 'HTTP: no answer to GET https://fn.example/mutate-namespace/healthz within 5 s' });
  });

  it('trusts an error code over the stage where the code says the layer', () => {
    expect(reachabilityOf(at({ stage: 'start', error: { code: 'EAI_AGAIN', message: 'getaddrinfo EAI_AGAIN fn.example' } }))).toMatchObject({ layer: 'dns', problem: expect.stringContaining('the resolver failed or timed out') });
    expect(reachabilityOf(at({ stage: 'start', error: { code: 'EHOSTUNREACH', message: 'connect EHOSTUNREACH' } }))).toMatchObject({ layer: 'tcp' });
    expect(reachabilityOf(at({ stage: 'secured', error: { code: 'ECONNRESET', message: 'socket hang up' } }))).toMatchObject({ layer: 'http', problem: expect.stringContaining('ended before an answer') });
  });
});

describe('attemptGet against real local servers', () => {
  const ca = createCertificateAuthority('reachability-test-ca');
  const servers: Server[] = [];
  const listen = async (server: Server): Promise<string> => {
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return `127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const tls = (hosts: string[]) => {
    const c = ca.issue(hosts);
    return { cert: c.certPem, key: c.keyPem };
  };
  let answering: string;
  let notFound: string;
  let wrongHost: string;
  let plain: string;
  let closed: string;

  beforeAll(async () => {
    answering = await listen(createHttpsServer(tls(['127.0.0.1']), (_req, res) => res.writeHead(200).end('{"status":"ok"}')));
    notFound = await listen(createHttpsServer(tls(['127.0.0.1']), (_req, res) => res.writeHead(404).end()));
    wrongHost = await listen(createHttpsServer(tls(['functions.example']), (_req, res) => res.writeHead(200).end()));
    plain = await listen(createHttpServer((_req, res) => res.writeHead(200).end()));
    const gone = createHttpServer();
    closed = await listen(gone);
    await new Promise((r) => gone.close(r));
  });
  afterAll(async () => {
    for (const s of servers) s.closeAllConnections();
    await Promise.all(servers.filter((s) => s.listening).map((s) => new Promise((r) => s.close(r))));
  });

  const judged = async (url: string, withCa = true) => reachabilityOf(await attemptGet(url, { ca: withCa ? ca.certPem : undefined, timeoutMs: 10_000 }));

  it('a function that answers its liveness path is reachable', async () => {
    expect(await judged(`https://${answering}/mutate-namespace/healthz`)).toEqual({ reachable: true });
  });

  it('DNS: a name that does not resolve', async () => {
    expect(await judged('https://nonexistent.invalid/mutate-namespace/healthz')).toMatchObject({ reachable: false, layer: 'dns', problem: expect.stringMatching(/^DNS: nonexistent\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)/) });
  });

  it('TCP: a closed port', async () => {
    expect(await judged(`https://${closed}/mutate-namespace/healthz`)).toMatchObject({ layer: 'tcp', problem: expect.stringContaining(`TCP: no connection to ${closed} (ECONNREFUSED`) });
  });

  it('TLS: a certificate no given CA signed', async () => {
    const r = await judged(`https://${answering}/mutate-namespace/healthz`, false);
    expect(r).toMatchObject({ layer: 'tls', problem: expect.stringContaining(`TLS: the handshake with ${answering} failed`) });
    expect(r).toMatchObject({ problem: expect.stringContaining('checked against the public CAs (no CA bundle given)') });
  });

  it('TLS: a certificate for another host', async () => {
    expect(await judged(`https://${wrongHost}/mutate-namespace/healthz`)).toMatchObject({ layer: 'tls', problem: expect.stringContaining('ERR_TLS_CERT_ALTNAME_INVALID') });
  });

  it('TLS: a server that speaks no TLS', async () => {
    expect(await judged(`https://${plain}/mutate-namespace/healthz`)).toMatchObject({ layer: 'tls' });
  });

  it('HTTP: a URL that answers 404', async () => {
    expect(await judged(`https://${notFound}/mutate-namespace/healthz`)).toMatchObject({ layer: 'http', problem: `HTTP 404 from GET https://${notFound}/mutate-namespace/healthz: no function at this URL: is it deployed, and is --url (FURNISH_FUNCTIONS_URL) the base its functions are served under?` });
  });

  it('reachFunctions judges every function, each by its own URL and CA bundle', async () => {
    const results = await reachFunctions([{ name: 'a', url: `https://${answering}/a/healthz`, ca: ca.certPem }, { name: 'b', url: `https://${notFound}/b/healthz`, ca: ca.certPem }, { name: 'c', url: `https://${answering}/c/healthz` }], 10_000);
    expect(results.map((r) => [r.name, r.reach.reachable ? 'reachable' : r.reach.layer])).toEqual([['a', 'reachable'], ['b', 'http'], ['c', 'tls']]);
  });
});
