// What Furnish owns, and what a reconcile costs, on kube-sim and on a real API server
// (FURNISH_TEST_KUBECONFIG): ownership is read from the objects (membership of the namespace's
// ApplySet, the label owned by Furnish's field manager in managedFields: shared/ownership.ts),
// never from an annotation tenants can edit; a fan-out reconcile costs at most (objects that changed) + 2 calls per namespace (in
// fact the changed objects' writes alone: in a small cluster a batch lists its namespaces at once)
// and lists the templates three times in all (reconcile-template; the batch as it runs and after
// its writes). Calls are counted at the reconcilers' client seam, the same on both servers, by
// the message each was made for (shared/kube/cause.ts): other suites' work on a shared cluster is
// not this fan-out's.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { KEY } from '../../shared/keys.ts';
import { applyObject, mergePatch } from '../../shared/kube/api.ts';
import type { KubeClient, KubeRequest } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import { silentLogger } from '../../shared/log.ts';
import { ownedByFurnish } from '../../shared/ownership.ts';
import { applySetId } from '../../shared/render/applyset.ts';
import { orphanPatch } from '../../shared/reconcile/plan.ts';
import { startLocalStack, type LocalStack } from '../../scripts/start.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { applyTemplate, clientFor, CONFIGMAP, createNamespace, get, patchNamespace, waitFor, waitReady, tearDown, type Created } from './helpers.ts';

let cluster: TestCluster;
let stack: LocalStack;
let admin: KubeClient;
/** Every request the reconcilers send (not the relay), seen at their client's seam. */
const sent: (KubeRequest & { attempt: number; at: number })[] = [];
const run = `${process.pid % 1000}-${Date.now().toString(36).slice(-4)}`;
let seq = 0;
const uniq = (p: string) => `${p}-${run}-${++seq}`;
const created: Created = { namespaces: [], templates: [] };
/**
 * Where the first test edits an object by hand: a namespace this stack never furnishes, or its
 * reconcile, racing the test, would prune the object (Furnish's, of no template).
 */
const handsOn = `fields-${run}`;
const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps', namespaced: true };

async function namespace(name: string, labels: Record<string, string>): Promise<void> {
  created.namespaces.push(name);
  await createNamespace(admin, name, labels, { [KEY.creator]: 'alice' });
}

async function template(t: NamespaceTemplate): Promise<void> {
  created.templates.push(t.metadata.name!);
  await applyTemplate(admin, t);
}

