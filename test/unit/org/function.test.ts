// reconcile-organization's handler: which Organizations a namespace message concerns, what each
// costs in API calls, how a burst for one organization shares passes, and how failures are
// classified (a permanent one acknowledged, a transient one redelivered).
import { describe, expect, it } from '@jest/globals';
import { encodeMessage, type ReconcileMessage } from '../../../shared/bus/envelope.ts';
import { createKubeClient, type FaultHook, type KubeClient, type KubeRequest } from '../../../shared/kube/client.ts';
import type { KubeCall } from '../../../shared/kube/http.ts';
import { collectingLogger } from '../../../shared/log.ts';
import { organizationScope, reconcileOrganizationsOf } from '../../../shared/org/function.ts';
import { ORGANIZATIONS_PATH } from '../../../shared/org/source.ts';
import { newerRevision } from '../../../shared/kube/revisions.ts';
import { handleEnvelope } from '../../../shared/reconcile/push.ts';
import type { Runtime } from '../../../shared/reconcile/runtime.ts';
import { fakeOrganizationApi, type FakeOrganizationApi } from '../../support/organization-api.ts';
import { fixture } from '../../kube-sim/helpers.ts';
import { organization } from '../../support/organizations.ts';

const message = (type: ReconcileMessage['type'], organizations?: string[], name = 'team-a'): ReconcileMessage => ({ v: 1, cluster: 'local', kind: 'Namespace', name, type, ...(organizations ? { organizations } : {}) });

/** A runtime whose one cluster is `kube`, by default the fake API server answering each call once (a new client each time: passes are per client). */
function runtimeOf(api: FakeOrganizationApi, log = collectingLogger(), kube: Pick<KubeClient, 'http' | 'call'> = { http: (c) => api.http(c), call: async (req) => ({ ...(await api.http(req)), attempts: 1 }) }): Runtime {
  return { config: { cluster: 'local' }, cluster: async () => ({ kube }), log } as unknown as Runtime;
}

/** The real client (retries, pacing) over the fake API server; its sleeps recorded, not slept. */
function clientOf(api: FakeOrganizationApi, options: { faults?: FaultHook; sleeps?: number[]; delay?: (req: KubeRequest) => number } = {}): KubeClient {
  return createKubeClient({ server: 'https://memory.invalid', agent: undefined as never, headers: async () => ({}) }, {
    faults: options.faults,
    random: () => 0,
    sleep: async (ms) => void options.sleeps?.push(ms),
    transport: async (req) => {
      const delay = options.delay?.(req) ?? 0;
      if (delay) await new Promise((r) => setTimeout(r, delay));
      const r = await api.http(req);
      return { status: r.status, data: r.data };
    },
  });
}

const in30s = () => new Date(Date.now() + 30_000).toISOString();

/** acme holds reservations for acme-1 and acme-2 (now created); globex counts a namespace it lost. */
function cluster(): FakeOrganizationApi {
  return fakeOrganizationApi(
    [
      organization('acme', [], { status: { namespaces: 0, reservations: [{ uid: 'u1', namespace: 'acme-1', expires: in30s() }, { uid: 'u2', namespace: 'acme-2', expires: in30s() }] } }),
      organization('globex', [], { status: { namespaces: 3, reservations: [] } }),
    ],
    { 'acme-1': 'acme', 'acme-2': 'acme', 'globex-1': 'globex', loose: undefined },
  );
}

describe('which Organizations a namespace message concerns', () => {
  it.each([
    ['a template fan-out', message('FANOUT', ['acme']), { kind: 'none', why: 'a template fan-out changes no organization membership' }],
    ['a namespace in no organization', message('ADDED', []), { kind: 'none', why: 'the namespace is in no organization' }],
    ['a namespace of acme', message('MODIFIED', ['acme']), { kind: 'some', organizations: ['acme'] }],
    ['a transfer from globex to acme', message('MODIFIED', ['acme', 'globex']), { kind: 'some', organizations: ['acme', 'globex'] }],
    ['a deleted namespace of acme', message('DELETED', ['acme']), { kind: 'some', organizations: ['acme'] }],
    ['a resync', message('SYNC', ['acme']), { kind: 'all' }],
    ['a message that does not say (an older relay)', message('ADDED'), { kind: 'all' }],
  ])('%s', (_what, msg, scope) => {
    expect(organizationScope(msg)).toEqual(scope);
  });
});

