// Population end to end inside one process: the test cluster (kube-sim: HTTPS, SSA, watch with
// bookmarks and 410, request log, faults; or the real cluster FURNISH_TEST_KUBECONFIG names), the
// local stack (relay → in-process bus → push → reconcile-namespace and reconcile-template served
// by the Functions Framework). Namespaces are created as mutate-namespace leaves them (creator
// annotation, phase=pending); the webhook path is covered in test/e2e.
//
// On a real cluster: the kubeconfig's current context must be allowed everything (CRDs, namespaces,
// RBAC, every object the examples hold); no user context is needed. Writes are counted by the
// reconcilers' own client metrics (kube-sim's request log is a second, independent witness) and
// faults are injected at the client seam (kube-sim injects them in the server). The suite applies
// the examples' templates cluster-wide: use a disposable cluster. The namespaces it creates and the
// templates it applies are deleted at the end.
import { describe, it, expect, beforeAll, afterAll, beforeEach } from '@jest/globals';
import { spawn } from 'node:child_process';
import { KEY } from '../../shared/keys.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import { encodeMessage } from '../../shared/bus/envelope.ts';
import { jsonLogger, silentLogger } from '../../shared/log.ts';
import { startLocalStack, type LocalStack } from '../../scripts/start.ts';
import { useTestCluster, type Fault, type TestCluster } from '../support/cluster.ts';
import { toolGate } from '../support/tools.ts';
import { applyTemplate, clientFor, CONFIGMAP, createNamespace, deleteTemplate, examples, get, list, managers, NETPOL, patchNamespace, QUOTA, ROLEBINDING, seamFaults, waitFor, waitReady, writeWitnesses, tearDown, type Created, type WriteWitnesses } from './helpers.ts';

let cluster: TestCluster;
let stack: LocalStack;
let admin: KubeClient;
let writes: WriteWitnesses;
/** The server's faults on kube-sim, the client seam's on a real cluster. */
let faults: { inject(f: Fault): () => void; clear(): void };
let seq = 0;
const run = `${process.pid % 1000}-${Date.now().toString(36).slice(-4)}`;
const uniq = (p: string) => `${p}-${run}-${++seq}`;
const created: Created = { namespaces: [], templates: [] };

/** Waits until the bus has been quiet (nothing queued, nothing in flight) twice in a row. */
async function settle(): Promise<void> {
  for (let quiet = 0; quiet < 2; ) {
    await stack.idle();
    await new Promise((r) => setTimeout(r, 150));
    quiet = (await Promise.race([stack.idle().then(() => true), new Promise((r) => setTimeout(() => r(false), 10))])) ? quiet + 1 : 0;
  }
}

/** Lets one resync settle, forgets the writes so far, then resyncs twice: what is counted after this is what resyncs write. */
async function twoResyncsAfterOne(): Promise<void> {
  await stack.relay.relay.resync();
  await settle();
  await writes.reset();
  await stack.relay.relay.resync();
  await stack.relay.relay.resync();
  await settle();
}

/** Creates a namespace and, on a real cluster, remembers it for clean-up. */
async function namespace(name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}): Promise<void> {
  created.namespaces.push(name);
  await createNamespace(admin, name, labels, annotations);
}

async function template(t: NamespaceTemplate): Promise<void> {
  created.templates.push(t.metadata.name!);
  await applyTemplate(admin, t);
}

beforeAll(async () => {
  cluster = await useTestCluster();
  const seam = cluster.faults ? undefined : seamFaults();
  faults = cluster.faults ?? seam!;
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  admin = await clientFor(cluster.kubeconfigPath, context);
  stack = await startLocalStack({ kubeconfigPath: cluster.kubeconfigPath, context, port: 0, relayPort: 0, webhooks: false, resyncSeconds: 0, log: process.env.FURNISH_TEST_LOG ? jsonLogger('it', (l) => process.stderr.write(l), 'DEBUG') : silentLogger, env: { FURNISH_WATCH_TIMEOUT_SECONDS: '5' }, ...(seam ? { faults: seam.hook } : {}) });
  writes = writeWitnesses(cluster, async () => (await stack.runtime.cluster('local')).kube);
  for (const t of examples()) await template(t);
}, 60_000);

afterAll(() => tearDown({ cluster, admin, stack, created }));

beforeEach(() => faults?.clear());

