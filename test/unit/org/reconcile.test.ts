import { describe, expect, it } from '@jest/globals';
import type { KubeCall, KubeHttp, KubeResult } from '../../../shared/kube/http.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { reconcileOrganizations } from '../../../shared/org/reconcile.ts';
import { memoryOrganizations } from '../../../shared/org/source.ts';
import { namespaceObject, organization } from '../../support/organizations.ts';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const later = (s: number) => new Date(NOW + s * 1000).toISOString();

/** Serves the namespace list two items per page, as a paginating API server would. */
function namespaceLister(namespaces: KubeObject[]): KubeHttp & { calls: string[] } {
  const calls: string[] = [];
  const http = async <T,>(call: KubeCall): Promise<KubeResult<T>> => {
    calls.push(call.path);
    const start = Number(/continue=(\d+)/.exec(call.path)?.[1] ?? 0);
    const items = namespaces.slice(start, start + 2);
    const next = start + 2 < namespaces.length ? String(start + 2) : undefined;
    return { ok: true, status: 200, data: { items, metadata: next ? { continue: next } : {} } as T };
  };
  return Object.assign(http, { calls });
}

describe('reconcile-organization', () => {
  it('counts live namespaces per organization over every page, drops consumed and expired reservations, writes only changes', async () => {
    const terminating = { ...namespaceObject('acme-3', { 'furnish.dev/organization': 'acme' }), status: { phase: 'Terminating' } };
    const http = namespaceLister([
      namespaceObject('acme-1', { 'furnish.dev/organization': 'acme' }),
      namespaceObject('acme-2', { 'furnish.dev/organization': 'acme' }),
      terminating,
      namespaceObject('globex-1', { 'furnish.dev/organization': 'globex' }),
    ]);
    const api = memoryOrganizations([
      organization('acme', [], { status: { namespaces: 7, reservations: [{ uid: 'a', namespace: 'acme-2', expires: later(30) }, { uid: 'b', namespace: 'acme-9', expires: later(30) }, { uid: 'c', namespace: 'x', expires: later(-1) }] } }),
      organization('globex', [], { status: { namespaces: 1, reservations: [] } }),
      organization('initech'),
    ]);
    const result = await reconcileOrganizations(api, http, () => NOW);
    expect(result).toEqual({ organizations: 3, updated: ['acme', 'initech'], conflicts: 0, failed: [] });
    expect(api.organizations.get('acme')!.status).toEqual({ namespaces: 2, reservations: [{ uid: 'b', namespace: 'acme-9', expires: later(30) }] });
    expect(api.organizations.get('initech')!.status).toEqual({ namespaces: 0, reservations: [] });
    expect(http.calls).toHaveLength(2);
    expect((await reconcileOrganizations(api, http, () => NOW)).updated).toEqual([]);
  });

  it('re-reads and retries when a reservation lands between read and write', async () => {
    const api = memoryOrganizations([organization('acme', [], { status: { namespaces: 5 } })]);
    const write = api.writeStatus.bind(api);
    let raced = false;
    api.writeStatus = async (org, status) => {
      if (!raced) {
        raced = true;
        const live = api.organizations.get('acme')!;
        await write(live, { ...live.status, reservations: [{ uid: 'new', namespace: 'n-new', expires: later(30) }] });
      }
      return write(org, status);
    };
    const result = await reconcileOrganizations(api, namespaceLister([]), () => NOW);
    expect(result.conflicts).toBe(1);
    expect(api.organizations.get('acme')!.status).toEqual({ namespaces: 0, reservations: [{ uid: 'new', namespace: 'n-new', expires: later(30) }] });
  });

  it('never writes a count from a namespace list older than a concurrent reconciler\'s', async () => {
    const names = Array.from({ length: 10 }, (_, i) => `n${i}`);
    const api = memoryOrganizations([organization('acme', [], { status: { namespaces: 0, reservations: names.map((n) => ({ uid: n, namespace: n, expires: later(30) })) } })]);
    // This reconciler's first list sees 5 namespaces; later lists see all 10.
    let lists = 0;
    const http = (async <T,>(call: KubeCall): Promise<KubeResult<T>> => {
      const items = (lists++ === 0 ? names.slice(0, 5) : names).map((n) => namespaceObject(n, { 'furnish.dev/organization': 'acme' }));
      return { ok: true, status: 200, data: { items, metadata: {} } as T, ...(call.path ? {} : {}) };
    }) as KubeHttp;
    // Before its first write, another reconciler (with the full list) trues acme up.
    const write = api.writeStatus.bind(api);
    let first = true;
    api.writeStatus = async (org, status) => {
      if (first) {
        first = false;
        await write(api.organizations.get('acme')!, { namespaces: 10, reservations: [] });
      }
      return write(org, status);
    };
    const result = await reconcileOrganizations(api, http, () => NOW);
    expect(result.conflicts).toBe(1);
    expect(api.organizations.get('acme')!.status).toEqual({ namespaces: 10, reservations: [] });
  });
});