describe('reconcile-organization per namespace event', () => {
  it('costs nothing for a fan-out or a namespace in no organization', async () => {
    let asked = 0;
    const rt = { config: { cluster: 'local' }, cluster: async () => { asked += 1; throw new Error('no cluster should be needed'); } } as unknown as Runtime;
    await expect(reconcileOrganizationsOf(rt, message('FANOUT'))).resolves.toEqual({ skipped: 'a template fan-out changes no organization membership' });
    await expect(reconcileOrganizationsOf(rt, message('ADDED', [], 'loose'))).resolves.toEqual({ skipped: 'the namespace is in no organization' });
    expect(asked).toBe(0);
  });

  it('trues up only its organization: one read, one labelled list, one write', async () => {
    const api = cluster();
    const result = await reconcileOrganizationsOf(runtimeOf(api), message('ADDED', ['acme'], 'acme-1'));
    expect(result).toMatchObject({ organizations: 1, updated: ['acme'], failed: [] });
    expect(api.calls).toEqual([
      `GET ${ORGANIZATIONS_PATH}/acme`,
      `GET /api/v1/namespaces?labelSelector=${encodeURIComponent('furnish.dev/organization=acme')}&limit=500`,
      `PUT ${ORGANIZATIONS_PATH}/acme/status`,
    ]);
    expect(api.organizations.get('acme')!.status).toEqual({ namespaces: 2, reservations: [] });
    // globex is wrong (3 counted, 1 namespace) but this event does not concern it.
    expect(api.organizations.get('globex')!.status).toEqual({ namespaces: 3, reservations: [] });
    // Nothing changed since: two reads, no write.
    api.calls.length = 0;
    await reconcileOrganizationsOf(runtimeOf(api), message('MODIFIED', ['acme'], 'acme-1'));
    expect(api.calls.map((c) => c.split(' ')[0])).toEqual(['GET', 'GET']);
  });

  it('trues up both organizations of a transfer', async () => {
    const api = cluster();
    await reconcileOrganizationsOf(runtimeOf(api), message('MODIFIED', ['acme', 'globex'], 'acme-2'));
    expect(api.organizations.get('acme')!.status?.namespaces).toBe(2);
    expect(api.organizations.get('globex')!.status?.namespaces).toBe(1);
  });

  it('answers an organization that does not exist with its one read', async () => {
    const api = cluster();
    await expect(reconcileOrganizationsOf(runtimeOf(api), message('ADDED', ['initech']))).resolves.toMatchObject({ organizations: 0, updated: [] });
    expect(api.calls).toEqual([`GET ${ORGANIZATIONS_PATH}/initech`]);
  });

  it('redoes both reads when a reservation lands between read and write', async () => {
    const api = cluster();
    let raced = false;
    const http = api.http;
    api.http = async (call) => {
      if (call.method === 'PUT' && !raced) {
        raced = true;
        const live = api.organizations.get('acme')!;
        api.organizations.set('acme', { ...live, metadata: { ...live.metadata, resourceVersion: '999' }, status: { ...live.status, reservations: [...(live.status?.reservations ?? []), { uid: 'u3', namespace: 'acme-3', expires: in30s() }] } });
      }
      return http(call);
    };
    const result = await reconcileOrganizationsOf(runtimeOf(api), message('ADDED', ['acme'], 'acme-1'));
    expect(result).toMatchObject({ conflicts: 1, updated: ['acme'] });
    expect(api.organizations.get('acme')!.status).toEqual({ namespaces: 2, reservations: [expect.objectContaining({ namespace: 'acme-3' })] });
    expect(api.calls.filter((c) => c.startsWith(`GET ${ORGANIZATIONS_PATH}/acme`))).toHaveLength(2);
  });

  it('a resync trues up every Organization with one Organization list and one namespace list', async () => {
    const api = cluster();
    await reconcileOrganizationsOf(runtimeOf(api), message('SYNC', ['acme']));
    expect(api.calls.filter((c) => c.startsWith('GET'))).toEqual([`GET ${ORGANIZATIONS_PATH}`, `GET /api/v1/namespaces?labelSelector=furnish.dev%2Forganization&limit=500`]);
    expect(api.organizations.get('acme')!.status?.namespaces).toBe(2);
    expect(api.organizations.get('globex')!.status?.namespaces).toBe(1);
  });

  it('folds a burst for one organization into a running pass and one queued pass', async () => {
    const api = cluster();
    const names = Array.from({ length: 100 }, (_, i) => `acme-${i + 1}`);
    api.namespaces = names.map((n) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n, labels: { 'furnish.dev/organization': n === 'acme-100' ? 'globex' : 'acme' } } }));
    const rt = runtimeOf(api);
    const results = await Promise.all(names.map((n) => reconcileOrganizationsOf(rt, message('ADDED', [n === 'acme-100' ? 'globex' : 'acme'], n))));
    expect(results.every((r) => (r as { failed: unknown[] }).failed.length === 0)).toBe(true);
    // acme: the first event's pass, and one more for the 98 that arrived while it ran; globex: one.
    expect(api.calls.filter((c) => c.startsWith(`GET ${ORGANIZATIONS_PATH}/acme`))).toHaveLength(2);
    expect(api.calls.filter((c) => c.startsWith(`GET ${ORGANIZATIONS_PATH}/globex`))).toHaveLength(1);
    // acme: read, list, write, then read, list (nothing left to write); globex: read, list, write.
    expect(api.calls).toHaveLength(8);
    expect(api.organizations.get('acme')!.status).toEqual({ namespaces: 99, reservations: [] });
    expect(api.organizations.get('globex')!.status?.namespaces).toBe(1);
  });
});

