// What an update through `<plural>/status` keeps of the metadata it sends, kind by kind, as
// kube-apiserver's status strategies do (operations/update.ts STATUS_STRATEGY_RESETS): a built-in
// kind's strategy sets back the spec and a few metadata fields (a ResourceQuota's, a Namespace's
// and a CustomResourceDefinition's none, a Deployment's labels, a Pod's ownerReferences, a
// ValidatingAdmissionPolicy's all four) and stores the rest of the metadata sent; a custom
// resource's keeps only the status. The same requests against kube-apiserver 1.32.0-rc.0 kept
// exactly the same fields.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCluster, type SimCluster } from '../../support/kube-sim/index.ts';
import { STATUS_STRATEGY_RESETS, statusStrategyResets } from '../../support/kube-sim/operations/update.ts';
import { builtinTypes } from '../../support/kube-sim/resources.ts';
import { call } from '../../kube-sim/helpers.ts';

const NS = 'status-writes';
const FIELDS = ['labels', 'annotations', 'ownerReferences', 'finalizers'] as const;
type Field = typeof FIELDS[number];

/** The metadata each object is created with, and the metadata each status write sends instead. */
const BEFORE = { labels: { 'example.dev/was': 'here' }, annotations: { 'example.dev/was': 'here' } };
/** An owner that exists (its uid is set once created), so that the garbage collector leaves the owned objects alone. */
const OWNER = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'status-writes-owner', uid: '' };
const SENT = {
  labels: { 'example.dev/now': 'sent' },
  annotations: { 'example.dev/now': 'sent' },
  ownerReferences: [OWNER],
  finalizers: ['example.dev/hold'],
};
/** The same change as a merge patch of the metadata. */
const SENT_AS_MERGE_PATCH = {
  labels: { 'example.dev/was': null, 'example.dev/now': 'sent' },
  annotations: { 'example.dev/was': null, 'example.dev/now': 'sent' },
  ownerReferences: [OWNER],
  finalizers: ['example.dev/hold'],
};

interface Kind {
  path: string;
  /** The path of the object named `name` (default: `path/name`). */
  prefix?: string;
  body: (name: string) => Record<string, unknown>;
  /** A spec the status write also sends: always set back to the live one. */
  spec: Record<string, unknown>;
  /** The status the write sends (default: the one the object was created with). */
  status?: Record<string, unknown>;
  /** The metadata fields whose change the status write keeps. */
  kept: Field[];
}

const GADGETS_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'gadgets.status.example.dev' },
  spec: {
    group: 'status.example.dev', scope: 'Namespaced', names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', listKind: 'GadgetList' },
    versions: [{
      name: 'v1', served: true, storage: true, subresources: { status: {} },
      schema: { openAPIV3Schema: { type: 'object', properties: {
        spec: { type: 'object', properties: { size: { type: 'integer' } } },
        status: { type: 'object', properties: { ready: { type: 'boolean' } } },
      } } },
    }],
  },
};

const CRD = (name: string): Record<string, unknown> => ({
  ...GADGETS_CRD, metadata: { name: `${name}s.crd.example.dev`, ...BEFORE },
  spec: { ...GADGETS_CRD.spec, group: 'crd.example.dev', names: { kind: `Crd${name}`, plural: `${name}s`, singular: name, listKind: `Crd${name}List` } },
});

const KINDS: Record<string, Kind> = {
  ResourceQuota: {
    path: `/api/v1/namespaces/${NS}/resourcequotas`,
    body: (name) => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name, ...BEFORE }, spec: { hard: { pods: '1' } } }),
    spec: { hard: { pods: '9' } },
    status: { hard: { pods: '1' }, used: { pods: '0' } },
    kept: ['labels', 'annotations', 'ownerReferences', 'finalizers'],
  },
  Deployment: {
    path: `/apis/apps/v1/namespaces/${NS}/deployments`,
    body: (name) => ({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, ...BEFORE },
      spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
    }),
    spec: { replicas: 7 },
    status: { observedGeneration: 1, replicas: 1 },
    kept: ['annotations', 'ownerReferences', 'finalizers'],
  },
  Pod: {
    path: `/api/v1/namespaces/${NS}/pods`,
    body: (name) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, ...BEFORE }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }),
    spec: { activeDeadlineSeconds: 30 },
    status: { phase: 'Running' },
    kept: ['labels', 'annotations', 'finalizers'],
  },
  'Gadget (a custom resource)': {
    path: `/apis/status.example.dev/v1/namespaces/${NS}/gadgets`,
    body: (name) => ({ apiVersion: 'status.example.dev/v1', kind: 'Gadget', metadata: { name, ...BEFORE }, spec: { size: 1 } }),
    spec: { size: 2 },
    status: { ready: true },
    kept: [],
  },
  Namespace: {
    path: '/api/v1/namespaces', prefix: 'ns-',
    body: (name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...BEFORE } }),
    spec: { finalizers: ['example.dev/never'] },
    status: { phase: 'Active', conditions: [{ type: 'Ready', status: 'True', reason: 'Checked', message: 'ok' }] },
    kept: ['labels', 'annotations', 'ownerReferences', 'finalizers'],
  },
  CustomResourceDefinition: {
    path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', prefix: 'crd',
    body: CRD,
    spec: { preserveUnknownFields: false, scope: 'Cluster' },
    kept: ['labels', 'annotations', 'ownerReferences', 'finalizers'],
  },
  ValidatingAdmissionPolicy: {
    path: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', prefix: 'vap-',
    body: (name) => ({
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name, ...BEFORE },
      spec: { matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] }, validations: [{ expression: 'true' }] },
    }),
    spec: { failurePolicy: 'Ignore' },
    status: { observedGeneration: 1 },
    kept: [],
  },
};

