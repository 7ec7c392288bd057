// The resource quota controller: kube-sim against kube-apiserver 1.26.3 + kube-controller-manager
// (test/fixtures/kube-apiserver-1.26/api/quota-*.http, captured from a real control plane on loopback,
// and live when FURNISH_TEST_KUBECONFIG names a real cluster). The same steps on both: a quota is
// created in a namespace holding ConfigMaps, a Secret and two Pods; the controller fills
// status.hard and status.used in a write of the status subresource of its own (manager
// kube-controller-manager, a new resourceVersion, a MODIFIED event); a ConfigMap created adds to
// used (kube-apiserver's admission plugin), one deleted is counted away (the controller); a spec
// edit is followed by the controller's status. Every watch event is compared, masked only where
// values differ from run to run.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';
import { parseArgs } from '../support/kube-sim/main.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { waitFor } from '../integration/helpers.ts';
import { call, fixture, watch, type Endpoint } from './helpers.ts';

/** The request bodies the fixtures were captured with (quota-create.http, quota-watch.http). */
const QUOTA = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'compute' }, spec: { hard: {
  'requests.cpu': '8', 'requests.memory': '16Gi', 'limits.cpu': '16', 'limits.memory': '32Gi', pods: '50', 'count/pods': '50', cpu: '8', memory: '16Gi',
  'requests.ephemeral-storage': '10Gi', 'requests.nvidia.com/gpu': '2', persistentvolumeclaims: '20', 'requests.storage': '200Gi', services: '5',
  'services.loadbalancers': '0', 'services.nodeports': '0', configmaps: '10', 'count/configmaps': '10', secrets: '10', resourcequotas: '2',
  'count/serviceaccounts': '5', 'count/rolebindings.rbac.authorization.k8s.io': '20', 'count/networkpolicies.networking.k8s.io': '5', 'count/limitranges': '1',
  'count/events': '100', 'count/widgets.example.com': '3' } } };
const CONTENTS = [
  ['configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: '1' } }],
  ['secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token' }, stringData: { t: 'x' } }],
  ['pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: {
    containers: [
      { name: 'web', image: 'nginx', resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '0.5', memory: '128Mi' } } },
      { name: 'side', image: 'busybox', resources: { requests: { cpu: '250m', 'nvidia.com/gpu': '1' }, limits: { 'nvidia.com/gpu': '1' } } },
    ],
    initContainers: [{ name: 'init', image: 'busybox', resources: { requests: { cpu: '1', memory: '16Mi' } } }] } }],
  ['pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bare' }, spec: { containers: [{ name: 'bare', image: 'nginx' }] } }],
] as const;
const SPEC_EDIT = { spec: { hard: { pods: '60', 'count/events': null, 'count/widgets.example.com': null, secrets: null } } };

type Event = { type: string; object: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
const VOLATILE = new Set(['uid', 'resourceVersion', 'creationTimestamp', 'time']);

/** Values that differ from run to run masked; managedFields ordered by manager (entries written a second apart sort by time). */
function mask(value: unknown, key = '', namespace = ''): unknown {
  if (key === 'managedFields' && Array.isArray(value)) {
    return [...value].sort((a, b) => `${a.manager}/${a.subresource ?? ''}`.localeCompare(`${b.manager}/${b.subresource ?? ''}`)).map((v) => mask(v, '', namespace));
  }
  if (Array.isArray(value)) return value.map((v) => mask(v, '', namespace));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, VOLATILE.has(k) ? '<masked>' : k === 'namespace' && v === namespace ? '<ns>' : mask(v, k, namespace)]));
  }
  return value;
}
/**
 * The masked value, and the key order where it is the server's own: spec.hard, status and every
 * managedFields entry (top-level and metadata keys keep the client's order in kube-sim).
 */
function comparable(value: any, namespace: string): { masked: unknown; order: string } { // eslint-disable-line @typescript-eslint/no-explicit-any
  const obj = value.object ?? value;
  const order = mask({ hard: obj.spec?.hard, status: obj.status, managedFields: obj.metadata.managedFields }, '', namespace);
  return { masked: mask(value, '', namespace), order: JSON.stringify(order) };
}
const expectSame = (actual: unknown, actualNs: string, expected: unknown, expectedNs: string): void => expect(comparable(actual, actualNs)).toEqual(comparable(expected, expectedNs));