describe('reconcile-organization reads an organization\'s namespaces from the watch cache', () => {
  const selector = encodeURIComponent('furnish.dev/organization=acme');
  const cacheList = (rv: string) => `GET /api/v1/namespaces?labelSelector=${selector}&resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`;
  const etcdList = `GET /api/v1/namespaces?labelSelector=${selector}&limit=500`;
  const at = (rv?: string): ReconcileMessage => ({ ...message('ADDED', ['acme'], 'acme-1'), ...(rv ? { resourceVersion: rv } : {}) });
  /** acme's namespaces with the revisions a watch delivered them at. */
  function versioned(api: FakeOrganizationApi, revisions: Record<string, string>): void {
    for (const ns of api.namespaces) if (revisions[ns.metadata.name!]) ns.metadata.resourceVersion = revisions[ns.metadata.name!];
  }

  it('lists at least as fresh as the event (NotOlderThan its revision, no limit)', async () => {
    const api = cluster();
    versioned(api, { 'acme-1': '1234', 'acme-2': '1200' });
    await reconcileOrganizationsOf(runtimeOf(api), at('1234'));
    expect(api.calls).toEqual([`GET ${ORGANIZATIONS_PATH}/acme`, cacheList('1234'), `PUT ${ORGANIZATIONS_PATH}/acme/status`]);
    // The count remembers the newest namespace it saw: the next list is at least that fresh.
    expect(api.organizations.get('acme')!.status).toEqual({ namespaces: 2, reservations: [], countedResourceVersion: '1234' });
  });

  it('lists at least as fresh as the namespaces already counted, when the event is older (reordered, another API server)', async () => {
    const api = cluster();
    const acme = api.organizations.get('acme')!;
    api.organizations.set('acme', { ...acme, status: { ...acme.status, countedResourceVersion: '5000' } });
    await reconcileOrganizationsOf(runtimeOf(api), at('1234'));
    expect(api.calls[1]).toBe(cacheList('5000'));
  });

  it('falls back to etcd (paged) when the cache has not reached the revision: 504 Too large resource version, logged', async () => {
    const api = cluster();
    const tooLarge = fixture('list-namespaces-rv-too-large');
    const http = api.http;
    api.http = async (call) => (call.path.includes('resourceVersionMatch') ? { ok: false, status: tooLarge.status, data: tooLarge.body, error: `HTTP ${tooLarge.status}` } : http(call));
    const log = collectingLogger();
    const result = await reconcileOrganizationsOf(runtimeOf(api, log), at('1234'));
    expect(result).toMatchObject({ updated: ['acme'], failed: [] });
    expect(api.calls).toEqual([`GET ${ORGANIZATIONS_PATH}/acme`, etcdList, `PUT ${ORGANIZATIONS_PATH}/acme/status`]);
    expect(api.organizations.get('acme')!.status?.namespaces).toBe(2);
    expect(log.lines).toEqual([expect.objectContaining({ severity: 'INFO', message: 'namespace list from the watch cache refused: listing from etcd', fields: expect.objectContaining({ organization: 'acme', resourceVersion: '1234', status: 504 }) })]);
  });

  it('falls back to etcd on 410 too, but a 403 on the cache list is a failure', async () => {
    const api = cluster();
    api.fault = (call) => (call.path.includes('resourceVersionMatch') ? 410 : undefined);
    await reconcileOrganizationsOf(runtimeOf(api), at('1234'));
    expect(api.calls[2]).toBe(etcdList);
    const denied = cluster();
    denied.fault = (call) => (call.path.includes('resourceVersionMatch') ? 403 : undefined);
    await expect(reconcileOrganizationsOf(runtimeOf(denied), at('1234'))).rejects.toThrow(/HTTP 403/);
    expect(denied.calls).not.toContain(etcdList);
  });

  it('replaces a floor the server cannot reach (written by hand, restored from another cluster) after one fallback', async () => {
    const api = cluster();
    versioned(api, { 'acme-1': '100', 'acme-2': '120' });
    const acme = api.organizations.get('acme')!;
    // Already counted right: only the floor is wrong, and it must still be rewritten.
    api.organizations.set('acme', { ...acme, status: { namespaces: 2, reservations: [], countedResourceVersion: '99999999999' } });
    const tooLarge = fixture('list-namespaces-rv-too-large');
    const http = api.http;
    // The server is at revision 1000: its cache refuses any list newer than that.
    api.http = async (call) => {
      const rv = new URLSearchParams(call.path.split('?')[1]).get('resourceVersion');
      if (rv && newerRevision(rv, '1000') !== '1000') return (api.calls.push(`${call.method} ${call.path}`), { ok: false, status: tooLarge.status, data: tooLarge.body, error: `HTTP ${tooLarge.status}` });
      return http(call);
    };
    await reconcileOrganizationsOf(runtimeOf(api), at('120'));
    expect(api.calls).toEqual([`GET ${ORGANIZATIONS_PATH}/acme`, cacheList('99999999999'), etcdList, `PUT ${ORGANIZATIONS_PATH}/acme/status`]);
    expect(api.organizations.get('acme')!.status).toEqual({ namespaces: 2, reservations: [], countedResourceVersion: '120' });
    api.calls.length = 0;
    await reconcileOrganizationsOf(runtimeOf(api), at('110'));
    expect(api.calls).toEqual([`GET ${ORGANIZATIONS_PATH}/acme`, cacheList('120')]);
  });

  it('lists from etcd when the event has no revision', async () => {
    const api = cluster();
    await reconcileOrganizationsOf(runtimeOf(api), at(undefined));
    expect(api.calls[1]).toBe(etcdList);
  });

  it('a queued pass lists at least as fresh as the newest event it answers; one without a revision makes it read etcd', async () => {
    const api = cluster();
    const rt = runtimeOf(api);
    // The first event's pass runs; 30 and 20 arrive while it does and share the queued pass.
    await Promise.all([reconcileOrganizationsOf(rt, at('10')), reconcileOrganizationsOf(rt, at('30')), reconcileOrganizationsOf(rt, at('20'))]);
    expect(api.calls.filter((c) => c.startsWith('GET /api/v1/namespaces'))).toEqual([cacheList('10'), cacheList('30')]);
    api.calls.length = 0;
    await Promise.all([reconcileOrganizationsOf(rt, at('40')), reconcileOrganizationsOf(rt, at('50')), reconcileOrganizationsOf(rt, at(undefined))]);
    expect(api.calls.filter((c) => c.startsWith('GET /api/v1/namespaces'))).toEqual([cacheList('40'), etcdList]);
  });
});