const configMap = (name: string, data: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const tpl = (name: string, selector: Record<string, string>, objects: KubeObject[], mode: 'Enforce' | 'CreateOnly' = 'Enforce'): NamespaceTemplate => ({
  apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: { namespaces: { labelSelector: { matchLabels: selector } }, templates: objects, mode, deletionPolicy: 'Delete' },
});

/** A call made for template `name`: reconcile-template's (a change, a recount), or a message its fan-out sent (cause.ts). */
function causedBy(r: KubeRequest, name: string): boolean {
  return (r.cause?.kind === 'NamespaceTemplate' && r.cause.name === name) || r.cause?.by?.startsWith(`template/${name}@`) === true;
}

async function settle(): Promise<void> {
  for (let quiet = 0; quiet < 2; ) {
    await stack.idle();
    await new Promise((r) => setTimeout(r, 150));
    quiet = (await Promise.race([stack.idle().then(() => true), new Promise((r) => setTimeout(() => r(false), 10))])) ? quiet + 1 : 0;
  }
}

beforeAll(async () => {
  cluster = await useTestCluster();
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  admin = await clientFor(cluster.kubeconfigPath, context);
  stack = await startLocalStack({
    kubeconfigPath: cluster.kubeconfigPath, context, port: 0, relayPort: 0, webhooks: false, resyncSeconds: 0, log: silentLogger,
    env: { FURNISH_WATCH_TIMEOUT_SECONDS: '5', FURNISH_SYSTEM_NAMESPACES: handsOn },
    // The reconcilers' client only (the relay's lists are not theirs).
    kubeOptions: { faults: (req, attempt) => void sent.push({ ...req, attempt, at: Math.round(performance.now()) }) },
  });
}, 60_000);

afterAll(() => tearDown({ cluster, admin, stack, created }));

describe('managedFields say who owns what (the same on kube-sim and a real server)', () => {
  const furnishEntries = (o: KubeObject) => ((o.metadata.managedFields ?? []) as { manager: string; operation: string; fieldsV1: Record<string, Record<string, Record<string, unknown>>> }[]).filter((e) => e.manager === 'furnish');

  it('the template label taken off by someone else leaves the object Furnish\'s (its ApplySet label, owned by furnish); orphaning releases it', async () => {
    const ns = handsOn;
    await namespace(ns, {});
    const obj: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: ns, labels: { [KEY.template]: 't', [KEY.applySetPartOf]: applySetId(ns) }, annotations: { [KEY.appliedHash]: 'h', [KEY.deletionPolicy]: 'Delete' } }, data: { a: '1' } };
    expect((await applyObject(admin, CONFIGMAPS, obj)).ok).toBe(true);
    const taken = await mergePatch(admin, CONFIGMAP(ns, 'x'), { metadata: { labels: { [KEY.template]: null } } }, 'kubectl-label');
    expect(taken.ok).toBe(true);
    const live = (await get(admin, CONFIGMAP(ns, 'x')))!;
    expect(live.metadata.labels?.[KEY.template]).toBeUndefined();
    const furnish = furnishEntries(live);
    expect(furnish.map((e) => e.operation)).toEqual(['Apply']);
    expect(Object.keys(furnish[0]!.fieldsV1['f:metadata']!['f:labels'] ?? {})).toEqual([`f:${KEY.applySetPartOf}`]);
    expect(ownedByFurnish(live)).toBe(true);
    expect((await mergePatch(admin, CONFIGMAP(ns, 'x'), orphanPatch())).ok).toBe(true);
    const released = (await get(admin, CONFIGMAP(ns, 'x')))!;
    expect(ownedByFurnish(released)).toBe(false);
    expect(released.data).toEqual({ a: '1' });
  });

  it('managedFields sent as [{}] or [] in an update reset them, and an update of an object without them records none (kube-apiserver 1.26): the object is no longer Furnish\'s, which is why protect-objects refuses it', async () => {
    const ns = handsOn;
    const obj = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels: { [KEY.template]: 't', [KEY.applySetPartOf]: applySetId(ns) } }, data: { a: '1' } });
    for (const [name, reset] of [['reset-empty-entry', [{}]], ['reset-empty-list', []]] as const) {
      expect((await applyObject(admin, CONFIGMAPS, obj(name))).ok).toBe(true);
      expect(ownedByFurnish((await get(admin, CONFIGMAP(ns, name)))!)).toBe(true);
      const patched = await mergePatch(admin, CONFIGMAP(ns, name), { metadata: { managedFields: reset }, data: { a: '2' } }, 'kubectl-edit');
      expect(patched.ok).toBe(true);
      const live = (await get(admin, CONFIGMAP(ns, name)))!;
      expect(live.metadata.labels?.[KEY.applySetPartOf]).toBe(applySetId(ns));
      expect(live.data).toEqual({ a: '2' });
      expect(live.metadata.managedFields ?? []).toEqual([]);
      expect(ownedByFurnish(live)).toBe(false);
    }
    // Nothing is tracked again until an apply, which first gives every existing field to `before-first-apply`.
    expect((await mergePatch(admin, CONFIGMAP(ns, 'reset-empty-list'), { data: { a: '3' } }, 'kubectl-edit')).ok).toBe(true);
    expect((await get(admin, CONFIGMAP(ns, 'reset-empty-list')))!.metadata.managedFields ?? []).toEqual([]);
    expect((await applyObject(admin, CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'reset-empty-list', namespace: ns, labels: { other: 'x' } } }, { fieldManager: 'other' })).ok).toBe(true);
    const reapplied = (await get(admin, CONFIGMAP(ns, 'reset-empty-list')))!;
    expect(furnishEntries(reapplied)).toEqual([]);
    const entries = reapplied.metadata.managedFields as { manager: string; operation: string; fieldsV1: Record<string, Record<string, Record<string, unknown>>> }[];
    expect(entries.map((e) => `${e.manager} ${e.operation}`).sort()).toEqual(['before-first-apply Update', 'other Apply']);
    expect(Object.keys(entries.find((e) => e.manager === 'before-first-apply')!.fieldsV1['f:metadata']!['f:labels']!)).toContain(`f:${KEY.applySetPartOf}`);
    expect(ownedByFurnish(reapplied)).toBe(false);
    // Absent (a client unaware of managedFields) keeps them.
    expect((await applyObject(admin, CONFIGMAPS, obj('kept'))).ok).toBe(true);
    expect((await mergePatch(admin, CONFIGMAP(ns, 'kept'), { data: { a: '3' } }, 'kubectl-edit')).ok).toBe(true);
    expect(ownedByFurnish((await get(admin, CONFIGMAP(ns, 'kept')))!)).toBe(true);
  });
});

