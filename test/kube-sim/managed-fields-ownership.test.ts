// What drift-by-ownership (shared/reconcile/drift.ts) relies on, the same on kube-sim and on a real
// kube-apiserver 1.26 (FURNISH_TEST_KUBECONFIG): after Furnish's server-side apply (applyObject:
// manager `furnish`, force), a field another manager changes or removes, by update, patch, a
// forced apply or the scale subresource, leaves Furnish's Apply entry; a change beside our fields,
// the server's normalisation (1000m stored as 1) and a status write move nothing; the same value
// applied by another manager is shared. A re-apply takes the fields back.
// Where kube-sim used to differ: a Deployment's containers were an atomic list (no pod template
// table); a port's key left out the defaulted `protocol: TCP`; an empty map applied was not owned;
// an apply that creates owned the defaults the server adds (a Namespace's name label); a
// NetworkPolicy got no default protocol or policyTypes.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { applyObject } from '../../shared/kube/api.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { knownResource, resourcePath, type ResourceInfo } from '../../shared/kube/resources.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { appliedFieldsHeld } from '../../shared/reconcile/drift.ts';
import { groupOf } from '../../shared/render/index.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { clientFor, waitFor } from '../integration/helpers.ts';

let cluster: TestCluster;
let kube: KubeClient;
const NS = `owned-${Math.random().toString(36).slice(2, 7)}`;
const OURS = { 'furnish.dev/template': 'base' };

beforeAll(async () => {
  cluster = await useTestCluster();
  kube = await clientFor(cluster.kubeconfigPath, 'admin');
  expect((await kube.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status).toBe(201);
});

afterAll(async () => {
  await kube.call({ method: 'DELETE', path: `/api/v1/namespaces/${NS}` });
  await kube.call({ method: 'DELETE', path: `/api/v1/namespaces/${NS}-applied` });
  kube.close();
  await cluster.stop();
});

const info = (obj: KubeObject): ResourceInfo => knownResource(groupOf(obj.apiVersion), obj.kind)!;
const pathOf = (obj: KubeObject): string => resourcePath(info(obj), NS, obj.metadata.name);

async function apply(want: KubeObject): Promise<KubeObject> {
  const res = await applyObject(kube, info(want), want);
  expect([res.ok, res.error]).toEqual([true, undefined]);
  return res.data!;
}

const CONTENT = { strategic: 'application/strategic-merge-patch+json', merge: 'application/merge-patch+json', json: 'application/json-patch+json', apply: 'application/apply-patch+yaml' } as const;

/** A write as another manager: a patch of `type`, or an apply (`?force` when forced). */
async function writeAs(manager: string, want: KubeObject, type: keyof typeof CONTENT, body: unknown, opts: { force?: boolean; sub?: string } = {}): Promise<KubeObject> {
  const res = await kube.call<KubeObject>({
    method: 'PATCH', path: `${pathOf(want)}${opts.sub ? `/${opts.sub}` : ''}`, contentType: CONTENT[type], body,
    query: { fieldManager: manager, ...(opts.force ? { force: true } : {}) },
  });
  expect([res.ok, res.error]).toEqual([true, undefined]);
  return get(want);
}

async function get(want: KubeObject): Promise<KubeObject> {
  return (await kube.call<KubeObject>({ method: 'GET', path: pathOf(want) })).data!;
}

/** Whether the entry of `manager` (Apply for furnish, else Update unless `operation`) owns the field at `path` (FieldsV1 elements). */
function owns(live: KubeObject, path: string[], manager = 'furnish', operation = manager === 'furnish' ? 'Apply' : 'Update'): boolean {
  const entry = (live.metadata.managedFields as Array<{ manager: string; operation: string; subresource?: string; fieldsV1: unknown }>)
    .find((e) => e.manager === manager && e.operation === operation && !e.subresource);
  let node = entry?.fieldsV1 as Record<string, unknown> | undefined;
  for (const element of path) node = node?.[element] as Record<string, unknown> | undefined;
  return node !== undefined;
}

const configMap = (name: string): KubeObject => ({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, labels: { ...OURS, team: 'blue' } }, data: { mode: 'strict', level: '3' },
});
const LEVEL = ['f:data', 'f:level'];

