// The organization quota against a real API server's optimistic concurrency (kube-sim, or the
// cluster FURNISH_TEST_KUBECONFIG names): validate-namespace's decisions, with the Organization
// read fresh and the slot reserved by a resourceVersion-checked status update, for 50 concurrent
// creates against a quota of 10; the namespaces admitted are then created, counted by
// reconcile-organization, deleted, and the quota is free again.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { KEY } from '../../shared/keys.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { createKubeHttp, type KubeCall, type KubeHttp } from '../../shared/kube/http.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { cachedListPath, reconcileOrganization, reconcileOrganizations } from '../../shared/org/reconcile.ts';
import { clusterOrganizations, ORGANIZATIONS_PATH } from '../../shared/org/source.ts';
import type { Organization } from '../../shared/org/types.ts';
import { newestRevision } from '../../shared/kube/revisions.ts';
import type { WebhookDeps } from '../../shared/webhooks/deps.ts';
import { validateNamespace } from '../../shared/webhooks/handlers/validate-namespace.ts';
import { mutateLNamespace } from '../../shared/webhooks/handlers/mutate-lnamespace.ts';
import { validateOrganizationHandler } from '../../shared/webhooks/handlers/validate-organization.ts';
import { clusterNamespaces } from '../../shared/webhooks/templates.ts';
import type { AdmissionRequest } from '../../shared/admission/types.ts';
import { organizationReview } from '../support/organizations.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { testDeps } from '../support/fixtures.ts';
import { namespaceRequest, organization } from '../support/organizations.ts';
import { clientFor, waitFor } from './helpers.ts';

const root = join(import.meta.dirname, '..', '..');
const suffix = Date.now().toString(36).slice(-5);
const ORG = `quota-${suffix}`;
const alice = { username: 'alice', groups: ['system:authenticated'] };
const LNAMESPACES = '/apis/furnish.dev/v1alpha1/lnamespaces';
const RECONCILER = { username: 'system:serviceaccount:furnish-system:furnish-reconciler', groups: ['system:serviceaccounts', 'system:serviceaccounts:furnish-system', 'system:authenticated'] };
const lnsCreated: string[] = [];

let cluster: TestCluster;
let admin: KubeClient;
let deps: WebhookDeps;
const created: string[] = [];

async function installCrd(): Promise<void> {
  for (const file of ['organizations.yaml', 'lnamespaces.yaml']) {
    const crd = parse(readFileSync(join(root, 'infra', 'crds', file), 'utf8')) as KubeObject;
    const r = await admin.call({ method: 'PATCH', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`, query: { fieldManager: 'test', force: true }, contentType: 'application/apply-patch+yaml', body: crd });
    if (!r.ok) throw new Error(`install CRD: ${r.status} ${r.error}`);
  }
  await waitFor('organizations to be served', async () => (await admin.call({ method: 'GET', path: ORGANIZATIONS_PATH })).ok);
  await waitFor('lnamespaces to be served', async () => (await admin.call({ method: 'GET', path: LNAMESPACES })).ok);
}

async function organizationStatus(): Promise<Organization['status']> {
  const r = await admin.call<Organization>({ method: 'GET', path: `${ORGANIZATIONS_PATH}/${ORG}` });
  return r.data?.status;
}

/** The newest namespace revision written: what the watch delivers the last event at. */
let newest = '';
const noteRevision = (obj: KubeObject | undefined) => {
  newest = newestRevision([newest, obj?.metadata.resourceVersion]) ?? newest;
};

/** 50 creates at once: each is judged by validate-namespace and, when admitted, created as kube-apiserver would. */
async function burst(round: number): Promise<{ admitted: string[]; denials: string[] }> {
  const names = Array.from({ length: 50 }, (_, i) => `q${round}-${i}-${suffix}`);
  const answers = await Promise.all(names.map(async (name) => {
    const response = await validateNamespace(namespaceRequest({ user: alice, name, labels: { [KEY.organization]: ORG } }), deps);
    if (!response.allowed) return { name, denial: response.status?.message ?? '' };
    created.push(name);
    const r = await admin.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.organization]: ORG } } } });
    if (!r.ok) throw new Error(`create ${name}: ${r.status} ${r.error}`);
    noteRevision(r.data);
    return { name };
  }));
  return { admitted: answers.filter((a) => !('denial' in a)).map((a) => a.name), denials: answers.flatMap((a) => ('denial' in a ? [a.denial!] : [])) };
}

beforeAll(async () => {
  cluster = await useTestCluster();
  admin = await clientFor(cluster.kubeconfigPath, cluster.isSimulated ? cluster.users.admin!.context : undefined);
  await installCrd();
  const r = await admin.call({ method: 'POST', path: ORGANIZATIONS_PATH, body: organization(ORG, [{ kind: 'User', name: 'alice' }], { quota: 10 }) });
  if (!r.ok) throw new Error(`create organization: ${r.status} ${r.error}`);
  const http = createKubeHttp({ server: cluster.server, caPem: cluster.caPem, token: cluster.users.admin!.token, timeoutMs: 10_000 });
  const base = testDeps();
  deps = { ...base, settings: { ...base.settings, organizations: { enabled: true } }, organizations: clusterOrganizations(http), namespaces: clusterNamespaces(http) };
}, 60_000);

afterAll(async () => {
  if (admin && !cluster.isSimulated) {
    for (const n of created) await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${n}` });
    for (const n of lnsCreated) await admin.call({ method: 'DELETE', path: `${LNAMESPACES}/${n}` });
    for (const o of [ORG, SHOP_ORG, OTHER_ORG]) await admin.call({ method: 'DELETE', path: `${ORGANIZATIONS_PATH}/${o}` });
  }
  admin?.close();
  await cluster?.stop();
});

