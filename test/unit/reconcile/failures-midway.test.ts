// A reconcile whose calls fail midway (a 503, or calls refused past its delivery's time: cause.ts
// callsUntil) fails its delivery as transient, after the writes it started have settled, with what
// it created of a template that could not be applied in full deleted again; and nothing it shared
// with other reconciles of the instance stays failed for them (review findings F1, F2).
import { describe, expect, it } from '@jest/globals';
import { KEY } from '../../../shared/keys.ts';
import { withCause } from '../../../shared/kube/cause.ts';
import type { KubeClient, KubeRequest } from '../../../shared/kube/client.ts';
import { TransientError } from '../../../shared/kube/errors.ts';
import { ResourceResolver } from '../../../shared/kube/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { silentLogger } from '../../../shared/log.ts';
import { mapLimit } from '../../../shared/reconcile/concurrency.ts';
import { reconcileNamespace } from '../../../shared/reconcile/namespace.ts';
import { readTemplates } from '../../../shared/reconcile/namespace-reads.ts';
import { memoryApi, type MemoryApi } from './memory-api.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('mapLimit', () => {
  it('a call that throws stops new ones from starting; its error comes once the calls started have settled', async () => {
    const started: number[] = [];
    const ended: number[] = [];
    const run = mapLimit([0, 1, 2, 3, 4, 5], 2, async (i) => {
      started.push(i);
      await pause(i === 0 ? 1 : 30);
      if (i === 0) throw new Error('refused');
      ended.push(i);
    });
    await expect(run).rejects.toThrow('refused');
    expect(started).toEqual([0, 1]);
    expect(ended).toEqual([1]);
    // The first error in time, whichever worker threw it.
    await expect(mapLimit([0, 1], 2, async (i) => {
      await pause(i === 0 ? 30 : 1);
      throw new Error(`error ${i}`);
    })).rejects.toThrow('error 1');
  });
});

describe('a reconcile whose calls fail midway', () => {
  it('a shared template list that failed is listed again by the next reconcile, never handed on', async () => {
    const api = memoryApi();
    api.put({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: 'quotas' }, spec: { templates: [] } } as KubeObject);
    // The first list is sent by a delivery past its time for calls: unsent, transient.
    await expect(withCause({ kind: 'Namespace', name: 'a', callsUntil: performance.now() - 1 }, () => readTemplates(api.client, '50'))).rejects.toBeInstanceOf(TransientError);
    const again = await readTemplates(api.client, '50');
    expect(again.ok && again.value.templates.map((t) => t.metadata.name)).toEqual(['quotas']);
  });

  it('a kind whose discovery fails for a passing reason: the delivery fails as transient once the writes settled, and the template\'s objects created so far are deleted again', async () => {
    const api = memoryApi();
    api.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { [KEY.phase]: 'pending', team: 'x' }, annotations: { [KEY.creator]: 'alice' } } });
    const objects = [...['a', 'b', 'c', 'd'].map((name) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: name } })), { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }];
    api.put({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: 'mixed' }, spec: { namespaces: { labelSelector: { matchLabels: { team: 'x' } } }, templates: objects, mode: 'Enforce', deletionPolicy: 'Delete' } } as KubeObject);
    // Discovery serves the Widget to the reads (by group-kind); when the writes look it up by its
    // apiVersion, it answers 503, late, while the ConfigMaps are written beside it.
    let versionLookups = 0;
    const discovery = { ...api.client, call: async (req: KubeRequest) => {
      if (req.path === '/apis/example.com') return { ok: true, status: 200, data: { preferredVersion: { version: 'v1' } }, attempts: 1 };
      if (req.path !== '/apis/example.com/v1') return api.client.call(req);
      if ((versionLookups += 1) === 1) return { ok: true, status: 200, data: { resources: [{ name: 'widgets', kind: 'Widget', namespaced: true }] }, attempts: 1 };
      await pause(30);
      return { ok: false, status: 503, error: 'the server is currently unable to handle the request', attempts: 1 };
    } } as KubeClient;
    const deps = { kube: api.client, resolver: new ResourceResolver(discovery), log: silentLogger, applyConcurrency: 2 };
    await expect(reconcileNamespace(deps, 'team-a')).rejects.toBeInstanceOf(TransientError);
    const settled = api.requests.length;
    await pause(50);
    // Nothing sent after the delivery failed; nothing of the template left; the namespace still pending.
    expect(api.requests.length).toBe(settled);
    expect(api.writes().filter((r) => r.method === 'DELETE').length).toBeGreaterThan(0);
    expect(api.all('ConfigMap').filter((o) => o.metadata.namespace === 'team-a' && o.metadata.labels?.[KEY.template] === 'mixed')).toEqual([]);
    expect(api.get('v1', 'Namespace', undefined, 'team-a')?.metadata.labels?.[KEY.phase]).toBe('pending');
  });

  it('a template whose new object cannot be written for a passing reason (its apply, or its kind\'s discovery) keeps its old object: a template with a failed write releases nothing', async () => {
    const unavailable = { ok: false, status: 503, error: 'the server is currently unable to handle the request', attempts: 1 };
    const cases = {
      // The apply of the new ServiceAccount answers 503.
      apply: { object: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'new' } }, resolverCall: (api: MemoryApi) => (req: KubeRequest) => api.client.call(req), kubeCall: (api: MemoryApi) => (req: KubeRequest) => (req.method === 'PATCH' && req.path.endsWith('/serviceaccounts/new') ? Promise.resolve(unavailable) : api.client.call(req)) },
      // The new Widget's kind is found by the reads (by group-kind), then its lookup by apiVersion for the write answers 503.
      discovery: { object: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'new' } }, kubeCall: (api: MemoryApi) => (req: KubeRequest) => api.client.call(req), resolverCall: (api: MemoryApi) => {
        let lookups = 0;
        return async (req: KubeRequest) => {
          if (req.path === '/apis/example.com') return { ok: true, status: 200, data: { preferredVersion: { version: 'v1' } }, attempts: 1 };
          if (req.path !== '/apis/example.com/v1') return api.client.call(req);
          return (lookups += 1) === 1 ? { ok: true, status: 200, data: { resources: [{ name: 'widgets', kind: 'Widget', namespaced: true }] }, attempts: 1 } : unavailable;
        };
      } },
    };
    for (const [fault, c] of Object.entries(cases)) {
      const api = memoryApi();
      api.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { [KEY.phase]: 'pending', team: 'x' }, annotations: { [KEY.creator]: 'alice' } } });
      const tpl = (object: unknown) => ({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: 'swap' }, spec: { namespaces: { labelSelector: { matchLabels: { team: 'x' } } }, templates: [object], mode: 'Enforce', deletionPolicy: 'Delete' } } as KubeObject);
      api.put(tpl({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'old' }, data: { k: 'v' } }));
      await reconcileNamespace({ kube: api.client, resolver: new ResourceResolver(api.client), log: silentLogger }, 'team-a');
      expect(api.get('v1', 'ConfigMap', 'team-a', 'old')).toBeDefined();
      api.put(tpl(c.object));
      const kube = { ...api.client, call: c.kubeCall(api) } as KubeClient;
      const resolver = new ResourceResolver({ ...api.client, call: c.resolverCall(api) } as KubeClient);
      await expect(reconcileNamespace({ kube, resolver, log: silentLogger }, 'team-a')).rejects.toBeInstanceOf(TransientError);
      expect([fault, api.get('v1', 'ConfigMap', 'team-a', 'old') !== undefined]).toEqual([fault, true]);
    }
  });
});