describe('a field another manager changes or removes leaves Furnish\'s Apply entry', () => {
  it('a patch (kubectl edit) takes the field; a re-apply takes it back', async () => {
    const want = configMap('edited');
    const live = await apply(want);
    expect([owns(live, LEVEL), appliedFieldsHeld(want, live)]).toEqual([true, true]);
    const edited = await writeAs('kubectl-edit', want, 'strategic', { data: { level: '4' } });
    expect([owns(edited, LEVEL), owns(edited, LEVEL, 'kubectl-edit'), owns(edited, ['f:data', 'f:mode'])]).toEqual([false, true, true]);
    expect(appliedFieldsHeld(want, edited)).toBe(false);
    expect(appliedFieldsHeld(want, await apply(want))).toBe(true);
  });

  it('an update (PUT) takes what it changed and nothing else', async () => {
    const want = configMap('replaced');
    const live = await apply(want);
    const res = await kube.call<KubeObject>({ method: 'PUT', path: pathOf(want), query: { fieldManager: 'kubectl-replace' }, body: { ...live, data: { ...(live.data as object), mode: 'lax' } } });
    expect(res.status).toBe(200);
    const replaced = await get(want);
    expect([owns(replaced, ['f:data', 'f:mode']), owns(replaced, LEVEL), appliedFieldsHeld(want, replaced)]).toEqual([false, true, false]);
  });

  it('a label of ours removed is gone from the entry; a label added beside ours moves nothing', async () => {
    const want = configMap('labels');
    await apply(want);
    const added = await writeAs('kubectl-label', want, 'merge', { metadata: { labels: { owner: 'ops' } } });
    expect([owns(added, ['f:metadata', 'f:labels', 'f:team']), appliedFieldsHeld(want, added)]).toEqual([true, true]);
    const removed = await writeAs('kubectl-label', want, 'json', [{ op: 'remove', path: '/metadata/labels/team' }]);
    expect([owns(removed, ['f:metadata', 'f:labels', 'f:team']), appliedFieldsHeld(want, removed)]).toEqual([false, false]);
  });

  it('the same value applied by another manager is shared; another value forced is taken', async () => {
    const want = configMap('shared');
    await apply(want);
    const theirs = (level: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared', namespace: NS }, data: { level } });
    const shared = await writeAs('other-tool', want, 'apply', theirs('3'));
    expect([owns(shared, LEVEL), owns(shared, LEVEL, 'other-tool', 'Apply'), appliedFieldsHeld(want, shared)]).toEqual([true, true, true]);
    const taken = await writeAs('other-tool', want, 'apply', theirs('4'), { force: true });
    expect([owns(taken, LEVEL), owns(taken, LEVEL, 'other-tool', 'Apply'), appliedFieldsHeld(want, taken)]).toEqual([false, true, false]);
  });
});

describe('keyed and atomic lists', () => {
  const deployment: KubeObject = {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: NS, labels: OURS },
    spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: {
      containers: [{ name: 'app', image: 'nginx:1.25', ports: [{ containerPort: 8080 }], env: [{ name: 'MODE', value: 'strict' }], resources: {} }] } } },
  };
  const APP = ['f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"app"}'];
  const patchApp = (change: Record<string, unknown>) => ({ spec: { template: { spec: { containers: [{ name: 'app', ...change }] } } } });

  it('a container (by name; its port keyed with the protocol the server defaulted): an env var added beside ours moves nothing, the image changed is taken', async () => {
    const live = await apply(deployment);
    // An empty map applied is owned as a leaf.
    expect([owns(live, [...APP, 'f:ports', 'k:{"containerPort":8080,"protocol":"TCP"}']), owns(live, [...APP, 'f:resources']), appliedFieldsHeld(deployment, live)]).toEqual([true, true, true]);
    const envAdded = await writeAs('kubectl-set', deployment, 'strategic', patchApp({ env: [{ name: 'EXTRA', value: '1' }] }));
    expect([owns(envAdded, [...APP, 'f:env', 'k:{"name":"EXTRA"}']), appliedFieldsHeld(deployment, envAdded)]).toEqual([false, true]);
    const imageSet = await writeAs('kubectl-set', deployment, 'strategic', patchApp({ image: 'nginx:1.26' }));
    expect([owns(imageSet, [...APP, 'f:image']), owns(imageSet, [...APP, 'f:name']), appliedFieldsHeld(deployment, imageSet)]).toEqual([false, true, false]);
  });

  it('replicas changed through the scale subresource (kubectl scale) are taken too', async () => {
    expect(appliedFieldsHeld(deployment, await apply(deployment))).toBe(true);
    const scaled = await writeAs('kubectl-scale', deployment, 'merge', { spec: { replicas: 3 } }, { sub: 'scale' });
    expect([owns(scaled, ['f:spec', 'f:replicas']), appliedFieldsHeld(deployment, scaled)]).toEqual([false, false]);
  });

  it('NetworkPolicy ingress is atomic: owned whole with the protocol the server added; another port added takes it all', async () => {
    const want: KubeObject = {
      apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'web', namespace: NS, labels: OURS },
      spec: { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ ports: [{ port: 80 }] }] },
    };
    const live = await apply(want);
    // The server's defaults: a port's protocol, and policyTypes (not ours: the template leaves them out).
    expect([(live.spec as { ingress: unknown }).ingress, (live.spec as { policyTypes: unknown }).policyTypes]).toEqual([[{ ports: [{ port: 80, protocol: 'TCP' }] }], ['Ingress']]);
    expect([owns(live, ['f:spec', 'f:ingress']), owns(live, ['f:spec', 'f:policyTypes']), appliedFieldsHeld(want, live)]).toEqual([true, false, true]);
    const edited = await writeAs('kubectl-edit', want, 'json', [{ op: 'add', path: '/spec/ingress/0/ports/-', value: { port: 443 } }]);
    expect([owns(edited, ['f:spec', 'f:ingress']), appliedFieldsHeld(want, edited)]).toEqual([false, false]);
  });
});