/** Without kubectl (laptop only: CI fails) the `kubectl wait` test is skipped loudly, and the failed-phase test skips its `kubectl wait` step. */
const kubectlGate = toolGate([{ command: 'kubectl', why: 'the templates guide\'s `kubectl wait --for=condition=Ready nstpl/NAME` is run as a user would' }]);

/** kubectl as the admin context (kube-sim) or the current one (a real cluster). */
function kubectl(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const context = cluster.isSimulated ? ['--context', cluster.users.admin!.context] : [];
  return new Promise((resolve) => {
    const p = spawn('kubectl', ['--kubeconfig', cluster.kubeconfigPath, ...context, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('population through the relay and the in-process bus', () => {
  it('a new namespace ends with the examples\' objects, applied by furnish, $(CREATOR) replaced, phase=ready', async () => {
    const ns = uniq('team');
    await namespace(ns, { [KEY.organization]: 'acme' });
    await waitReady(admin, ns);
    for (const name of ['default-deny', 'allow-dns-egress', 'allow-same-namespace']) expect(managers(await get(admin, NETPOL(ns, name)))).toContain('furnish');
    const rb = await get(admin, ROLEBINDING(ns, 'namespace-admin'));
    expect((rb?.subjects as { name: string }[])[0]!.name).toBe('alice');
    expect(rb?.metadata.labels?.[KEY.template]).toBe('security-defaults');
    expect(rb?.metadata.labels?.[KEY.applySetPartOf]).toMatch(/^applyset-/);
    expect(await get(admin, QUOTA(ns, 'default-quota'))).toBeDefined();
    expect((await get(admin, CONFIGMAP(ns, 'team-settings')))?.data).toMatchObject({ owner: 'alice', organization: 'acme', namespace: ns });
    // privileged requires permission and a label: not here.
    expect(await get(admin, ROLEBINDING(ns, 'privileged-workloads'))).toBeUndefined();
    // The event is posted beside the phase's write, so it may be stored a moment after it.
    await waitFor('the Populated event', async () => (await list(admin, `/api/v1/namespaces/${ns}/events`)).find((e) => e.reason === 'Populated'));
  });

  it('the quota controller\'s status write is not drift: a new namespace is reconciled for its creation and its parent\'s write, nothing else', async () => {
    const ns = uniq('quota');
    // Every message the relay publishes about this namespace: the ADDED that populates it, the
    // write of its ApplySet parent (docs/adr/0009: the reconcile it causes reads and writes
    // nothing), and any drift.
    const published: string[] = [];
    const publish = stack.bus.publish.bind(stack.bus);
    stack.bus.publish = (topic, envelope) => {
      if (envelope.attributes.kind === 'Namespace' && envelope.attributes.name === ns) published.push(envelope.attributes.type!);
      return publish(topic, envelope);
    };
    try {
      const driftBefore = stack.relay.relay.counters.drift;
      await namespace(ns);
      await waitReady(admin, ns);
      // The controller filled the example quota's status in a status write of its own (both servers run one).
      const quota = await waitFor('the quota controller\'s status write', async () => {
        const q = await get(admin, QUOTA(ns, 'default-quota'));
        return (q?.status as { used?: object } | undefined)?.used ? q : undefined;
      });
      expect((quota.status as { used: Record<string, string> }).used).toMatchObject({ pods: '0', 'requests.cpu': '0', 'services.loadbalancers': '0' });
      expect(quota.metadata.managedFields).toEqual(expect.arrayContaining([expect.objectContaining({ manager: 'kube-controller-manager', operation: 'Update', subresource: 'status' })]));
      await settle();
      expect(stack.relay.relay.counters.drift).toBe(driftBefore);
      expect(published).toEqual(['ADDED', 'MODIFIED']);
    } finally {
      stack.bus.publish = publish;
    }
  });

  it('a duplicated, reordered or resynced message writes nothing', async () => {
    const ns = uniq('dup');
    await namespace(ns);
    await waitReady(admin, ns);
    // Template status counts catch up at a resync; after that, nothing is left to change.
    await stack.relay.relay.resync();
    await settle();
    await writes.reset();
    const old = encodeMessage({ v: 1, cluster: 'local', kind: 'Namespace', name: ns, resourceVersion: '1', type: 'ADDED' });
    for (let i = 0; i < 3; i++) await stack.bus.publish('furnish-namespaces', old);
    await stack.relay.relay.resync();
    await settle();
    expect(await writes.detail()).toEqual([]);
  });

  it('a resync writes nothing whatever the template spells (1000m, 1024Mi, 0.5, empty lists)', async () => {
    const ns = uniq('spell');
    const name = uniq('spelling');
    await namespace(ns, { spelling: 'yes' });
    await template({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: { namespaces: { labelSelector: { matchLabels: { spelling: 'yes' } } }, templates: [
      { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'spelt' }, spec: { hard: { 'requests.cpu': '1000m', 'requests.memory': '1024Mi', 'limits.cpu': '0.5', pods: '10' } } },
      { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'spelt' }, spec: { limits: [{ type: 'Container', default: { cpu: 0.5, memory: '512Mi' }, defaultRequest: { cpu: '100m', memory: '0.25Gi' } }] } },
      { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'spelt' }, spec: { podSelector: {}, policyTypes: ['Ingress'], ingress: [], egress: [] } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'spelt', labels: {}, annotations: {} }, data: {} },
    ] } });
    await waitReady(admin, ns);
    await waitFor('the quota', async () => get(admin, QUOTA(ns, 'spelt')));
    await twoResyncsAfterOne();
    expect(await writes.detail()).toEqual([]);
    expect(await writes.count()).toEqual(writes.all(0));
    // The server keeps its own spelling (`1`, `1Gi`, `500m`): it is that which is compared, not the template's.
    expect((await get(admin, QUOTA(ns, 'spelt')))?.spec).toMatchObject({ hard: { 'requests.cpu': '1', 'requests.memory': '1Gi', 'limits.cpu': '500m' } });
    // A change by someone else is drift, and the next resync repairs it with one write.
    await admin.call({ method: 'PATCH', path: QUOTA(ns, 'spelt'), contentType: 'application/merge-patch+json', body: { spec: { hard: { 'requests.cpu': '2' } } } });
    await writes.reset();
    await stack.relay.relay.resync();
    await settle();
    await waitFor('the quota repaired', async () => ((await get(admin, QUOTA(ns, 'spelt')))?.spec as { hard: Record<string, string> }).hard['requests.cpu'] === '1');
    expect(await writes.count('resourcequotas')).toEqual(writes.all(1));
    await deleteTemplate(admin, name);
  });

  it('editing a template reaches every matching namespace and writes only what changed', async () => {
    const names = [uniq('edit'), uniq('edit'), uniq('edit')];
    for (const n of names) await namespace(n, { tier: 'gold' });
    const t: NamespaceTemplate = { apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: uniq('gold') }, spec: { namespaces: { labelSelector: { matchLabels: { tier: 'gold' } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gold' }, data: { level: '1' } }] } };
    await template(t);
    for (const n of names) await waitFor(`gold in ${n}`, async () => ((await get(admin, CONFIGMAP(n, 'gold')))?.data as Record<string, string> | undefined)?.level === '1');
    await settle();
    await writes.reset();
    await template({ ...t, spec: { ...t.spec, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gold' }, data: { level: '2' } }] } });
    for (const n of names) await waitFor(`gold v2 in ${n}`, async () => ((await get(admin, CONFIGMAP(n, 'gold')))?.data as Record<string, string> | undefined)?.level === '2');
    await settle();
    // One ConfigMap write per namespace, and no other ConfigMap written (every witness).
    expect(await writes.count('configmaps')).toEqual(writes.all(3));
    // kube-sim's log also names them: the three are patches of `gold` (each after its dry run, which stores nothing).
    if (cluster.log) expect(cluster.log.entries.filter((e) => e.resource === 'configmaps' && e.name === 'gold' && e.verb === 'patch' && !e.dryRun)).toHaveLength(3);
    await deleteTemplate(admin, t.metadata.name!);
    for (const n of names) await waitFor(`gold pruned in ${n}`, async () => (await get(admin, CONFIGMAP(n, 'gold'))) === undefined);
  });

  kubectlGate.it('template status is true: `kubectl wait --for=condition=Ready` returns once every namespace holds the current generation', async () => {
    const names = [uniq('wait'), uniq('wait'), uniq('wait')];
    const label = uniq('wait');
    for (const n of names) await namespace(n, { wait: label });
    const t: NamespaceTemplate = { apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: uniq('waited') }, spec: { namespaces: { labelSelector: { matchLabels: { wait: label } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'waited' }, data: { level: '1' } }] } };
    await template(t);
    // No resync runs in this stack: Ready comes from the namespaces telling reconcile-template.
    const first = await kubectl(['wait', '--for=condition=Ready', `nstpl/${t.metadata.name}`, '--timeout=20s']);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    for (const n of names) expect(((await get(admin, CONFIGMAP(n, 'waited')))?.data as Record<string, string>).level).toBe('1');
    const status = ((await get(admin, `/apis/furnish.dev/v1alpha1/namespacetemplates/${t.metadata.name}`)) as NamespaceTemplate).status;
    expect(status).toMatchObject({ matched: 3, applied: 3, failed: 0 });
    // A spec edit: Ready of the new generation only once all three hold level 2.
    await template({ ...t, spec: { ...t.spec, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'waited' }, data: { level: '2' } }] } });
    const edited = await get(admin, `/apis/furnish.dev/v1alpha1/namespacetemplates/${t.metadata.name}`);
    expect(edited?.metadata.generation).toBe(2);
    const second = await kubectl(['wait', '--for=condition=Ready', `nstpl/${t.metadata.name}`, '--timeout=20s']);
    expect(second.status).toBe(0);
    const after = (await get(admin, `/apis/furnish.dev/v1alpha1/namespacetemplates/${t.metadata.name}`)) as NamespaceTemplate;
    expect(after.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', observedGeneration: 2 });
    for (const n of names) expect(((await get(admin, CONFIGMAP(n, 'waited')))?.data as Record<string, string>).level).toBe('2');
    await deleteTemplate(admin, t.metadata.name!);
  });

  kubectlGate.it('a namespace that failed, once deleted, no longer holds the template\'s Ready back (it tells the template as its deletion starts)', async () => {
    const label = uniq('leave');
    const [fine, broken] = [uniq('leave'), uniq('leave')];
    const name = uniq('leaving');
    // The quota comes from each namespace: the broken one's is not a quantity, so the server refuses it.
    await namespace(fine, { leave: label }, { 'example.com/pods': '10' });
    await namespace(broken, { leave: label }, { 'example.com/pods': 'lots' });
    await template({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: { namespaces: { labelSelector: { matchLabels: { leave: label } } }, templates: [{ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pods' }, spec: { hard: { pods: '$(ANNOTATION:example.com/pods|5)' } } }] } });
    await waitFor(`${broken} failed`, async () => (await get(admin, `/api/v1/namespaces/${broken}`))?.metadata.labels?.[KEY.phase] === 'failed');
    const path = `/apis/furnish.dev/v1alpha1/namespacetemplates/${name}`;
    const counted = async () => ((await get(admin, path)) as NamespaceTemplate | undefined)?.status;
    await waitFor('one applied, one failed', async () => (await counted())?.failed === 1 && (await counted())?.applied === 1);
    // The server's own words name what is wrong, and the failure is final (not retried as a 500 would be).
    // A recount between the ApplySet parent's write and the namespace's (which records the reason)
    // has only "(reason not recorded)"; the namespace's write asks for the next one.
    await waitFor('the failure\'s reason in the status', async () => !/reason not recorded/.test((await counted())?.recentFailures?.[0]?.reason ?? 'reason not recorded'));
    expect((await counted())?.recentFailures?.[0]?.reason).toMatch(/cannot convert the object.*quantities must match the regular expression/);
    // Every recount the converging namespaces asked for is done (FURNISH_STATUS_INTERVAL_MS, 1 s, and
    // a fifth of the time at most): none left to flip Ready but the one the deletion brings.
    await settle();
    await new Promise((r) => setTimeout(r, 3000));
    expect((await counted())?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    // No resync runs in this stack: only the leaving namespace's notice can bring the recount. A
    // finalizer of someone else's holds it Terminating, as a real namespace controller does for a
    // while (it is best effort: a namespace gone before its reconcile reads it tells nobody).
    await patchNamespace(admin, broken, { metadata: { finalizers: ['example.com/hold'] } });
    expect((await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${broken}` })).ok).toBe(true);
    const ready = await kubectl(['wait', '--for=condition=Ready', `nstpl/${name}`, '--timeout=20s']);
    expect(ready.stderr).toBe('');
    expect(ready.status).toBe(0);
    expect(((await get(admin, path)) as NamespaceTemplate).status).toMatchObject({ matched: 1, applied: 1, failed: 0 });
    expect((await get(admin, `/api/v1/namespaces/${broken}`))?.metadata.deletionTimestamp).toBeDefined();
    await patchNamespace(admin, broken, { metadata: { finalizers: null } });
    await deleteTemplate(admin, name);
  });

  it('an object removed from a template is pruned; relabelling adds and removes templates', async () => {
    const ns = uniq('relabel');
    const name = uniq('silver');
    await namespace(ns, { tier: 'silver' });
    await template({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: { namespaces: { labelSelector: { matchLabels: { tier: 'silver' } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: {} }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' }, data: {} }] } });
    await waitFor('a and b', async () => (await get(admin, CONFIGMAP(ns, 'a'))) && (await get(admin, CONFIGMAP(ns, 'b'))));
    await template({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: { namespaces: { labelSelector: { matchLabels: { tier: 'silver' } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: {} }] } });
    await waitFor('b pruned', async () => (await get(admin, CONFIGMAP(ns, 'b'))) === undefined);
    expect(await get(admin, CONFIGMAP(ns, 'a'))).toBeDefined();
    await patchNamespace(admin, ns, { metadata: { labels: { tier: 'bronze' } } });
    await waitFor('a pruned after relabel', async () => (await get(admin, CONFIGMAP(ns, 'a'))) === undefined);
    await patchNamespace(admin, ns, { metadata: { labels: { tier: 'silver' } } });
    await waitFor('a back after relabel', async () => (await get(admin, CONFIGMAP(ns, 'a'))) !== undefined);
    await deleteTemplate(admin, name);
  });

  it('opt-out and apply: disable apply nothing', async () => {
    const out = uniq('optout');
    await namespace(out, {}, { [KEY.optOut]: 'true' });
    await waitReady(admin, out);
    expect(await list(admin, `/apis/networking.k8s.io/v1/namespaces/${out}/networkpolicies`)).toEqual([]);
    const name = uniq('disabled');
    const ns = uniq('dis');
    await namespace(ns, { disabled: 'yes' });
    await template({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name, annotations: { [KEY.apply]: 'disable' } }, spec: { namespaces: { labelSelector: { matchLabels: { disabled: 'yes' } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'never' }, data: {} }] } });
    await waitReady(admin, ns);
    await settle();
    expect(await get(admin, CONFIGMAP(ns, 'never'))).toBeUndefined();
    await deleteTemplate(admin, name);
  });

  it('a template with an invalid object reports one failure Event and does not loop', async () => {
    const ns = uniq('invalid');
    const name = uniq('broken');
    await namespace(ns, { broken: 'yes' });
    await waitReady(admin, ns);
    const binding = (role: string): NamespaceTemplate => ({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: { namespaces: { labelSelector: { matchLabels: { broken: 'yes' } } }, templates: [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'team' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: '$(CREATOR)' }] }] } });
    await template(binding('view'));
    await waitFor('binding', async () => get(admin, ROLEBINDING(ns, 'team')));
    // roleRef is immutable: the API server answers 422 Invalid to every apply of the new one.
    await template(binding('edit'));
    await waitFor('failure event', async () => (await list(admin, `/api/v1/namespaces/${ns}/events`)).find((e) => e.reason === 'PopulateFailed'));
    await twoResyncsAfterOne();
    const failures = (await list(admin, `/api/v1/namespaces/${ns}/events`)).filter((e) => e.reason === 'PopulateFailed');
    expect(failures).toHaveLength(1);
    expect(failures[0]!.message).toMatch(/Invalid|422/);
    // Each resync retries the apply once (422, nothing stored) and stops there: no loop, no new Event.
    for (const n of Object.values(await writes.count('events'))) expect(n).toBeLessThanOrEqual(2);
    const t = (await get(admin, `/apis/furnish.dev/v1alpha1/namespacetemplates/${name}`)) as NamespaceTemplate;
    expect(t.status?.recentFailures?.length).toBe(1);
    expect(t.status?.failed).toBe(1);
    await deleteTemplate(admin, name);
  });

  it('a template that cannot be applied applies nothing of itself; the namespace says phase=failed and why; fixed, it is ready', async () => {
    const ns = uniq('failing');
    const name = uniq('half');
    await namespace(ns, { half: 'yes' });
    const objects = (subject: string) => [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'half' }, data: { a: '1' } },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'half' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: subject }] },
    ];
    const t: NamespaceTemplate = { apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: { namespaces: { labelSelector: { matchLabels: { half: 'yes' } } }, templates: objects('') } };
    await template(t);
    await waitFor('phase=failed', async () => (await get(admin, `/api/v1/namespaces/${ns}`))?.metadata.labels?.[KEY.phase] === 'failed');
    const failed = await get(admin, `/api/v1/namespaces/${ns}`);
    expect(failed?.metadata.annotations?.[KEY.failure]).toMatch(new RegExp(`^template ${name}: rbac.authorization.k8s.io/RoleBinding/${ns}/half: Invalid \\(HTTP 422\\): .*subjects\\[0\\]\\.name: Required value`));
    // All or nothing: the server refused the RoleBinding, so the ConfigMap was never written (dry-run first) or deleted
    // again (rolled back). Settle first: a second delivery of the new namespace may be rolling back its own create.
    await settle();
    expect(await get(admin, CONFIGMAP(ns, 'half'))).toBeUndefined();
    expect((await list(admin, `/api/v1/namespaces/${ns}/events`)).filter((e) => e.reason === 'PopulateFailed')).toHaveLength(1);
    const status = await waitFor('the template counts the failure', async () => {
      const s = ((await get(admin, `/apis/furnish.dev/v1alpha1/namespacetemplates/${name}`)) as NamespaceTemplate).status;
      return s?.failed === 1 ? s : undefined;
    });
    expect(status.recentFailures).toEqual([{ namespace: ns, object: `rbac.authorization.k8s.io/RoleBinding/${ns}/half`, reason: expect.stringMatching(/^Invalid \(HTTP 422\): /) }]);
    expect(status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'ApplyFailed' });
    if (kubectlGate.available) {
      const waited = await kubectl(['wait', `namespace/${ns}`, `--for=jsonpath={.metadata.labels.furnish\\.dev/phase}=failed`, '--timeout=5s']);
      expect(waited.stderr).toBe('');
    }
    await template({ ...t, spec: { ...t.spec, templates: objects('alice') } });
    await waitReady(admin, ns);
    expect(await get(admin, CONFIGMAP(ns, 'half'))).toBeDefined();
    expect((await get(admin, `/api/v1/namespaces/${ns}`))?.metadata.annotations?.[KEY.failure]).toBeUndefined();
    await deleteTemplate(admin, name);
  });

  it('a token that would render empty is never sent; existingNamespaces: Ignore leaves older namespaces alone', async () => {
    const older = uniq('older');
    const label = uniq('adopt');
    await namespace(older, { adopt: label }, { [KEY.creator]: '' });
    // creationTimestamp has whole seconds: make the template clearly younger.
    await new Promise((r) => setTimeout(r, 1100));
    const creatorBinding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'creator' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: '$(CREATOR)' }] };
    const adopting = uniq('adopting');
    const ignoring = uniq('ignoring');
    await writes.reset();
    await template({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: adopting }, spec: { namespaces: { labelSelector: { matchLabels: { adopt: label } } }, templates: [creatorBinding] } });
    await template({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: ignoring }, spec: { existingNamespaces: 'Ignore', namespaces: { labelSelector: { matchLabels: { adopt: label } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ignoring' }, data: {} }] } });
    await waitFor('the older namespace reports the empty creator', async () => (await get(admin, `/api/v1/namespaces/${older}`))?.metadata.annotations?.[KEY.failure]);
    await settle();
    const annotation = (await get(admin, `/api/v1/namespaces/${older}`))?.metadata.annotations?.[KEY.failure];
    expect(annotation).toContain(`template ${adopting}: spec.templates[0].subjects[0].name: RenderFailed (HTTP 422): "$(CREATOR)" renders empty here`);
    // Never sent: not even as a dry run.
    expect(await writes.count('rolebindings')).toEqual(writes.all(0));
    // (Reads are fine: the reconciler lists the kinds templates apply, to find what Furnish owns.)
    if (cluster.log) expect(cluster.log.entries.filter((e) => e.resource === 'rolebindings' && e.namespace === older && e.verb !== 'list' && e.verb !== 'get')).toEqual([]);
    // The template that ignores existing namespaces did not touch the older one; a newer one gets it.
    expect(await get(admin, CONFIGMAP(older, 'ignoring'))).toBeUndefined();
    const newer = uniq('newer');
    await namespace(newer, { adopt: label });
    await waitReady(admin, newer);
    expect(await get(admin, CONFIGMAP(newer, 'ignoring'))).toBeDefined();
    expect(await get(admin, ROLEBINDING(newer, 'creator'))).toBeDefined();
    await deleteTemplate(admin, adopting);
    await deleteTemplate(admin, ignoring);
  });

  it('drift is repaired in seconds, without a resync: a deleted policy comes back, an edit is undone, a removed label is put back', async () => {
    const ns = uniq('drift');
    await namespace(ns);
    await waitReady(admin, ns);
    const driftBefore = stack.relay.relay.counters.drift;
    const del = await admin.call({ method: 'DELETE', path: NETPOL(ns, 'default-deny') });
    expect(del.ok).toBe(true);
    await waitFor('default-deny back', async () => get(admin, NETPOL(ns, 'default-deny')), 15_000);
    const quota = QUOTA(ns, 'default-quota');
    const hard = ((await get(admin, quota))?.spec as { hard: Record<string, string> }).hard;
    const edited = await admin.call({ method: 'PATCH', path: quota, contentType: 'application/merge-patch+json', body: { spec: { hard: { pods: '999' } } } });
    expect(edited.ok).toBe(true);
    await waitFor('the quota edit undone', async () => ((await get(admin, quota))?.spec as { hard: Record<string, string> }).hard.pods === hard.pods, 15_000);
    const unlabelled = await admin.call({ method: 'PATCH', path: NETPOL(ns, 'allow-dns-egress'), contentType: 'application/merge-patch+json', body: { metadata: { labels: { [KEY.template]: null } } } });
    expect(unlabelled.ok).toBe(true);
    await waitFor('the label put back', async () => (await get(admin, NETPOL(ns, 'allow-dns-egress')))?.metadata.labels?.[KEY.template] === 'security-defaults', 15_000);
    expect(stack.relay.relay.counters.drift).toBeGreaterThan(driftBefore);
  });

  it('injected API faults (5xx, 429, dropped watches) still converge', async () => {
    const remove = [
      faults.inject({ verb: 'patch', status: 503, times: 3 }),
      faults.inject({ verb: 'create', resource: 'events', status: 429, retryAfterSeconds: 0, times: 2 }),
      faults.inject({ verb: 'watch', closeWatchAfterMs: 200, times: 5 }),
      faults.inject({ verb: 'list', resource: 'configmaps', status: 500, times: 2 }),
    ];
    const watchesBefore = stack.relay.relay.counters.watches;
    const names = [uniq('fault'), uniq('fault')];
    for (const n of names) await namespace(n);
    for (const n of names) await waitReady(admin, n, 30_000);
    for (const n of names) expect(await get(admin, NETPOL(n, 'default-deny'))).toBeDefined();
    remove.forEach((r) => r());
    // Five watches were cut after 200 ms: the relay opened new ones from where it was.
    await waitFor('the relay to re-open dropped watches', async () => stack.relay.relay.counters.watches >= watchesBefore + 5);
    const reconciler = (await stack.runtime.cluster('local')).kube.metrics;
    expect(reconciler.retries).toBeGreaterThanOrEqual(5);
    expect(reconciler.byStatus['503']).toBeGreaterThanOrEqual(3);
  });

  it('a resync of a converged cluster writes nothing', async () => {
    await stack.relay.relay.resync();
    await settle();
    await writes.reset();
    await stack.relay.relay.resync();
    await settle();
    expect(await writes.detail()).toEqual([]);
    expect(await writes.count()).toEqual(writes.all(0));
    expect(stack.relay.relay.counters.resyncs).toBeGreaterThan(0);
  });

  it('the parent and objects carry the ApplySet bookkeeping kubectl understands', async () => {
    const ns = uniq('applyset');
    await namespace(ns);
    await waitReady(admin, ns);
    const parent = await get(admin, CONFIGMAP(ns, 'furnish-applyset'));
    expect(parent?.metadata.annotations?.[KEY.applySetGroupKinds]).toContain('NetworkPolicy.networking.k8s.io');
    expect(parent?.metadata.annotations?.[KEY.appliedTemplates]).toBe('security-defaults');
    expect(parent?.metadata.labels?.[KEY.applySetId]).toBe((await get(admin, NETPOL(ns, 'default-deny')))?.metadata.labels?.[KEY.applySetPartOf]);
  });
});
