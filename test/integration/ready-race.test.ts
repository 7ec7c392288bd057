// A template change racing the reconcile of a ready namespace that the template is just starting
// to select (a label change), on kube-sim or the real cluster FURNISH_TEST_KUBECONFIG names. The
// reconcile lists the templates (v1) and is held at its first write, the ApplySet parent naming
// the template for the first time; the template changes and its fan-out reads the parents before
// that write. The reconcile lists the templates once more after its writes, sees the change and
// fails its delivery; the redelivery plans from the new version (shared/reconcile/recheck.ts).
// And a resync's reconcile that listed the templates before a change and reads the objects after
// the fan-out's batch wrote them lists them again (heldSnapshotOutdated on a fresh list). Each
// interleaving is forced by holding one request at the reconciler's client seam (never answering
// in the server's place); test/unit/reconcile/fanout-race.test.ts has the same on the in-memory
// API.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KEY } from '../../shared/keys.ts';
import { connect, createKubeClient, type KubeClient } from '../../shared/kube/client.ts';
import { ResourceResolver } from '../../shared/kube/resources.ts';
import { silentLogger } from '../../shared/log.ts';
import { reconcileNamespace, type NamespaceDeps } from '../../shared/reconcile/namespace.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import { ensureCrd } from '../../scripts/start/cluster.ts';
import { componentIdentities, useTestCluster, type TestCluster } from '../support/cluster.ts';
import type { Identities } from '../../scripts/start/identities.ts';
import { answer, delivered, fanOut, gate, holdingClient, namedBy, type Sent } from '../support/fanout-race.ts';
import { applyTemplate, clientFor, CONFIGMAP, createNamespace, deleteTemplate, get, patchNamespace, tearDown, type Created } from './helpers.ts';

let cluster: TestCluster;
let admin: KubeClient;
let deps: NamespaceDeps;
let holding: ReturnType<typeof holdingClient>;
let identities: Identities | undefined;
const created: Created = { namespaces: [], templates: [] };
const run = `${process.pid % 1000}-${Date.now().toString(36).slice(-4)}`;

/** Template `name`: one ConfigMap, selecting namespaces labelled race=<team>-<run>. */
const tpl = (name: string, team: string, a = '1'): NamespaceTemplate => ({
  apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name },
  spec: { namespaces: { labelSelector: { matchLabels: { race: `${team}-${run}` } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'race-cm' }, data: { a } }] },
});

beforeAll(async () => {
  cluster = await useTestCluster();
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  admin = await clientFor(cluster.kubeconfigPath, context);
  await ensureCrd(admin, silentLogger);
  // The reconciler as deployed: furnish-reconciler with infra/'s RBAC.
  identities = await componentIdentities(cluster);
  holding = holdingClient(createKubeClient(await connect(identities.reconciler.credentials)));
  deps = { kube: holding.kube, resolver: new ResourceResolver(holding.kube), log: silentLogger };
}, 60_000);

afterAll(async () => {
  deps?.kube.close();
  identities?.remove();
  await tearDown({ cluster, admin, created });
});

/** Only what concerns `ns` of a fan-out's messages (a shared cluster has other suites' namespaces): a batch cut down to it. */
const concerning = (sent: readonly Sent[], ns: string): Sent[] => sent.flatMap((s) => {
  if (!s.message.targets) return s.message.name === ns ? [s] : [];
  const targets = s.message.targets.filter((t) => t.n === ns);
  return targets.length > 0 ? [{ ...s, message: { ...s.message, targets } }] : [];
});

const changes: [string, (name: string) => Promise<unknown>, unknown][] = [
  ['stops selecting it', (name) => applyTemplate(admin, tpl(name, 'w')), undefined],
  ['is deleted', (name) => deleteTemplate(admin, name), undefined],
  ['changes its objects', (name) => applyTemplate(admin, tpl(name, 'x', '2')), { a: '2' }],
];

describe('a template change while a ready namespace is being selected by it', () => {
  it.each(changes)('a template that %s: the reconcile naming it for the first time is redelivered and plans from the new version', async (_what, change, want) => {
    const i = changes.findIndex(([w]) => w === _what);
    const ns = `ready-race-${i}-${run}`;
    const name = `ready-race-${i}-${run}`;
    created.templates.push(name);
    await applyTemplate(admin, tpl(name, 'x'));
    created.namespaces.push(ns);
    await createNamespace(admin, ns, { race: `z-${run}` });
    expect((await reconcileNamespace(deps, ns)).result).toBe('converged');
    expect((await get(admin, `/api/v1/namespaces/${ns}`))?.metadata.labels?.[KEY.phase]).toBe('ready');
    await patchNamespace(admin, ns, { metadata: { labels: { race: `x-${run}` } } });

    // The label change's reconcile lists the templates (v1 selects it) and is held at its first write, the parent.
    const first = gate((req) => req.method !== 'GET' && req.path.startsWith(`/api/v1/namespaces/${ns}/`), true);
    holding.set(first.hold);
    const reconcile = delivered(() => reconcileNamespace(deps, ns));
    await first.reached;
    await change(name);
    const mine = concerning(await fanOut(deps, name), ns);
    // The namespace is ready: never messaged alone; a template that still selects it batches it.
    expect(mine.filter(({ message }) => !message.targets)).toEqual([]);
    expect(namedBy(mine)).toEqual(want ? [ns] : []);
    for (const { message } of mine) await delivered(() => answer(deps, message));
    first.open();
    const deliveries = await reconcile;
    holding.set(undefined);

    expect((await get(admin, CONFIGMAP(ns, 'race-cm')))?.data).toEqual(want);
    expect((await get(admin, CONFIGMAP(ns, 'furnish-applyset')))?.metadata.annotations?.[KEY.appliedTemplates]).toBe(want ? name : '');
    expect(deliveries).toBe(2);
  }, 60_000);

  it('a resync\'s reconcile that listed the templates before a change and reads the objects after the fan-out\'s batch wrote them lists them again rather than put the older version back', async () => {
    const ns = `ready-resync-${run}`;
    const name = `ready-resync-${run}`;
    created.templates.push(name);
    await applyTemplate(admin, tpl(name, 'x'));
    created.namespaces.push(ns);
    await createNamespace(admin, ns, { race: `x-${run}` });
    expect((await reconcileNamespace(deps, ns)).result).toBe('converged');
    expect((await get(admin, CONFIGMAP(ns, 'race-cm')))?.data).toEqual({ a: '1' });

    // The resync's reconcile lists the templates (v1) and is held at its list of the ConfigMaps.
    const objects = gate((req) => req.method === 'GET' && req.path === `/api/v1/namespaces/${ns}/configmaps`, true);
    holding.set(objects.hold);
    const resync = reconcileNamespace(deps, ns);
    await objects.reached;
    await applyTemplate(admin, tpl(name, 'x', '2'));
    const mine = concerning(await fanOut(deps, name), ns);
    expect(namedBy(mine)).toEqual([ns]);
    for (const { message } of mine) await delivered(() => answer(deps, message));
    expect((await get(admin, CONFIGMAP(ns, 'race-cm')))?.data).toEqual({ a: '2' });
    objects.open();
    const r = await resync;
    holding.set(undefined);
    expect(r.result).toBe('converged');
    expect((await get(admin, CONFIGMAP(ns, 'race-cm')))?.data).toEqual({ a: '2' });
    expect(r.writes).toBe(0);
  }, 60_000);
});
