// A template change racing a namespace reconcile, on kube-sim or the real cluster
// FURNISH_TEST_KUBECONFIG names, with the relay watching as deployed (furnish-relay) and the
// reconcilers answering its messages as furnish-reconciler, each with infra/'s RBAC. The messages go
// through the in-process bus, which delivers one namespace's messages one at a time (its ordering
// key, as Pub/Sub does). Each interleaving is forced by holding one of the reconciler's requests at
// its client seam (never answering in the server's place); test/unit/reconcile/fanout-race.test.ts
// has the same on the in-memory API, each case shown to fail without its mechanism.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createRelay, type Relay } from '../../functions/watch-relay/lib/relay.ts';
import type { ReconcileMessage } from '../../shared/bus/envelope.ts';
import { KEY } from '../../shared/keys.ts';
import { connect, createKubeClient, type KubeClient } from '../../shared/kube/client.ts';
import { ResourceResolver } from '../../shared/kube/resources.ts';
import { silentLogger } from '../../shared/log.ts';
import { type NamespaceDeps } from '../../shared/reconcile/namespace.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import { ensureCrd } from '../../scripts/start/cluster.ts';
import { componentIdentities, useTestCluster, type TestCluster } from '../support/cluster.ts';
import type { Identities } from '../../scripts/start/identities.ts';
import { answer, fanOut, gate, holdingClient, namespaceLane, NAMESPACES_TOPIC, templateLane, TEMPLATES_TOPIC, writeIn, type NamespaceLane } from '../support/fanout-race.ts';
import { applyTemplate, clientFor, CONFIGMAP, createNamespace, deleteTemplate, get, patchNamespace, tearDown, waitFor, waitReady, type Created } from './helpers.ts';

let cluster: TestCluster;
let admin: KubeClient;
let deps: NamespaceDeps;
let holding: ReturnType<typeof holdingClient>;
let identities: Identities | undefined;
let relayKube: KubeClient;
let relay: Relay;
let lane: NamespaceLane;
let templates: ReturnType<typeof templateLane>;
const created: Created = { namespaces: [], templates: [] };
const run = `${process.pid % 1000}-${Date.now().toString(36).slice(-4)}`;
/** This suite's namespaces and templates: the relay sees the whole cluster, the reconcilers answer only these. */
const mine = (m: ReconcileMessage): boolean => created.namespaces.includes(m.name) || created.templates.includes(m.name);

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
  identities = await componentIdentities(cluster);
  holding = holdingClient(createKubeClient(await connect(identities.reconciler.credentials)));
  deps = { kube: holding.kube, resolver: new ResourceResolver(holding.kube), log: silentLogger };
  lane = namespaceLane(deps, mine);
  templates = templateLane(deps, lane.bus, mine);
  relayKube = createKubeClient(await connect(identities.relay.credentials));
  relay = createRelay({ kube: relayKube, bus: lane.bus, config: { cluster: 'local', resyncSeconds: 0, watchTimeoutSeconds: 60, pageSize: 100, topics: { namespaces: NAMESPACES_TOPIC, templates: TEMPLATES_TOPIC } }, log: silentLogger, syncOnStart: false });
  await relay.start();
  await waitFor('the relay listed and watching', async () => relay.ready());
}, 60_000);

afterEach(() => holding?.set(undefined));

afterAll(async () => {
  await relay?.stop();
  relayKube?.close();
  deps?.kube.close();
  identities?.remove();
  await tearDown({ cluster, admin, created });
});

/** A template of this suite, applied: its name, and a wait for the fan-out the relay's message for that write asked for. */
async function apply(t: NamespaceTemplate): Promise<{ fannedOut: () => Promise<number> }> {
  const name = t.metadata.name!;
  if (!created.templates.includes(name)) created.templates.push(name);
  const rv = BigInt(await applyTemplate(admin, t));
  return { fannedOut: () => fannedOutAt(name, rv) };
}

/** The targets of the fan-out of `name` at or after revision `rv`. */
async function fannedOutAt(name: string, rv: bigint): Promise<number> {
  const done = await waitFor(`the fan-out of ${name} at ${rv}`, async () => templates.find(({ message, result }) => message.name === name && result.fannedOut && BigInt(message.resourceVersion ?? '0') >= rv));
  return done.result.targets;
}

/** Namespace `name` of this suite, created pending with `labels` (the relay's ADDED is its first reconcile). */
async function namespace(name: string, team: string): Promise<void> {
  created.namespaces.push(name);
  await createNamespace(admin, name, { race: `${team}-${run}` });
}

const data = async (ns: string): Promise<unknown> => (await get(admin, CONFIGMAP(ns, 'race-cm')))?.data;
const applied = async (ns: string): Promise<string | undefined> => (await get(admin, CONFIGMAP(ns, 'furnish-applyset')))?.metadata.annotations?.[KEY.appliedTemplates];
/** Deliveries of `ns`'s messages that failed (each redelivered): a reconcile that re-checked after its writes would fail one. */
const failedDeliveries = (ns: string): number => lane.answered.filter((a) => a.message.name === ns && a.error !== undefined).length;
/** The reconciler's first request that `match`es, held until the gate opens. */
function holdFirst(match: Parameters<typeof gate>[0]): ReturnType<typeof gate> {
  const g = gate(match, true);
  holding.set(g.hold);
  return g;
}

/** Waits for `ns` to hold nothing of any template: its parent names none, the ConfigMap is gone. */
async function furnishedWithNothing(ns: string): Promise<void> {
  await waitFor(`${ns}'s parent to name no template`, async () => (await applied(ns)) === '', 15_000);
  expect(await data(ns)).toBeUndefined();
}

