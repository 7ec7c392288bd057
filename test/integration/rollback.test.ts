// First population without dry runs, on kube-sim or the real cluster FURNISH_TEST_KUBECONFIG names:
// a new namespace's templates create objects seen to be absent, so they are written at once (no
// dryRun=All request), and a template one of whose objects the server refuses is rolled back
// (what it created deleted again by uid): nothing of it remains, the namespace is failed with the
// refusal. The namespace reconciler is called directly, one reconcile at a time (the relay may
// deliver a new namespace twice at once: test/integration/population.test.ts covers that path), and
// every request it sends is seen at its client seam; kube-sim's request log is a second witness.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KEY } from '../../shared/keys.ts';
import { connect, createKubeClient, type KubeClient, type KubeRequest } from '../../shared/kube/client.ts';
import { ResourceResolver } from '../../shared/kube/resources.ts';
import { silentLogger } from '../../shared/log.ts';
import { reconcileNamespace, type NamespaceDeps } from '../../shared/reconcile/namespace.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import { ensureCrd } from '../../scripts/start/cluster.ts';
import { componentIdentities, useTestCluster, type TestCluster } from '../support/cluster.ts';
import type { Identities } from '../../scripts/start/identities.ts';
import { applyTemplate, clientFor, CONFIGMAP, createNamespace, examples, get, list, NETPOL, ROLEBINDING, tearDown, type Created } from './helpers.ts';

let cluster: TestCluster;
let admin: KubeClient;
let deps: NamespaceDeps;
let identities: Identities | undefined;
const created: Created = { namespaces: [], templates: [] };
const run = `${process.pid % 1000}-${Date.now().toString(36).slice(-4)}`;
/** Every request the reconciler sent (retries included). */
const sent: KubeRequest[] = [];
const inNamespace = (ns: string) => (r: KubeRequest) => r.path.includes(`/namespaces/${ns}/`);
const isDryRun = (r: KubeRequest) => r.query?.dryRun === 'All';

async function namespace(name: string, labels: Record<string, string> = {}): Promise<void> {
  created.namespaces.push(name);
  await createNamespace(admin, name, labels);
}

async function template(t: NamespaceTemplate): Promise<void> {
  created.templates.push(t.metadata.name!);
  await applyTemplate(admin, t);
}

beforeAll(async () => {
  cluster = await useTestCluster();
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  admin = await clientFor(cluster.kubeconfigPath, context);
  await ensureCrd(admin, silentLogger);
  // The reconciler as deployed: furnish-reconciler with infra/'s RBAC.
  identities = await componentIdentities(cluster);
  const kube = createKubeClient(await connect(identities.reconciler.credentials), { faults: (req) => void sent.push(req) });
  deps = { kube, resolver: new ResourceResolver(kube), log: silentLogger };
  for (const t of examples()) await template(t);
}, 60_000);

afterAll(async () => {
  deps?.kube.close();
  identities?.remove();
  await tearDown({ cluster, admin, created });
});

describe('a new namespace is populated without dry runs, all or nothing', () => {
  it('good templates: every object written once, no dryRun request at all', async () => {
    const ns = `fresh-${run}`;
    await namespace(ns, { [KEY.organization]: 'acme' });
    const r = await reconcileNamespace(deps, ns);
    expect(r.result).toBe('converged');
    expect(await get(admin, CONFIGMAP(ns, 'team-settings'))).toBeDefined();
    const mine = sent.filter(inNamespace(ns));
    const applies = mine.filter((q) => q.method === 'PATCH' && q.contentType === 'application/apply-patch+yaml' && !q.path.endsWith('/furnish-applyset'));
    expect(applies.length).toBe(r.outcome!.applied);
    expect(applies.length).toBeGreaterThanOrEqual(5);
    expect(mine.filter(isDryRun)).toEqual([]);
    if (cluster.log) expect(cluster.log.entries.filter((e) => e.namespace === ns && e.dryRun)).toEqual([]);
  });

  it('a template whose RoleBinding the server refuses leaves nothing of itself: its ConfigMap is deleted again by uid; the namespace is failed with the reason', async () => {
    const label = `half-${run}`;
    const name = `rollback-${run}`;
    await template({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: { namespaces: { labelSelector: { matchLabels: { rollback: label } } }, templates: [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'half' }, data: { a: '1' } },
      // An empty subject name: rendered and validated as given (no token), refused by the API server (422).
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'half' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: '' }] },
    ] } });
    const ns = `broken-${run}`;
    await namespace(ns, { rollback: label });
    const r = await reconcileNamespace(deps, ns);
    expect(r.result).toBe('failed');
    const failed = await get(admin, `/api/v1/namespaces/${ns}`);
    expect(failed?.metadata.labels?.[KEY.phase]).toBe('failed');
    expect(failed?.metadata.annotations?.[KEY.failure]).toMatch(new RegExp(`^template ${name}: rbac.authorization.k8s.io/RoleBinding/${ns}/half: Invalid \\(HTTP 422\\): .*subjects\\[0\\]\\.name: Required value`));
    expect(await get(admin, CONFIGMAP(ns, 'half'))).toBeUndefined();
    expect(await get(admin, ROLEBINDING(ns, 'half'))).toBeUndefined();
    expect((await list(admin, `/api/v1/namespaces/${ns}/events`)).filter((e) => e.reason === 'PopulateFailed')).toHaveLength(1);
    // The other templates of the namespace are in place.
    expect(await get(admin, NETPOL(ns, 'default-deny'))).toBeDefined();
    // Written at once, no dry run; the ConfigMap's apply created it and its delete named its uid.
    const mine = sent.filter(inNamespace(ns));
    expect(mine.filter(isDryRun)).toEqual([]);
    expect(mine.filter((q) => q.path.endsWith('/configmaps/half')).map((q) => q.method)).toEqual(['PATCH', 'DELETE']);
    const del = mine.find((q) => q.method === 'DELETE')!;
    expect((del.body as { preconditions?: { uid?: string } }).preconditions?.uid).toMatch(/^[0-9a-f-]{36}$/);
    if (cluster.log) {
      expect(cluster.log.entries.filter((e) => e.namespace === ns && e.name === 'half' && !e.dryRun && e.verb !== 'get').map((e) => `${e.verb} ${e.resource} ${e.status}`).sort())
        .toEqual(['delete configmaps 200', 'patch configmaps 201', 'patch rolebindings 422']);
    }

    // Retried while it still fails (a resync), the template is dry-run first: nothing is written.
    sent.length = 0;
    expect((await reconcileNamespace(deps, ns)).writes).toBe(0);
    expect(sent.filter(inNamespace(ns)).filter(isDryRun).map((q) => q.path.split('/').slice(-2).join('/')).sort()).toEqual(['configmaps/half', 'rolebindings/half']);
    expect(await get(admin, CONFIGMAP(ns, 'half'))).toBeUndefined();
  });
});