describe('organization quota under concurrency', () => {
  it('50 concurrent creates against a quota of 10 admit exactly 10; after 10 deletes, 10 more', async () => {
    const first = await burst(1);
    expect(first.admitted).toHaveLength(10);
    expect(new Set(first.denials)).toEqual(new Set([`organization "${ORG}" has 10 of 10 namespaces`]));
    expect((await organizationStatus())?.reservations).toHaveLength(10);

    // The reconciler counts the created namespaces and releases their reservations: for a
    // namespace event (the last create's, at its revision), the Organization's read, its labelled
    // namespace list from the watch cache at least that fresh, the status write.
    const direct = createKubeHttp({ server: cluster.server, caPem: cluster.caPem, token: cluster.users.admin!.token, timeoutMs: 10_000 });
    const calls: string[] = [];
    const http: KubeHttp = <T,>(c: KubeCall) => (calls.push(`${c.method} ${c.path}`), direct<T>(c));
    await reconcileOrganization(clusterOrganizations(http), http, ORG, Date.now, { resourceVersion: newest });
    expect(calls).toEqual([`GET ${ORGANIZATIONS_PATH}/${ORG}`, `GET ${cachedListPath(`${KEY.organization}=${ORG}`, newest)}`, `PUT ${ORGANIZATIONS_PATH}/${ORG}/status`]);
    expect(await organizationStatus()).toMatchObject({ namespaces: 10, reservations: [], countedResourceVersion: newest });
    expect((await burst(2)).admitted).toHaveLength(0);

    // Deleted namespaces stop counting at once, terminating or gone: the list at the last delete's revision shows it.
    for (const name of first.admitted) {
      const r = await admin.call<KubeObject>({ method: 'DELETE', path: `/api/v1/namespaces/${name}` });
      expect(r.ok).toBe(true);
      noteRevision(r.data);
    }
    calls.length = 0;
    await reconcileOrganization(clusterOrganizations(http), http, ORG, Date.now, { resourceVersion: newest });
    expect(calls[1]).toContain(`&resourceVersion=${newest}&resourceVersionMatch=NotOlderThan`);
    expect(await organizationStatus()).toMatchObject({ namespaces: 0, reservations: [] });

    const third = await burst(3);
    expect(third.admitted).toHaveLength(10);
    // A resync trues up every Organization (one Organization list, one namespace list).
    await reconcileOrganizations(clusterOrganizations(http), http);
    expect(await organizationStatus()).toMatchObject({ namespaces: 10, reservations: [] });

    // A floor the server never reaches (a status written by hand, restored from another cluster):
    // one true-up waits for the cache's 504, lists from etcd and replaces it; the next reads the cache.
    const org = (await admin.call<Organization>({ method: 'GET', path: `${ORGANIZATIONS_PATH}/${ORG}` })).data!;
    const poisoned = await admin.call({ method: 'PUT', path: `${ORGANIZATIONS_PATH}/${ORG}/status`, body: { ...org, status: { ...org.status, countedResourceVersion: '99999999999' } } });
    expect(poisoned.ok).toBe(true);
    calls.length = 0;
    await reconcileOrganization(clusterOrganizations(http), http, ORG, Date.now, { resourceVersion: newest });
    expect(calls).toEqual([`GET ${ORGANIZATIONS_PATH}/${ORG}`, `GET ${cachedListPath(`${KEY.organization}=${ORG}`, '99999999999')}`, `GET /api/v1/namespaces?labelSelector=${encodeURIComponent(`${KEY.organization}=${ORG}`)}&limit=500`, `PUT ${ORGANIZATIONS_PATH}/${ORG}/status`]);
    const floor = (await organizationStatus())?.countedResourceVersion;
    expect(BigInt(floor ?? '0')).toBeGreaterThan(0n);
    expect(BigInt(floor!)).toBeLessThanOrEqual(BigInt(newest));
    calls.length = 0;
    await reconcileOrganization(clusterOrganizations(http), http, ORG, Date.now, { resourceVersion: newest });
    expect(calls).toEqual([`GET ${ORGANIZATIONS_PATH}/${ORG}`, `GET ${cachedListPath(`${KEY.organization}=${ORG}`, newest)}`]);
  }, 120_000);
});