/** The namespace and the template of case `c`. */
const names = (c: string): { ns: string; t: string } => ({ ns: `race-${c}-${run}`, t: `race-t${c}-${run}` });
/** Deliveries of fan-out messages for `ns` started so far. */
const fanoutsStarted = (ns: string): number => lane.started.filter((m) => m.name === ns && m.type === 'FANOUT').length;
/** Waits for `ns`'s ConfigMap to hold `want` (undefined: gone). */
const settle = (ns: string, want: unknown) => waitFor(`${ns}'s race-cm to hold ${JSON.stringify(want)}`, async () => JSON.stringify(await data(ns)) === JSON.stringify(want), 15_000);

describe('a template change racing a namespace reconcile, with the relay', () => {
  it('(a) a first population planned from v1, held at its first write while v2 is written and fanned out: the fan-out\'s message waits for it and leaves v2', async () => {
    const { ns, t } = names('a');
    await (await apply(tpl(t, 'xa'))).fannedOut();
    const first = holdFirst(writeIn(ns));
    await namespace(ns, 'xa');
    await first.reached;
    expect(await (await apply(tpl(t, 'xa', '2'))).fannedOut()).toBe(1);
    // Published, its message waits behind the reconcile in flight (the namespace's ordering key).
    expect(fanoutsStarted(ns)).toBe(0);
    first.open();
    await settle(ns, { a: '2' });
    await waitReady(admin, ns);
    expect(lane.answered.some((a) => a.message.name === ns && a.message.type === 'FANOUT' && a.result?.result === 'converged')).toBe(true);
    expect(failedDeliveries(ns)).toBe(0);
  }, 60_000);

  it('(b) a namespace relabelled to match v1 while v2 (which no longer selects it) fans out before its parent names the template: the parent\'s write, sent on by the relay, leaves it without the template', async () => {
    const { ns, t } = names('b');
    await (await apply(tpl(t, 'xb'))).fannedOut();
    await namespace(ns, 'zb');
    await waitReady(admin, ns);
    // The relabel's reconcile lists v1 (it selects ns now) and is held at its first write, the parent naming t.
    const first = holdFirst(writeIn(ns));
    await patchNamespace(admin, ns, { metadata: { labels: { race: `xb-${run}` } } });
    await first.reached;
    expect(await (await apply(tpl(t, 'wb', '2'))).fannedOut()).toBe(0);
    first.open();
    // The held reconcile writes v1 and names t in the parent; the relay sends that write on, and its reconcile prunes.
    await furnishedWithNothing(ns);
    expect(failedDeliveries(ns)).toBe(0);
  }, 60_000);

  it('(c) a fan-out message delivered late to an instance whose last list holds v1, after another wrote v2: v1 is not put back (its writes are newer than the list)', async () => {
    const { ns, t } = names('c');
    await (await apply(tpl(t, 'xc'))).fannedOut();
    await namespace(ns, 'xc');
    await settle(ns, { a: '1' });
    // Another reconciler instance (its own list of the templates) answers a message of v1's fan-out: its last list holds v1.
    const stale = createKubeClient(await connect(identities!.reconciler.credentials));
    const instance = { ...deps, kube: stale, resolver: new ResourceResolver(stale) };
    try {
      const late = (await fanOut(deps, t)).find((s) => s.message.name === ns)!.message;
      expect(await answer(instance, late)).toMatchObject({ result: 'converged', writes: 0 });
      // v2, fanned out and answered by the lane's instance.
      await (await apply(tpl(t, 'xc', '2'))).fannedOut();
      await settle(ns, { a: '2' });
      // v1's message again, late: its list is recent enough for the message, not for what v2 wrote.
      expect(await answer(instance, late)).toMatchObject({ result: 'converged', writes: 0 });
      expect(await data(ns)).toEqual({ a: '2' });
    } finally {
      stale.close();
    }
  }, 60_000);

  it('(d) a template created while a namespace is created: the namespace\'s reconcile listed none, the fan-out\'s message after it applies the template', async () => {
    const { ns, t } = names('d');
    // The namespace's first reconcile lists the templates (none selects it yet) and is held at its read of the parent.
    const parent = holdFirst((req) => req.method === 'GET' && req.path === CONFIGMAP(ns, 'furnish-applyset'));
    await namespace(ns, 'xd');
    await parent.reached;
    expect(await (await apply(tpl(t, 'xd'))).fannedOut()).toBe(1);
    expect(fanoutsStarted(ns)).toBe(0);
    parent.open();
    await settle(ns, { a: '1' });
    expect(await applied(ns)).toBe(t);
    await waitReady(admin, ns);
    expect(failedDeliveries(ns)).toBe(0);
  }, 60_000);

  it('a template deleted while a first population that names it is in flight: the parent\'s write, sent on by the relay, brings the reconcile that prunes it', async () => {
    const { ns, t } = names('e');
    await (await apply(tpl(t, 'xe'))).fannedOut();
    const first = holdFirst(writeIn(ns));
    await namespace(ns, 'xe');
    await first.reached;
    const deleted = BigInt((await get(admin, `/apis/furnish.dev/v1alpha1/namespacetemplates/${t}`))!.metadata.resourceVersion!);
    await deleteTemplate(admin, t);
    expect(await fannedOutAt(t, deleted)).toBe(0);
    first.open();
    await furnishedWithNothing(ns);
  }, 60_000);
});