describe('what is not drift', () => {
  it('a quota\'s hard 1000m stored as 1 stays ours, and so does everything after the quota controller\'s status write', async () => {
    const want: KubeObject = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'compute', namespace: NS, labels: OURS }, spec: { hard: { 'requests.cpu': '1000m', pods: '10' } } };
    const live = await apply(want);
    expect((live.spec as { hard: Record<string, string> }).hard['requests.cpu']).toBe('1');
    const counted = await waitFor('the quota controller\'s status', async () => {
      const q = await get(want);
      return (q.status as { used?: unknown } | undefined)?.used !== undefined && q;
    });
    expect([owns(counted, ['f:spec', 'f:hard', 'f:requests.cpu']), owns(counted, ['f:status']), appliedFieldsHeld(want, counted)]).toEqual([true, false, true]);
    const edited = await writeAs('kubectl-edit', want, 'merge', { spec: { hard: { 'requests.cpu': '2' } } });
    expect([owns(edited, ['f:spec', 'f:hard', 'f:requests.cpu']), appliedFieldsHeld(want, edited)]).toEqual([false, false]);
  });

  it('a Namespace created by our apply: its name label is the server\'s default, not ours', async () => {
    const want: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `${NS}-applied`, labels: OURS } };
    const res = await applyObject(kube, knownResource('', 'Namespace')!, want);
    expect(res.status).toBe(201);
    const live = res.data!;
    const LABELS = ['f:metadata', 'f:labels'];
    expect([live.metadata.labels?.['kubernetes.io/metadata.name'], owns(live, [...LABELS, 'f:kubernetes.io/metadata.name']), owns(live, [...LABELS, 'f:furnish.dev/template'])])
      .toEqual([`${NS}-applied`, false, true]);
    expect(appliedFieldsHeld(want, live)).toBe(true);
    const path = `/api/v1/namespaces/${NS}-applied`;
    expect((await kube.call({ method: 'PATCH', path, contentType: CONTENT.json, query: { fieldManager: 'kubectl-label' }, body: [{ op: 'remove', path: '/metadata/labels/furnish.dev~1template' }] })).ok).toBe(true);
    expect(appliedFieldsHeld(want, (await kube.call<KubeObject>({ method: 'GET', path })).data!)).toBe(false);
  });
});