describe('ownership is not an annotation tenants can edit', () => {
  it('objects whose template label was taken off, in a namespace whose ApplySet parent was edited, are still pruned when the template stops selecting it (no webhooks here: what the reconciler reads alone)', async () => {
    const label = uniq('own');
    const name = uniq('owned');
    const ns = uniq('tenant');
    await template(tpl(name, { own: label }, [configMap('seed', { a: '1' })], 'CreateOnly'));
    await namespace(ns, { own: label });
    await waitReady(admin, ns);
    await waitFor('seed created', async () => get(admin, CONFIGMAP(ns, 'seed')));
    // What a namespace user could detach without protect-objects (which refuses both, test/e2e/protect.test.ts): the template label, the parent's bookkeeping.
    expect((await mergePatch(admin, CONFIGMAP(ns, 'seed'), { metadata: { labels: { [KEY.template]: null } } }, 'kubectl-edit')).ok).toBe(true);
    const parentEdit = { metadata: { annotations: { [KEY.appliedTemplates]: '', 'applyset.kubernetes.io/contains-group-kinds': '', 'furnish.dev/inventory': '' } } };
    expect((await mergePatch(admin, CONFIGMAP(ns, 'furnish-applyset'), parentEdit, 'kubectl-edit')).ok).toBe(true);
    await settle();
    // CreateOnly never rewrites it: the label stays off.
    expect((await get(admin, CONFIGMAP(ns, 'seed')))?.metadata.labels?.[KEY.template]).toBeUndefined();
    await patchNamespace(admin, ns, { metadata: { labels: { own: 'elsewhere' } } });
    await waitFor('the detached object pruned all the same', async () => (await get(admin, CONFIGMAP(ns, 'seed'))) === undefined, 20_000);
  });

  it('an object someone else created with the same kind is never pruned', async () => {
    const label = uniq('mine');
    const ns = uniq('theirs');
    await template(tpl(uniq('mine'), { mine: label }, [configMap('ours', { a: '1' })]));
    await namespace(ns, { mine: label });
    await waitReady(admin, ns);
    expect((await applyObject(admin, CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'theirs', namespace: ns }, data: { b: '2' } }, { fieldManager: 'kubectl' })).ok).toBe(true);
    await patchNamespace(admin, ns, { metadata: { labels: { mine: 'elsewhere' } } });
    await waitFor('ours pruned', async () => (await get(admin, CONFIGMAP(ns, 'ours'))) === undefined, 20_000);
    await settle();
    expect(await get(admin, CONFIGMAP(ns, 'theirs'))).toBeDefined();
  });
});

describe('calls per namespace reconcile', () => {
  it('a fan-out of a one-object change costs changed + 2 calls per namespace, and lists the templates a few times, not once per namespace', async () => {
    const label = uniq('calls');
    const name = uniq('calls');
    const n = 6;
    const names = Array.from({ length: n }, () => uniq('calls'));
    const objects = (pods: string) => [configMap('quota-like', { pods }), configMap('owner', { owner: '$(CREATOR)' }), configMap('third', { c: '3' })];
    await template(tpl(name, { calls: label }, objects('50')));
    for (const ns of names) await namespace(ns, { calls: label });
    for (const ns of names) await waitReady(admin, ns);
    await settle();
    sent.length = 0;
    await template(tpl(name, { calls: label }, objects('60')));
    for (const ns of names) await waitFor(`${ns} has the change`, async () => ((await get(admin, CONFIGMAP(ns, 'quota-like')))?.data as Record<string, string> | undefined)?.pods === '60');
    await settle();
    // On a shared cluster this stack also reconciles what other suites do meanwhile: only calls made
    // for this template's messages count (reconcile-template's for it, the one message per
    // namespace its fan-out sent), by their cause.
    const ours = sent.filter((r) => causedBy(r, name));
    const inNamespace = (r: KubeRequest, ns: string) => r.path === `/api/v1/namespaces/${ns}` || r.path.startsWith(`/api/v1/namespaces/${ns}/`);
    const perNamespace = names.map((ns) => ours.filter((r) => inNamespace(r, ns)).length);
    const isTemplateList = (r: KubeRequest) => r.method === 'GET' && r.path === '/apis/furnish.dev/v1alpha1/namespacetemplates';
    const templateLists = ours.filter(isTemplateList).length;
    process.stdout.write(`calls per namespace for a one-object fan-out (${cluster.isSimulated ? 'kube-sim' : 'real server'}): ${perNamespace.join(', ')}; template lists: ${templateLists}\n`);
    // What a failure needs to be understood: this fan-out's calls, in order, with their cause.
    if (templateLists > 3) process.stdout.write(`${ours.map((r) => `${r.at - ours[0]!.at} ms #${r.attempt} ${r.method} ${r.path}${r.query ? ` ${JSON.stringify(r.query)}` : ''} <- ${r.cause!.kind}/${r.cause!.name}`).join('\n')}\n`);
    // Its GET, the list of the one kind Furnish holds there (the ApplySet parent, a ConfigMap, comes
    // with it), and the one write: nothing is carried in the message, nothing read twice.
    for (const ns of names) {
      expect(ours.filter((r) => inNamespace(r, ns)).map((r) => `${r.method} ${r.path}`)).toEqual([
        `GET /api/v1/namespaces/${ns}`, `GET /api/v1/namespaces/${ns}/configmaps`, `PATCH /api/v1/namespaces/${ns}/configmaps/quota-like`,
      ]);
    }
    // The namespaces' reconciles share a list recent enough (namespace-reads.ts readTemplates): at
    // least one taken after the change, and not one per namespace.
    expect(templateLists).toBeGreaterThanOrEqual(1);
    expect(templateLists).toBeLessThanOrEqual(3);
    // A resync of the same namespaces reads everything and writes nothing.
    sent.length = 0;
    await stack.relay.relay.resync();
    await settle();
    const writes = sent.filter((r) => r.method !== 'GET' && r.query?.dryRun === undefined && names.some((ns) => inNamespace(r, ns)));
    expect(writes).toEqual([]);
  });
});
