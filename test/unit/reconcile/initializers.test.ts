// The reconciler's part in pluggable initializers, on the in-memory API: it removes its own
// `furnish` initializer instead of declaring the namespace ready while others are pending, and
// marks a namespace failed whose working initializer is past its timeout.
import { describe, expect, it } from '@jest/globals';
import { KEY } from '../../../shared/keys.ts';
import { ResourceResolver } from '../../../shared/kube/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { collectingLogger } from '../../../shared/log.ts';
import { reconcileNamespace, type NamespaceDeps } from '../../../shared/reconcile/namespace.ts';
import { memoryApi, type MemoryApi } from './memory-api.ts';
import { configuration, SEEDER, VAULT } from '../initializers/helpers.ts';

const LIST = 'furnish.dev/initializers';

function ns(name: string, list: string, created = '2026-01-01T00:00:00Z'): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, creationTimestamp: created, labels: { [KEY.phase]: 'pending' }, annotations: { [KEY.creator]: 'alice', [LIST]: list } } };
}

function setup(now: string): { api: MemoryApi; deps: NamespaceDeps } {
  const api = memoryApi();
  api.put({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: 'base' }, spec: { namespaces: { labelSelector: {} }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } }] } });
  api.put(configuration('10-init', [SEEDER, VAULT]));
  return { api, deps: { kube: api.client, resolver: new ResourceResolver(api.client), log: collectingLogger(), now: () => new Date(now) } };
}

const meta = (api: MemoryApi, name: string) => api.get('v1', 'Namespace', undefined, name)!.metadata;

describe('reconcileNamespace with initializers', () => {
  it('removes furnish and leaves the namespace pending for the next initializer', async () => {
    const { api, deps } = setup('2026-01-01T00:00:01Z');
    api.put(ns('team-a', 'furnish,secret-seeder'));
    expect((await reconcileNamespace(deps, 'team-a')).result).toBe('converged');
    expect(meta(api, 'team-a').annotations?.[LIST]).toBe('secret-seeder');
    expect(meta(api, 'team-a').labels?.[KEY.phase]).toBe('pending');
    // Nothing more to do for Furnish: a resync writes nothing.
    expect((await reconcileNamespace(deps, 'team-a')).writes).toBe(0);
  });

  it('sets ready when furnish was the only initializer', async () => {
    const { api, deps } = setup('2026-01-01T00:00:01Z');
    api.put(ns('team-a', 'furnish'));
    await reconcileNamespace(deps, 'team-a');
    expect(meta(api, 'team-a')).toMatchObject({ labels: { [KEY.phase]: 'ready' }, annotations: { [LIST]: '' } });
  });

  it('marks the namespace failed once the working initializer is past its timeout, once', async () => {
    const { api, deps } = setup('2026-01-01T00:01:00Z');
    api.put(ns('team-a', 'vault'));
    await reconcileNamespace(deps, 'team-a');
    expect(meta(api, 'team-a')).toMatchObject({ labels: { [KEY.phase]: 'failed' }, annotations: { 'furnish.dev/failure': 'vault: did not finish within 60s of the namespace\'s creation' } });
    expect((await reconcileNamespace(deps, 'team-a')).writes).toBe(0);
  });

  it('leaves an initializer alone before its timeout', async () => {
    const { api, deps } = setup('2026-01-01T00:00:59Z');
    api.put(ns('team-a', 'vault'));
    await reconcileNamespace(deps, 'team-a');
    expect(meta(api, 'team-a').labels?.[KEY.phase]).toBe('pending');
  });
});
