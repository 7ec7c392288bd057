// reconcile-lnamespace's executor on the in-memory API: the planned writes, in order, then none;
// what a failed read or write does to the delivery (retried when transient, acknowledged when not).
import { describe, expect, it } from '@jest/globals';
import { DEFAULT_LNS_SETTINGS } from '../../../shared/lnamespace/desired.ts';
import { reconcileLNamespace } from '../../../shared/lnamespace/reconcile.ts';
import { TransientError } from '../../../shared/kube/errors.ts';
import { collectingLogger } from '../../../shared/log.ts';
import { requestTarget } from '../../integration/helpers.ts';
import { memoryApi } from '../reconcile/memory-api.ts';

const shop = { apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', metadata: { name: 'shop', annotations: { 'furnish.dev/creator': 'alice' } }, spec: { users: [{ kind: 'User' as const, name: 'bob' }], sudoers: [{ kind: 'User' as const, name: 'carol' }] } };

describe('reconcileLNamespace', () => {
  it('creates the namespace first, then the bindings, records the status; a second run writes nothing', async () => {
    const api = memoryApi();
    api.put(shop);
    const log = collectingLogger();
    const first = await reconcileLNamespace({ kube: api.client, settings: DEFAULT_LNS_SETTINGS, log }, 'shop');
    expect(first).toMatchObject({ result: 'converged', namespace: 'create', writes: 8 });
    expect(api.writes()[0]!.path).toBe('/api/v1/namespaces/shop');
    expect(api.get('v1', 'Namespace', undefined, 'shop')?.metadata.annotations).toEqual({ 'furnish.dev/requester': 'alice' });
    expect(api.get('furnish.dev/v1alpha1', 'LNamespace', undefined, 'shop')?.status).toMatchObject({ namespace: 'shop', bindings: { users: 1, managers: 0, sudoers: 1 } });
    const again = await reconcileLNamespace({ kube: api.client, settings: DEFAULT_LNS_SETTINGS, log }, 'shop');
    expect(again).toMatchObject({ result: 'converged', writes: 0 });
  });

  it('records the namespace it created by uid, from the create\'s answer; ownerReferences removed by a sudoer are put back and the removed sudoer loses sudo (issue 25, finding 5)', async () => {
    const api = memoryApi();
    api.put(shop);
    const deps = { kube: api.client, settings: DEFAULT_LNS_SETTINGS, log: collectingLogger() };
    await reconcileLNamespace(deps, 'shop');
    const ns = api.get('v1', 'Namespace', undefined, 'shop')!;
    expect(api.get('furnish.dev/v1alpha1', 'LNamespace', undefined, 'shop')?.status).toMatchObject({ namespaceUID: ns.metadata.uid, sudo: { group: 'furnish:sudoers:shop:uid-shop', standIn: 'furnish:sudo:shop:uid-shop' } });
    // The sudoer detaches the namespace; the manager removes her.
    api.put({ ...ns, metadata: { ...ns.metadata, ownerReferences: [] } });
    api.put({ ...api.get('furnish.dev/v1alpha1', 'LNamespace', undefined, 'shop')!, spec: { ...shop.spec, sudoers: [] } });
    expect(await reconcileLNamespace(deps, 'shop')).toMatchObject({ result: 'converged', namespace: 'owned' });
    expect(api.get('v1', 'Namespace', undefined, 'shop')?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'LNamespace', uid: 'uid-shop' })]);
    expect(api.all('ClusterRoleBinding').map((o) => o.metadata.name)).toEqual([]);
    expect(api.all('RoleBinding').map((o) => o.metadata.name)).toEqual(['furnish:users']);
  });

  it('gone: nothing to do (the garbage collector has the rest)', async () => {
    expect(await reconcileLNamespace({ kube: memoryApi().client, settings: DEFAULT_LNS_SETTINGS, log: collectingLogger() }, 'nope')).toEqual({ result: 'gone', lnamespace: 'nope', writes: 0 });
  });

  it('a read refused for good (403) is reported and acknowledged; an unavailable API server fails the delivery', async () => {
    const forbidden = memoryApi((req) => (requestTarget(req).resource === 'clusterroles' && requestTarget(req).verb === 'list' ? { status: 403, reason: 'Forbidden', error: 'clusterroles is forbidden' } : undefined));
    forbidden.put(shop);
    const log = collectingLogger();
    const r = await reconcileLNamespace({ kube: forbidden.client, settings: DEFAULT_LNS_SETTINGS, log }, 'shop');
    expect(r).toMatchObject({ result: 'failed', writes: 0, reason: expect.stringContaining('list clusterroles: HTTP 403') });
    expect(log.lines.map((l) => l.severity)).toEqual(['ERROR']);

    const down = memoryApi((req) => (requestTarget(req).verb === 'patch' ? { status: 503, error: 'unavailable' } : undefined));
    down.put(shop);
    await expect(reconcileLNamespace({ kube: down.client, settings: DEFAULT_LNS_SETTINGS, log }, 'shop')).rejects.toBeInstanceOf(TransientError);
  });

  it('a write refused for good (the namespace refused by admission) shows in the status, and nothing else is written', async () => {
    const api = memoryApi();
    api.rejectWhen = (o) => (o.kind === 'Namespace' ? 'admission webhook "validate-namespace.furnish.dev" denied the request: over quota' : undefined);
    api.put(shop);
    const r = await reconcileLNamespace({ kube: api.client, settings: DEFAULT_LNS_SETTINGS, log: collectingLogger() }, 'shop');
    expect(r.result).toBe('failed');
    expect(api.writes().map((w) => `${w.method} ${w.path}`)).toEqual(['PATCH /api/v1/namespaces/shop', 'PATCH /apis/furnish.dev/v1alpha1/lnamespaces/shop/status']);
    expect(api.get('furnish.dev/v1alpha1', 'LNamespace', undefined, 'shop')?.status).toMatchObject({ conditions: [{ status: 'False', reason: 'WriteFailed', message: expect.stringContaining('over quota') }] });
  });
});