/** The steps of the capture, on any server; returns the create's answer and the quota's watch events. */
async function scenario(server: Endpoint, namespace: string): Promise<{ created: any; events: Event[] }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const ns = `/api/v1/namespaces/${namespace}`;
  expect((await call(server, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } })).status).toBe(201);
  // The controllers' default ServiceAccount and CA ConfigMap are counted too: wait for them, as the capture did.
  await waitFor('the default ServiceAccount and kube-root-ca.crt', async () => (await call(server, 'GET', `${ns}/serviceaccounts/default`)).status === 200
    && (await call(server, 'GET', `${ns}/configmaps/kube-root-ca.crt`)).status === 200);
  for (const [plural, body] of CONTENTS) expect((await call(server, 'POST', `${ns}/${plural}`, { body })).status).toBe(201);
  // From resourceVersion 0 (any: no quota exists yet): kube-apiserver 1.32 holds a watch from the
  // current revision until its cache has seen it, which over etcd 3.4 (no progress notifications)
  // ends in "Too large resource version" after 3 s when nothing of the kind changes.
  const stream = watch(server, `${ns}/resourcequotas?watch=true&resourceVersion=0`);
  expect(await stream.status).toBe(200);
  try {
    const created = await call(server, 'POST', `${ns}/resourcequotas?fieldManager=kubectl-create`, { body: QUOTA });
    expect(created.status).toBe(201);
    await stream.waitFor(2, 20_000);
    expect((await call(server, 'POST', `${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'later' }, data: { b: '2' } } })).status).toBe(201);
    await stream.waitFor(3, 20_000);
    expect((await call(server, 'DELETE', `${ns}/configmaps/settings`)).status).toBe(200);
    await stream.waitFor(4, 20_000);
    expect((await call(server, 'PATCH', `${ns}/resourcequotas/compute?fieldManager=kubectl-edit`, { contentType: 'application/merge-patch+json', body: SPEC_EDIT })).status).toBe(200);
    await stream.waitFor(6, 20_000);
    // Nothing else follows: the controller does not react to its own status write.
    await new Promise((r) => setTimeout(r, 300));
    return { created: created.body, events: [...stream.events] };
  } finally {
    stream.close();
  }
}

/** The fixture's watch stream as events. */
function fixtureEvents(): Event[] {
  return (fixture('quota-watch').body as string).split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Event);
}

const managersOf = (e: Event): string[] => (e.object.metadata.managedFields as Array<{ manager: string; subresource?: string }>).map((m) => `${m.manager}${m.subresource ? `/${m.subresource}` : ''}`).sort();

describe('the resource quota controller, as kube-controller-manager 1.26 runs it', () => {
  let sim: SimCluster;
  let simRun: { created: any; events: Event[] }; // eslint-disable-line @typescript-eslint/no-explicit-any
  const real = fixtureEvents();
  const realNamespace = real[0]!.object.metadata.namespace as string;

  beforeAll(async () => {
    sim = await startCluster();
    simRun = await scenario(sim, 'quota-fidelity');
  }, 60_000);
  afterAll(() => sim.stop());

  it('answers the create without status.used ({} status), as the real server does', () => {
    const created = fixture('quota-create');
    expectSame(simRun.created, 'quota-fidelity', created.body, realNamespace);
  });

  it('writes status.hard and status.used in a separate status write: MODIFIED, a new resourceVersion, manager kube-controller-manager with subresource status', () => {
    const [added, modified] = simRun.events;
    expect(added!.type).toBe('ADDED');
    expect(added!.object.status).toEqual({});
    expect(modified!.type).toBe('MODIFIED');
    expect(Number(modified!.object.metadata.resourceVersion)).toBeGreaterThan(Number(added!.object.metadata.resourceVersion));
    const entry = modified!.object.metadata.managedFields.find((m: { manager: string }) => m.manager === 'kube-controller-manager');
    expect(Object.keys(entry)).toEqual(['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource']);
    expect(entry).toMatchObject({ operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', subresource: 'status' });
    // Within the second of the create, as on the real server (the controller's informer reacts at once).
    expect(Math.abs(Date.parse(entry.time) - Date.parse(modified!.object.metadata.creationTimestamp))).toBeLessThanOrEqual(1000);
  });

  it('every watch event equals the real server\'s (status, used counts and quantities, managedFields and fieldsV1, key order)', () => {
    expect(simRun.events.map((e) => e.type)).toEqual(real.map((e) => e.type));
    expect(simRun.events.map(managersOf)).toEqual(real.map(managersOf));
    simRun.events.forEach((e, i) => expectSame(e, 'quota-fidelity', real[i], realNamespace));
  });

  // With FURNISH_TEST_KUBECONFIG (a real cluster), the same steps run there too.
  if (process.env.FURNISH_TEST_KUBECONFIG) it('live: the same steps on the FURNISH_TEST_KUBECONFIG server give the same events', async () => {
    const cluster: TestCluster = await useTestCluster();
    const namespace = `quota-fid-${Date.now().toString(36)}`;
    try {
      const run = await scenario(cluster, namespace);
      expect(run.events.map((e) => e.type)).toEqual(simRun.events.map((e) => e.type));
      run.events.forEach((e, i) => expectSame(e, namespace, simRun.events[i], 'quota-fidelity'));
    } finally {
      await call(cluster, 'DELETE', `/api/v1/namespaces/${namespace}`);
      await cluster.stop();
    }
  }, 60_000);
});

/** The steps of quota-scopes.http: pods of each kind, four scoped quotas, then one pod finished (its status phase Succeeded). */
const SCOPE_PODS = [
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'best' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'burst' }, spec: { containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '100m' } } }] } },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'job' }, spec: { activeDeadlineSeconds: 600, containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '200m', memory: '1Gi' }, limits: { memory: '1Gi' } } }] } },
];
const SCOPED_QUOTAS = [
  { metadata: { name: 'best-effort' }, spec: { scopes: ['BestEffort'], hard: { pods: '10' } } },
  { metadata: { name: 'not-best-effort' }, spec: { scopes: ['NotBestEffort'], hard: { pods: '10', 'requests.cpu': '4', 'count/pods': '10' } } },
  { metadata: { name: 'terminating' }, spec: { scopes: ['Terminating', 'NotBestEffort'], hard: { pods: '10', 'requests.cpu': '4', 'requests.memory': '4Gi', 'limits.memory': '4Gi' } } },
  { metadata: { name: 'selected' }, spec: { scopeSelector: { matchExpressions: [{ scopeName: 'NotTerminating', operator: 'Exists' }] }, hard: { pods: '10', cpu: '4' } } },
];

/** Each quota's status (key order kept) and its managers, once the last write has landed. */
async function scopedRun(server: Endpoint, namespace: string): Promise<string[]> {
  const ns = `/api/v1/namespaces/${namespace}`;
  expect((await call(server, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } })).status).toBe(201);
  await waitFor('the default ServiceAccount', async () => (await call(server, 'GET', `${ns}/serviceaccounts/default`)).status === 200);
  for (const pod of SCOPE_PODS) expect((await call(server, 'POST', `${ns}/pods`, { body: pod })).status).toBe(201);
  for (const quota of SCOPED_QUOTAS) expect((await call(server, 'POST', `${ns}/resourcequotas?fieldManager=kubectl-create`, { body: { apiVersion: 'v1', kind: 'ResourceQuota', ...quota } })).status).toBe(201);
  const filled = async () => ((await call(server, 'GET', `${ns}/resourcequotas`)).body.items as Array<{ status: { used?: object } }>).every((q) => q.status.used);
  await waitFor('every quota counted', filled);
  const burst = (await call(server, 'GET', `${ns}/pods/burst`)).body;
  expect((await call(server, 'PUT', `${ns}/pods/burst/status`, { body: { ...burst, status: { ...burst.status, phase: 'Succeeded' } } })).status).toBe(200);
  // Replenishment: the finished pod leaves `pods` and its compute resources (not count/pods) of not-best-effort.
  await waitFor('the finished pod counted away', async () => (await call(server, 'GET', `${ns}/resourcequotas/not-best-effort`)).body.status.used.pods === '1');
  await new Promise((r) => setTimeout(r, 300));
  return summary((await call(server, 'GET', `${ns}/resourcequotas`)).body.items);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const summary = (items: any[]): string[] => items.map((q) => `${q.metadata.name} ${JSON.stringify(q.status)} ${managersOf({ type: '', object: q }).join(',')}`);

describe('scopes and replenishment', () => {
  it('scoped quotas count the pods in scope; a pod finished is counted away by the controller (as quota-scopes.http)', async () => {
    const sim = await startCluster();
    try {
      const real = summary(fixture('quota-scopes').body.items);
      expect(await scopedRun(sim, 'quota-scopes')).toEqual(real);
      if (process.env.FURNISH_TEST_KUBECONFIG) {
        const cluster = await useTestCluster();
        const namespace = `quota-scopes-${Date.now().toString(36)}`;
        try {
          expect(await scopedRun(cluster, namespace)).toEqual(real);
        } finally {
          await call(cluster, 'DELETE', `/api/v1/namespaces/${namespace}`);
        }
      }
    } finally {
      await sim.stop();
    }
  }, 60_000);
});

describe('resourceQuotaController: false', () => {
  it('is --no-resource-quota-controller on the command line', () => {
    expect(parseArgs(['--no-resource-quota-controller'])).toEqual({ resourceQuotaController: false });
  });

  it('leaves a quota as written: no status write, no MODIFIED event', async () => {
    const cluster = await startCluster({ resourceQuotaController: false });
    try {
      await call(cluster, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'quiet' } } });
      const stream = watch(cluster, '/api/v1/namespaces/quiet/resourcequotas?watch=true');
      expect(await stream.status).toBe(200);
      expect((await call(cluster, 'POST', '/api/v1/namespaces/quiet/resourcequotas', { body: QUOTA })).status).toBe(201);
      await stream.waitFor(1);
      await new Promise((r) => setTimeout(r, 200));
      stream.close();
      expect(stream.events.map((e) => e.type)).toEqual(['ADDED']);
      expect((await call(cluster, 'GET', '/api/v1/namespaces/quiet/resourcequotas/compute')).body.status).toEqual({});
    } finally {
      await cluster.stop();
    }
  });
});