describe('the cache list through the real client', () => {
  const isCacheList = (req: KubeRequest) => req.path.includes('resourceVersionMatch');
  const etcdList = `GET /api/v1/namespaces?labelSelector=${encodeURIComponent('furnish.dev/organization=acme')}&limit=500`;
  const at = (rv?: string): ReconcileMessage => ({ ...message('ADDED', ['acme'], 'acme-1'), ...(rv ? { resourceVersion: rv } : {}) });
  const tooLarge = fixture('list-namespaces-rv-too-large');

  it('retries a 429 after its Retry-After, then answers from the cache; a 504 falls back to etcd at once', async () => {
    const api = cluster();
    const sleeps: number[] = [];
    let throttled = 0;
    const faults: FaultHook = (req) => (isCacheList(req) && throttled++ === 0 ? { status: 429, retryAfterSeconds: 1, data: { kind: 'Status', code: 429, message: 'too many requests' } } : undefined);
    const kube = clientOf(api, { faults, sleeps });
    await expect(reconcileOrganizationsOf(runtimeOf(api, collectingLogger(), kube), at('1234'))).resolves.toMatchObject({ updated: ['acme'], failed: [] });
    expect(kube.metrics.retries).toBe(1);
    expect(Math.max(...sleeps)).toBeGreaterThanOrEqual(1000);
    expect(api.calls).not.toContain(etcdList);

    const refused = cluster();
    const direct = clientOf(refused, { faults: (req) => (isCacheList(req) ? { status: tooLarge.status, data: tooLarge.body } : undefined), sleeps: [] });
    await expect(reconcileOrganizationsOf(runtimeOf(refused, collectingLogger(), direct), at('1234'))).resolves.toMatchObject({ updated: ['acme'], failed: [] });
    expect(direct.metrics.retries).toBe(0);
    expect(refused.calls).toEqual([`GET ${ORGANIZATIONS_PATH}/acme`, etcdList, `PUT ${ORGANIZATIONS_PATH}/acme/status`]);
  });

  it('does not take the cache\'s slow 504 for lists queueing in the server', async () => {
    const api = cluster();
    let refuse = false;
    const http = api.http;
    api.http = async (call) => (refuse && call.path.includes('resourceVersionMatch') ? { ok: false, status: tooLarge.status, data: tooLarge.body as never } : http(call));
    // The 504 comes after the cache waited for the revision (3 s on a real server), far above the lists before it.
    const kube = clientOf(api, { delay: (req) => (refuse && isCacheList(req) ? 600 : 0) });
    const rt = runtimeOf(api, collectingLogger(), kube);
    await reconcileOrganizationsOf(rt, at('10'));
    await reconcileOrganizationsOf(rt, at(undefined));
    refuse = true;
    await reconcileOrganizationsOf(rt, at('20'));
    expect(kube.pacing.counters.queueing).toBe(0);
  });
});

