// kube-sim's storage: a list in one namespace reads that namespace only, as kube-apiserver reads one
// etcd key range, and answers exactly what the whole kind filtered by namespace would.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../shared/kube/types.ts';
import { Store } from '../support/kube-sim/store.ts';

const cm = (namespace: string, name: string, v = '1'): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { v } } as KubeObject);
const names = (objs: KubeObject[]) => objs.map((o) => `${o.metadata.namespace}/${o.metadata.name}=${(o as { data?: { v?: string } }).data?.v}`);

describe('Store', () => {
  it('a namespaced list answers what the whole kind filtered by namespace answers, through creates, updates and deletes', () => {
    const s = new Store();
    for (const ns of ['b', 'a', 'c']) for (const n of ['y', 'x']) s.create('v1/configmaps', cm(ns, n));
    s.update('v1/configmaps', cm('a', 'x', '2'));
    s.delete('v1/configmaps', 'b', 'y');
    s.delete('v1/configmaps', 'c', 'x');
    s.delete('v1/configmaps', 'c', 'y');
    s.create('v1/configmaps', cm('c', 'z'));
    for (const ns of ['a', 'b', 'c', 'd']) {
      expect(names(s.list('v1/configmaps', ns))).toEqual(names(s.list('v1/configmaps').filter((o) => o.metadata.namespace === ns)));
    }
    expect(names(s.list('v1/configmaps', 'a'))).toEqual(['a/x=2', 'a/y=1']);
    expect(names(s.list('v1/configmaps', 'c'))).toEqual(['c/z=1']);
    // Cluster-scoped kinds are listed whole.
    s.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } } as KubeObject);
    expect(s.list('v1/namespaces').map((o) => o.metadata.name)).toEqual(['a']);
  });
});