let cluster: SimCluster;

beforeAll(async () => {
  cluster = await startCluster({ resourceQuotaController: false });
  expect((await call(cluster, 'POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).toBe(201);
  const owner = await call(cluster, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: { metadata: { name: OWNER.name } } });
  expect(owner.status).toBe(201);
  OWNER.uid = owner.body.metadata.uid;
  expect((await call(cluster, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: GADGETS_CRD })).status).toBe(201);
});

afterAll(async () => {
  await cluster?.stop();
});

/** Which metadata fields hold what the write sent (and which still hold what they held before: nothing else may happen). */
function keptFields(metadata: Record<string, unknown>): Field[] {
  // A namespace's name label is the server's own.
  const { 'kubernetes.io/metadata.name': _name, ...labels } = (metadata.labels ?? {}) as Record<string, string>;
  metadata = { ...metadata, labels };
  const kept = FIELDS.filter((f) => JSON.stringify(metadata[f]) === JSON.stringify(SENT[f]));
  const reset = FIELDS.filter((f) => JSON.stringify(metadata[f]) === JSON.stringify(BEFORE[f as keyof typeof BEFORE]));
  expect([...kept, ...reset].sort()).toEqual([...FIELDS].sort());
  return kept;
}

describe.each(Object.entries(KINDS))('%s: a status write', (_name, kind) => {
  let n = 0;
  async function created(): Promise<{ url: string; object: Record<string, any> }> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const name = `${kind.prefix ?? ''}s${++n}`;
    const reply = await call(cluster, 'POST', kind.path, { body: kind.body(name) });
    expect(reply.status).toBe(201);
    const url = `${kind.path}/${reply.body.metadata.name}`;
    return { url, object: (await call(cluster, 'GET', url)).body };
  }

  async function expectStatusWritten(url: string, before: Record<string, any>): Promise<Field[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const stored = (await call(cluster, 'GET', url)).body;
    expect(stored.status).toMatchObject(kind.status ?? before.status);
    expect(stored.spec).toEqual(before.spec);
    expect(stored.metadata.generation).toBe(before.metadata.generation);
    return keptFields(stored.metadata);
  }

  it(`(PUT) keeps ${kind.kept.join(', ') || 'no metadata change'}`, async () => {
    const { url, object } = await created();
    const body = { ...object, metadata: { ...object.metadata, ...SENT }, spec: { ...object.spec, ...kind.spec }, status: kind.status ?? object.status };
    const reply = await call(cluster, 'PUT', `${url}/status`, { body });
    expect(reply.status).toBe(200);
    expect(keptFields(reply.body.metadata)).toEqual(kind.kept);
    expect(await expectStatusWritten(url, object)).toEqual(kind.kept);
  });

  it('(merge patch) keeps the same', async () => {
    const { url, object } = await created();
    const patch = { metadata: SENT_AS_MERGE_PATCH, spec: kind.spec, status: kind.status ?? object.status };
    const reply = await call(cluster, 'PATCH', `${url}/status`, { contentType: 'application/merge-patch+json', body: patch });
    expect(reply.status).toBe(200);
    expect(await expectStatusWritten(url, object)).toEqual(kind.kept);
  });
});

describe('the status strategy table', () => {
  it('has one entry per built-in kind served with a status subresource, and none for custom resources', () => {
    const withStatus = builtinTypes().filter((t) => t.statusSubresource).map((t) => t.kind).sort();
    expect(Object.keys(STATUS_STRATEGY_RESETS).sort()).toEqual(withStatus);
    const gadget = cluster.sim.registry.get('status.example.dev', 'v1', 'gadgets')!;
    expect(statusStrategyResets(gadget)).toBeUndefined();
  });
});