describe('reconcile-organization classifies failures once', () => {
  /** The push handler's answer to one message, and the lines it logged. */
  async function deliver(api: FakeOrganizationApi, msg: ReconcileMessage) {
    const log = collectingLogger();
    const body = { message: { data: encodeMessage(msg).data.toString('base64'), messageId: 'm-1' }, subscription: 'reconcile-organization' };
    const answer = await handleEnvelope({ accept: 'Namespace', handle: async (m) => ({ ...(await reconcileOrganizationsOf(runtimeOf(api), m)) }), log }, body);
    return { answer, log };
  }
  const faultOn = (match: (call: KubeCall) => boolean, status: number) => (call: KubeCall) => (match(call) ? status : undefined);
  const isList = (c: KubeCall) => c.method === 'GET' && c.path === ORGANIZATIONS_PATH;

  it('acknowledges, and reports once, a resync when the Organization CRD is not served (404 on the list)', async () => {
    const api = cluster();
    api.fault = faultOn(isList, 404);
    const { answer, log } = await deliver(api, message('SYNC', ['acme']));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ acknowledged: true, error: expect.stringContaining(`GET ${ORGANIZATIONS_PATH}: HTTP 404`) });
    expect(log.lines.filter((l) => l.severity === 'ERROR')).toEqual([expect.objectContaining({ message: 'permanent failure, delivery acknowledged' })]);
  });

  it.each([
    ['403 on the Organization read', (c: KubeCall) => c.method === 'GET' && c.path.endsWith('/acme'), 403],
    ['403 on the namespace list', (c: KubeCall) => c.path.startsWith('/api/v1/namespaces'), 403],
    ['422 on the status write', (c: KubeCall) => c.method === 'PUT', 422],
  ])('acknowledges a permanent failure: %s', async (_what, match, status) => {
    const api = cluster();
    api.fault = faultOn(match, status);
    const { answer } = await deliver(api, message('ADDED', ['acme'], 'acme-1'));
    expect(answer).toMatchObject({ status: 200, body: { acknowledged: true, error: expect.stringContaining(`HTTP ${status}`) } });
  });

  it.each([
    ['500 on the Organization list', isList, 500, 'SYNC'],
    ['429 on the Organization read', (c: KubeCall) => c.method === 'GET' && c.path.endsWith('/acme'), 429, 'ADDED'],
    ['no answer on the namespace list', (c: KubeCall) => c.path.startsWith('/api/v1/namespaces'), 0, 'ADDED'],
    ['503 on the status write', (c: KubeCall) => c.method === 'PUT', 503, 'MODIFIED'],
    ['conflicts on every write', (c: KubeCall) => c.method === 'PUT', 409, 'ADDED'],
  ] as const)('redelivers a transient failure: %s', async (_what, match, status, type) => {
    const api = cluster();
    api.fault = faultOn(match, status);
    const { answer } = await deliver(api, message(type, ['acme'], 'acme-1'));
    expect(answer.status).toBe(503);
  });
});
