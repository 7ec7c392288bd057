// Fidelity the quota relies on, on kube-sim and on a real API server alike: a status update
// with a stale resourceVersion is refused with 409 Conflict (the same Status), a current one
// succeeds, and a status update leaves spec alone (but, for a namespace, not its labels).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { ORGANIZATIONS_PATH } from '../../shared/org/source.ts';
import type { Organization } from '../../shared/org/types.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { organization } from '../support/organizations.ts';
import { clientFor, waitFor } from './helpers.ts';

const NAME = `rv-${Date.now().toString(36).slice(-5)}`;
let cluster: TestCluster;
let admin: KubeClient;

beforeAll(async () => {
  cluster = await useTestCluster();
  admin = await clientFor(cluster.kubeconfigPath, cluster.isSimulated ? cluster.users.admin!.context : undefined);
  const crd = parse(readFileSync(join(import.meta.dirname, '..', '..', 'infra', 'crds', 'organizations.yaml'), 'utf8')) as KubeObject;
  await admin.call({ method: 'PATCH', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`, query: { fieldManager: 'test', force: true }, contentType: 'application/apply-patch+yaml', body: crd });
  await waitFor('organizations to be served', async () => (await admin.call({ method: 'GET', path: ORGANIZATIONS_PATH })).ok);
}, 60_000);

afterAll(async () => {
  await admin?.call({ method: 'DELETE', path: `${ORGANIZATIONS_PATH}/${NAME}` });
  admin?.close();
  await cluster?.stop();
});

describe('status updates with a resourceVersion precondition', () => {
  it('answer 409 Conflict when stale, 200 when current, and never change spec', async () => {
    const created = await admin.call<Organization>({ method: 'POST', path: ORGANIZATIONS_PATH, body: organization(NAME, [], { quota: 3 }) });
    expect(created.status).toBe(201);
    const first = created.data!;
    const put = (rv: string | undefined, namespaces: number, quota = 3) => admin.call<Organization & { reason?: string; message?: string; code?: number }>({
      method: 'PUT', path: `${ORGANIZATIONS_PATH}/${NAME}/status`, retry: { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 },
      body: { ...first, metadata: { ...first.metadata, resourceVersion: rv }, spec: { namespaceQuota: quota }, status: { namespaces } },
    });
    const ok = await put(first.metadata.resourceVersion, 1, 99);
    expect(ok.status).toBe(200);
    expect(ok.data).toMatchObject({ spec: { namespaceQuota: 3 }, status: { namespaces: 1 } });
    const stale = await put(first.metadata.resourceVersion, 2);
    expect(stale.status).toBe(409);
    expect(stale.data).toMatchObject({
      kind: 'Status', status: 'Failure', reason: 'Conflict', code: 409,
      message: `Operation cannot be fulfilled on organizations.furnish.dev "${NAME}": the object has been modified; please apply your changes to the latest version and try again`,
      details: { name: NAME, group: 'furnish.dev', kind: 'organizations' },
    });
  });

  it('a namespace\'s labels change through namespaces/status (the namespace status strategy keeps only spec)', async () => {
    const ns = `${NAME}-ns`;
    const created = await admin.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    try {
      const live = created.data!;
      const r = await admin.call<KubeObject>({ method: 'PUT', path: `/api/v1/namespaces/${ns}/status`, body: { ...live, metadata: { ...live.metadata, labels: { ...live.metadata.labels, via: 'status' } }, spec: { finalizers: [] } } });
      expect(r.status).toBe(200);
      expect(r.data?.metadata.labels).toMatchObject({ via: 'status' });
      expect(r.data?.spec).toEqual({ finalizers: ['kubernetes'] });
    } finally {
      await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` });
    }
  });
});