// Issue 25: LNamespaces take real slots and move their namespaces only as judged transfers; the
// reconciler (Furnish's own identity, not privileged) then writes what was judged; an
// Organization with namespaces is not deleted. Handlers as deployed, reads through the API server.
const SHOP_ORG = `shop-${suffix}`;
const OTHER_ORG = `other-${suffix}`;

let lnsUid = 0;
function lnsRequest(operation: 'CREATE' | 'UPDATE', object: KubeObject, old?: KubeObject, user = alice): AdmissionRequest {
  return {
    uid: `lns-${suffix}-${++lnsUid}`, operation, name: object.metadata.name,
    kind: { group: 'furnish.dev', version: 'v1alpha1', kind: 'LNamespace' }, resource: { group: 'furnish.dev', version: 'v1alpha1', resource: 'lnamespaces' },
    userInfo: user, object, ...(old ? { oldObject: old } : {}),
  } as AdmissionRequest;
}
const lnsObject = (name: string, organization: string): KubeObject => ({ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', metadata: { name, labels: { [KEY.organization]: organization }, annotations: { [KEY.creator]: 'alice' } }, spec: {} });

/** The reconciler's write of an LNamespace's namespace, as validate-namespace sees it. */
function reconcilerWrite(lns: KubeObject, organization: string, old?: string): AdmissionRequest {
  const name = lns.metadata.name!;
  const request = namespaceRequest({ operation: old ? 'UPDATE' : 'CREATE', user: RECONCILER, name, labels: { [KEY.organization]: organization }, annotations: { [KEY.creator]: 'alice', 'furnish.dev/requester': 'alice' }, ...(old ? { old: { labels: { [KEY.organization]: old }, annotations: { 'furnish.dev/requester': 'alice' } } } : {}) });
  request.object!.metadata.ownerReferences = [{ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', name, uid: lns.metadata.uid, controller: true }];
  return request;
}

async function reservationsOf(org: string): Promise<number> {
  return ((await admin.call<Organization>({ method: 'GET', path: `${ORGANIZATIONS_PATH}/${org}` })).data?.status?.reservations ?? []).length;
}

describe('LNamespaces and the organization quota, as deployed (issue 25)', () => {
  beforeAll(async () => {
    for (const [name, members] of [[SHOP_ORG, [{ kind: 'User', name: 'alice' }, { kind: 'User', name: 'carol' }]], [OTHER_ORG, [{ kind: 'User', name: 'alice' }]]] as const) {
      const r = await admin.call({ method: 'POST', path: ORGANIZATIONS_PATH, body: organization(name, [...members], { quota: 3 }) });
      if (!r.ok) throw new Error(`create organization ${name}: ${r.status} ${r.error}`);
    }
  });

  it('finding 3: 10 concurrent LNamespace creates against 3 free slots admit exactly 3; the reconciler\'s namespace creates find their slots held', async () => {
    const objects = Array.from({ length: 10 }, (_, i) => lnsObject(`lns${i}-${suffix}`, SHOP_ORG));
    const answers = await Promise.all(objects.map((o) => mutateLNamespace(lnsRequest('CREATE', o), deps)));
    const admitted = objects.filter((_, i) => answers[i]!.allowed);
    expect(admitted).toHaveLength(3);
    expect(new Set(answers.filter((a) => !a.allowed).map((a) => a.status?.message?.replace(/LNamespace "[^"]+"/, 'LNamespace')))).toEqual(new Set([`the namespace of LNamespace: organization "${SHOP_ORG}" has 3 of 3 namespaces`]));
    expect(await reservationsOf(SHOP_ORG)).toBe(3);
    for (const o of admitted) {
      const r = await admin.call<KubeObject>({ method: 'POST', path: LNAMESPACES, body: o });
      expect(r.ok).toBe(true);
      lnsCreated.push(o.metadata.name!);
      Object.assign(o.metadata, { uid: r.data!.metadata.uid });
      // Furnish's own identity, not privileged: the creator's membership, the LNamespace's slot.
      expect((await validateNamespace(reconcilerWrite(o, SHOP_ORG), deps)).allowed).toBe(true);
    }
    expect(await reservationsOf(SHOP_ORG)).toBe(3);
  }, 60_000);

  it('finding 2: an LNamespace relabel is a transfer (membership of both, a slot); Furnish then moves the namespace only where the LNamespace says', async () => {
    const shop = (await admin.call<KubeObject>({ method: 'GET', path: `${LNAMESPACES}/${lnsCreated[0]}` })).data!;
    const name = shop.metadata.name!;
    const r = await admin.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.organization]: SHOP_ORG }, ownerReferences: [{ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', name, uid: shop.metadata.uid, controller: true }] } } });
    expect(r.ok).toBe(true);
    created.push(name);
    const relabelled = { ...shop, metadata: { ...shop.metadata, labels: { [KEY.organization]: OTHER_ORG } } };
    const carol = await mutateLNamespace(lnsRequest('UPDATE', relabelled, shop, { username: 'carol', groups: ['system:authenticated'] }), deps);
    expect(carol.status?.message).toContain(`user "carol" may not move namespace "${name}" into organization "${OTHER_ORG}": not a member`);
    // Before the LNamespace names the other organization, Furnish may not move its namespace there.
    expect((await validateNamespace(reconcilerWrite(shop, OTHER_ORG, SHOP_ORG), deps)).status?.message).toContain(`may not move namespace "${name}" into organization "${OTHER_ORG}": not a member`);
    expect((await mutateLNamespace(lnsRequest('UPDATE', relabelled, shop), deps)).allowed).toBe(true);
    expect(await reservationsOf(OTHER_ORG)).toBe(1);
    const patched = await admin.call({ method: 'PATCH', path: `${LNAMESPACES}/${name}`, contentType: 'application/merge-patch+json', body: { metadata: { labels: { [KEY.organization]: OTHER_ORG } } } });
    expect(patched.ok).toBe(true);
    expect((await validateNamespace(reconcilerWrite(shop, OTHER_ORG, SHOP_ORG), deps)).allowed).toBe(true);
    expect(await reservationsOf(OTHER_ORG)).toBe(1);
  }, 60_000);

  it('finding 14: an Organization with namespaces is not deleted; once they are gone (or terminating) it is', async () => {
    const deletion = (org: string) => ({ ...organizationReview({ metadata: { name: org } }).request, operation: 'DELETE', object: undefined, oldObject: { apiVersion: 'furnish.dev/v1alpha1', kind: 'Organization', metadata: { name: org } } }) as AdmissionRequest;
    const name = lnsCreated[0]!;
    // The move finding 2 admitted, made (as the reconciler would).
    const moved = await admin.call({ method: 'PATCH', path: `/api/v1/namespaces/${name}`, contentType: 'application/merge-patch+json', body: { metadata: { labels: { [KEY.organization]: OTHER_ORG } } } });
    expect(moved.ok).toBe(true);
    const refused = await validateOrganizationHandler(deletion(OTHER_ORG), deps);
    expect(refused.status?.message).toBe(`Organization "${OTHER_ORG}" may not be deleted: it still has 1 namespace (${name}); move each to another organization (kubectl label namespace <name> furnish.dev/organization=<other> --overwrite, or relabel its LNamespace) or delete it, then delete the Organization`);
    await admin.call({ method: 'PATCH', path: `/api/v1/namespaces/${name}`, contentType: 'application/merge-patch+json', body: { metadata: { labels: { [KEY.organization]: SHOP_ORG } } } });
    expect((await validateOrganizationHandler(deletion(OTHER_ORG), deps)).allowed).toBe(true);
  }, 60_000);
});
