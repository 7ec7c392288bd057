// A fan-out batch: many namespaces converge in one delivery, the status is told once, and a
// transient failure of one namespace fails the delivery (after the others are done) so Pub/Sub
// redelivers it with its backoff.
import { describe, it, expect } from '@jest/globals';
import { KEY } from '../../../shared/keys.ts';
import { TransientError } from '../../../shared/kube/errors.ts';
import { ResourceResolver } from '../../../shared/kube/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { silentLogger } from '../../../shared/log.ts';
import { reconcileNamespace, type NamespaceDeps } from '../../../shared/reconcile/namespace.ts';
import { namespacesSelector, readBatchNamespaces, reconcileBatch, summariseBatch } from '../../../shared/reconcile/namespace-batch.ts';
import { templatesDigest } from '../../../shared/reconcile/fingerprints.ts';
import { memoryApi } from './memory-api.ts';

const ns = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.phase]: 'pending', team: 'x' }, annotations: { [KEY.creator]: 'alice' } } });
const tpl = (pods: string): NamespaceTemplate => ({
  apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: 'base' },
  spec: { namespaces: { labelSelector: { matchLabels: { team: 'x' } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'quota' }, data: { pods } }], deletionPolicy: 'Delete', mode: 'Enforce' },
});

function setup(names: string[]) {
  const api = memoryApi();
  for (const n of names) api.put(ns(n));
  api.put(tpl('50'));
  const notified: string[][] = [];
  const deps: NamespaceDeps = { kube: api.client, resolver: new ResourceResolver(api.client), log: silentLogger, notifyTemplates: async (t) => void notified.push(t) };
  return { api, deps, notified };
}

describe('reconcileBatch', () => {
  it('converges every namespace of the batch and tells reconcile-template once', async () => {
    const names = ['a', 'b', 'c'];
    const { api, deps, notified } = setup(names);
    for (const n of names) await reconcileNamespace({ ...deps, notifyTemplates: undefined }, n);
    api.put(tpl('60'));
    const hashes = (n: string) => ({ [`/ConfigMap/${n}/quota`]: String(api.get('v1', 'ConfigMap', n, 'quota')?.metadata.annotations?.[KEY.appliedHash]) });
    const r = await reconcileBatch(deps, { template: 'base', targets: names.map((n) => ({ n, h: hashes(n) })) });
    expect(r).toMatchObject({ result: 'batch', namespaces: 3, counts: { converged: 3, failed: 0, skipped: 0, gone: 0 }, writes: 3, failed: [] });
    for (const n of names) expect(api.get('v1', 'ConfigMap', n, 'quota')?.data).toEqual({ pods: '60' });
    expect(notified).toEqual([['base']]);
  });

  it('a namespace that is gone counts as gone; one that fails transiently fails the delivery after the others converged', async () => {
    const { api, deps } = setup(['a', 'b']);
    const failing = { ...deps, kube: { ...api.client, call: (async (req) => (req.method === 'GET' && req.path === '/api/v1/namespaces/b' ? { ok: false, status: 503, reason: 'ServiceUnavailable', error: 'try later' } : api.client.call(req))) as typeof api.client.call } };
    const run = reconcileBatch(failing, { template: 'base', targets: [{ n: 'a' }, { n: 'b' }, { n: 'gone' }] });
    await expect(run).rejects.toThrow(TransientError);
    await expect(run).rejects.toThrow(/1 of 3 namespaces failed transiently: b: /);
    expect(api.get('v1', 'ConfigMap', 'a', 'quota')?.data).toEqual({ pods: '50' });
  });
});

describe('a batch delivered late', () => {
  it('to an instance still holding the templates of its time does not put that older version back over a newer fan-out\'s', async () => {
    const { api, deps } = setup(['a']);
    await reconcileNamespace({ ...deps, notifyTemplates: undefined }, 'a');
    // What the fan-out read of a's objects when it published.
    const held = () => ({ '/ConfigMap/a/quota': String(api.get('v1', 'ConfigMap', 'a', 'quota')?.metadata.annotations?.[KEY.appliedHash]) });
    // v2's batch, delivered to this instance: it lists the templates (v2) and holds them.
    api.put(tpl('60'));
    const v2 = { template: 'base', templates: templatesDigest([tpl('60')]), targets: [{ n: 'a', h: held() }] };
    await reconcileBatch(deps, v2);
    expect(api.get('v1', 'ConfigMap', 'a', 'quota')?.data).toEqual({ pods: '60' });
    // v3's batch converges a on another instance; then v2's batch is delivered again, here.
    api.put(tpl('70'));
    const other = api.newClient();
    await reconcileBatch({ ...deps, kube: other, resolver: new ResourceResolver(other) }, { template: 'base', templates: templatesDigest([tpl('70')]), targets: [{ n: 'a', h: held() }] });
    expect(api.get('v1', 'ConfigMap', 'a', 'quota')?.data).toEqual({ pods: '70' });
    await reconcileBatch(deps, v2);
    expect(api.get('v1', 'ConfigMap', 'a', 'quota')?.data).toEqual({ pods: '70' });
  });
});

describe('how a batch reads its namespaces', () => {
  it('in a large cluster by a GET each, not by a labelled list of namespaces (the API server reads such a list whole from etcd: its cost is the cluster\'s size)', async () => {
    const names = ['a', 'b', 'c'];
    const { api, deps } = setup([...names, ...Array.from({ length: 20 }, (_, i) => `other-${i}`)]);
    for (const n of names) await reconcileNamespace({ ...deps, notifyTemplates: undefined }, n);
    api.put(tpl('60'));
    const sent = api.requests.length;
    await reconcileBatch(deps, { template: 'base', targets: names.map((n) => ({ n })) });
    const reads = api.requests.slice(sent).filter((r) => r.method === 'GET' && r.path.startsWith('/api/v1/namespaces'));
    expect(reads.filter((r) => r.path === '/api/v1/namespaces')).toEqual([]);
    expect(reads.filter((r) => /^\/api\/v1\/namespaces\/[^/]+$/.test(r.path)).map((r) => r.path).sort()).toEqual(names.map((n) => `/api/v1/namespaces/${n}`));
  });
});

describe('readBatchNamespaces', () => {
  it('lists the batch by the label every namespace carries; a namespace without it is left to its own read', async () => {
    const api = memoryApi();
    const labelled = (n: string) => ({ ...ns(n), metadata: { ...ns(n).metadata, labels: { ...ns(n).metadata.labels, [KEY.metadataName]: n } } });
    api.put(labelled('a'));
    api.put(labelled('b'));
    api.put(labelled('other'));
    api.put(ns('old'));
    const read = await readBatchNamespaces(api.client, ['a', 'b', 'old', 'gone'], silentLogger);
    expect([...read.keys()].sort()).toEqual(['a', 'b']);
    expect(read.get('a')).toMatchObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } });
    expect(api.requests.map((r) => r.query?.labelSelector)).toEqual([namespacesSelector(['a', 'b', 'old', 'gone'])]);
    expect(namespacesSelector(['a', 'b'])).toBe('kubernetes.io/metadata.name in (a,b)');
  });

  it('a hundred names a list, so the selector stays short', async () => {
    const api = memoryApi();
    await readBatchNamespaces(api.client, Array.from({ length: 250 }, (_, i) => `n${i}`), silentLogger);
    expect(api.requests).toHaveLength(3);
  });

  it('a batch told to list reads its namespaces by one list, no GET', async () => {
    const names = ['a', 'b', 'c'];
    const { api, deps } = setup([]);
    for (const n of names) api.put({ ...ns(n), metadata: { ...ns(n).metadata, labels: { ...ns(n).metadata.labels, [KEY.metadataName]: n } } });
    for (const n of names) await reconcileNamespace({ ...deps, notifyTemplates: undefined }, n);
    const sent = api.requests.length;
    await reconcileBatch(deps, { template: 'base', targets: names.map((n) => ({ n })), listTargets: true });
    const reads = api.requests.slice(sent).filter((r) => r.method === 'GET' && /^\/api\/v1\/namespaces(\/[^/]+)?$/.test(r.path));
    expect(reads.map((r) => r.path)).toEqual(['/api/v1/namespaces']);
  });
});

describe('summariseBatch', () => {
  it('adds the outcomes up and lists permanent failures by namespace', () => {
    const { result, transient } = summariseBatch([
      { result: 'converged', namespace: 'a', writes: 2 },
      { result: 'failed', namespace: 'b', writes: 1, reason: 'x' },
      { result: 'skipped', namespace: 'kube-system', writes: 0 },
    ]);
    expect(transient).toBeNull();
    expect(result).toEqual({ result: 'batch', namespaces: 3, counts: { converged: 1, failed: 1, skipped: 1, gone: 0 }, writes: 3, failed: ['b'] });
  });
});
