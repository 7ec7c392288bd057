// Every function stopped (issue 29 item 4). `npm start`'s stack on the test cluster, registered as
// npm start registers it (the webhooks, and on a server that has them the in-tree policies), then
// stopped: the webhooks' HTTPS server closed, so the API server's calls to them fail, and every
// write of the reconcilers failing, so nothing is furnished meanwhile (the relay keeps watching).
// alice, a tenant (RBAC that lets every write below through; never system:masters), then tries
// what Furnish forbids, and the administrator (system:masters) creates and deletes a namespace.
// What must happen is the table of docs/operate/enforcement.md for the server at hand, which
// discovery decides (inTreePolicies), never its version:
// - in-tree policies (kube-apiserver 1.30+, kube-sim): each stateless rule refuses its attack by
//   its policy, the administrator's namespace is created (unmarked) and deleted, the stateful rules
//   refuse because their webhook fails closed, and mutate-pod fails open;
// - webhooks only (1.26, kube-sim with KUBE_SIM_ADMISSION_POLICIES=0): every namespace write, the
//   administrator's and the namespace controller's too, is refused by the fail-closed webhook that
//   does not answer; an ApplySet member's metadata written through its status is not judged.
// On kube-sim both variants run; on a real cluster (FURNISH_TEST_KUBECONFIG: contexts admin and
// alice; its API server must reach this host's loopback) the one it has.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startLocalStack, type LocalStack } from '../../scripts/start.ts';
import { FURNISH_INITIALIZER, INITIALIZER_KEY } from '../../shared/initializers/keys.ts';
import { KEY } from '../../shared/keys.ts';
import type { KubeClient, KubeRequest, KubeResponse } from '../../shared/kube/client.ts';
import { inTreePolicies } from '../../shared/kube/features.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { silentLogger } from '../../shared/log.ts';
import { ORGANIZATIONS_PATH } from '../../shared/org/source.ts';
import { clientFor, get, waitFor } from '../integration/helpers.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { whoAmI } from '../support/kubectl.ts';
import { organization } from '../support/organizations.ts';
import { applySetId } from '../../shared/render/applyset.ts';

const once = { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 };
const RBAC = 'rbac.authorization.k8s.io/v1';
const NAMESPACES = '/api/v1/namespaces';
const TEMPLATES = '/apis/furnish.dev/v1alpha1/namespacetemplates';
const INITIALIZATIONS = '/apis/furnish.dev/v1alpha1/namespaceinitializationconfigurations';
const LNAMESPACES = '/apis/furnish.dev/v1alpha1/lnamespaces';
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
/** The policies whose refusals this suite sees. */
const POLICIES_ATTACKED = ['furnish-namespace-marks', 'furnish-creator-immutable', 'furnish-phase-and-ready', 'furnish-guard', 'furnish-opt-out', 'furnish-initializer-keys', 'furnish-subresource-metadata', 'furnish-organization-metadata'];
/** An ApplySet member in the victim namespace, whose status alice may write. */
const QUOTA = 'down-quota';

/** On kube-sim, both servers; on a real cluster, the one it is. */
const VARIANTS: { title: string; simPolicies?: boolean }[] = process.env.FURNISH_TEST_KUBECONFIG
  ? [{ title: 'the test cluster' }]
  : [{ title: 'kube-sim, which evaluates in-tree policies', simPolicies: true }, { title: 'kube-sim without them (KUBE_SIM_ADMISSION_POLICIES=0, as 1.26)', simPolicies: false }];

/** Longer than a namespace deletion takes where the webhooks are not in its way (kube-sim and kube-apiserver: a few seconds). */
const DELETION_WAIT_MS = 15_000;

/** A refusal by Furnish's in-tree policy `name` (bound by the binding of the same name), as kube-apiserver words it. */
const byPolicy = (name: string) => `ValidatingAdmissionPolicy '${name}' with binding '${name}' denied request`;
/** A refusal because webhook `name` does not answer and fails closed. */
const unanswered = (name: string) => `failed calling webhook "${name}.furnish.dev"`;

/** The request was refused, and the refusal says `because` (an allowed request shows its status instead). */
function refused(res: KubeResponse, because: string): void {
  expect(res.ok ? `allowed (${res.status})` : res.error).toContain(because);
}

describe.each(VARIANTS.map((v, i) => [v.title, v, i] as const))('every function stopped, on %s', (_title, variant, index) => {
  const run = `${Date.now().toString(36).slice(-5)}${index}`;
  const n = {
    /** Ready, created by the admin: alice may update it (and its status). */
    victim: `down-victim-${run}`,
    /** Pending, waiting for an initializer that never finishes. */
    initializing: `down-init-${run}`,
    /** Ready, in organization ORG: alice creates Pods there. */
    orgNamespace: `down-org-${run}`,
    /** Failed: a template selects it that cannot be applied. */
    failed: `down-failed-${run}`,
    admin: `down-admin-${run}`,
    /** Ready; the administrator deletes it while the functions are down. */
    deleted: `down-deleted-${run}`,
    tenant: `down-tenant-${run}`,
    marked: `down-marked-${run}`,
    reserved: `openshift-down-${run}`,
  };
  const ORG = `down-${run}`;
  const INITIALIZER = `down-seeder-${run}`;
  const NIC = `90-down-${run}`;
  const ROLE = `furnish-down-tenant-${run}`;
  const INIT_LABEL = 'furnish-down-e2e';
  /** A template that cannot be applied (its kind has no CRD), selecting the namespace it fails. */
  const BROKEN = `down-broken-${run}`;

  let cluster: TestCluster;
  let stack: LocalStack;
  let admin: KubeClient;
  let alice: KubeClient;
  let aliceName = '';
  let adminName = '';
  /** Whether the server evaluates in-tree policies: which column of the table applies. */
  let inTree = false;
  /**
   * While true, every write of the reconcilers (the relay writes nothing) is refused, as a permanent
   * error: nothing is furnished, and nothing retries (the stack then stops at once).
   */
  let functionsDown = false;

  const send = (kube: KubeClient, req: KubeRequest) => kube.call<KubeObject>({ retry: once, ...req });
  const patchNamespace = (kube: KubeClient, name: string, body: unknown, status = false) =>
    send(kube, { method: 'PATCH', path: `${NAMESPACES}/${name}${status ? '/status' : ''}`, contentType: 'application/merge-patch+json', body });
  const createNamespace = (kube: KubeClient, name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}) =>
    send(kube, { method: 'POST', path: NAMESPACES, body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels, annotations } } });
  /** What mutate-namespace would have recorded on alice's namespace: she writes it herself. */
  const marks = () => [{ [KEY.phase]: 'pending' }, { [KEY.creator]: aliceName, [INITIALIZER_KEY.initializers]: FURNISH_INITIALIZER }] as const;
  const createConfigMap = (namespace: string) => send(alice, { method: 'POST', path: `${NAMESPACES}/${namespace}/configmaps`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'early' } } });
  const runOncePod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { restartPolicy: 'Never', containers: [{ name: 'job', image: 'busybox' }] } });
  /** A Pod create, retried while the namespace's default ServiceAccount does not exist yet (a real server refuses until then). */
  const createPod = (name: string) => waitFor(`Pod ${name} created in ${n.orgNamespace}`, async () => {
    const res = await send(alice, { method: 'POST', path: `${NAMESPACES}/${n.orgNamespace}/pods`, body: runOncePod(name) });
    if (!res.ok && /serviceaccount/i.test(res.error ?? '')) return undefined;
    return res;
  }, 30_000, 250);

  async function ok(kube: KubeClient, req: KubeRequest): Promise<KubeObject | undefined> {
    const res = await kube.call<KubeObject>(req);
    if (!res.ok) throw new Error(`${req.method} ${req.path}: ${res.status} ${res.error}`);
    return res.data;
  }

  beforeAll(async () => {
    cluster = await useTestCluster(variant.simPolicies === undefined ? {} : { admissionPolicies: variant.simPolicies });
    const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
    admin = await clientFor(cluster.kubeconfigPath, context);
    alice = await clientFor(cluster.kubeconfigPath, cluster.users.alice!.context);
    aliceName = await whoAmI(cluster.kubeconfigPath, cluster.users.alice!.context);
    adminName = await whoAmI(cluster.kubeconfigPath, cluster.users.admin!.context);
    stack = await startLocalStack({
      kubeconfigPath: cluster.kubeconfigPath, context, port: 0, relayPort: 0, webhookPort: 0, resyncSeconds: 0, log: silentLogger,
      faults: (req) => (functionsDown && req.method !== 'GET' ? { status: 403, error: 'the reconcilers are stopped (functions-down test)' } : undefined),
    });
    inTree = await inTreePolicies(admin);

    // alice's rights: a tenant's, wide enough that RBAC lets every attack below through and admission alone decides.
    const own = [n.victim, n.initializing, n.orgNamespace];
    await ok(admin, { method: 'POST', path: `/apis/${RBAC}/clusterroles`, body: { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: ROLE }, rules: [
      { apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['namespaces', 'namespaces/status'], verbs: ['update', 'patch'], resourceNames: own },
      { apiGroups: [''], resources: ['configmaps', 'pods'], verbs: ['create', 'get'] },
      { apiGroups: [''], resources: ['resourcequotas/status'], verbs: ['get', 'patch'], resourceNames: [QUOTA] },
      { apiGroups: ['furnish.dev'], resources: ['lnamespaces'], verbs: ['create'] },
    ] } });
    await ok(admin, { method: 'POST', path: `/apis/${RBAC}/clusterrolebindings`, body: { apiVersion: RBAC, kind: 'ClusterRoleBinding', metadata: { name: ROLE }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: ROLE }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: aliceName }] } });

    // While the functions answer: an organization, an initializer that never finishes, and the namespaces attacked later.
    await ok(admin, { method: 'POST', path: ORGANIZATIONS_PATH, body: organization(ORG, [{ kind: 'User', name: aliceName, default: true }], { quota: 10 }) });
    await ok(admin, { method: 'POST', path: INITIALIZATIONS, body: { apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceInitializationConfiguration', metadata: { name: NIC },
      spec: { initializers: [{ name: INITIALIZER, principals: [{ kind: 'User', name: `nobody-${run}` }], namespaces: { labelSelector: { matchLabels: { [INIT_LABEL]: run } } } }] } } });
    for (const ns of [n.victim, n.deleted]) await ok(admin, { method: 'POST', path: NAMESPACES, body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    await ok(admin, { method: 'POST', path: NAMESPACES, body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: n.orgNamespace, labels: { [KEY.organization]: ORG } } } });
    await ok(admin, { method: 'POST', path: NAMESPACES, body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: n.initializing, labels: { [INIT_LABEL]: run } } } });
    await ok(admin, { method: 'POST', path: TEMPLATES, body: { apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: BROKEN },
      spec: { namespaces: { labelSelector: { matchLabels: { [INIT_LABEL]: `broken-${run}` } } }, templates: [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }] } } });
    await ok(admin, { method: 'POST', path: NAMESPACES, body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: n.failed, labels: { [INIT_LABEL]: `broken-${run}` } } } });
    for (const ns of [n.victim, n.deleted, n.orgNamespace]) await waitFor(`namespace ${ns} ready`, async () => (await get(admin, `${NAMESPACES}/${ns}`))?.metadata.labels?.[KEY.phase] === 'ready', 60_000);
    await ok(admin, { method: 'POST', path: `${NAMESPACES}/${n.victim}/resourcequotas`, body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: QUOTA, labels: { [KEY.applySetPartOf]: applySetId(n.victim) } }, spec: { hard: { pods: '50' } } } });
    await waitFor(`namespace ${n.failed} failed`, async () => (await get(admin, `${NAMESPACES}/${n.failed}`))?.metadata.labels?.[KEY.phase] === 'failed', 60_000);
    await waitFor(`namespace ${n.initializing} waiting for ${INITIALIZER} alone`, async () => (await get(admin, `${NAMESPACES}/${n.initializing}`))?.metadata.annotations?.[INITIALIZER_KEY.initializers] === INITIALIZER, 60_000);
    // mutate-pod answers: a run-once Pod gets the default deadline.
    const served = await createPod(`up-${run}`);
    expect((served.data?.spec as { activeDeadlineSeconds?: number } | undefined)?.activeDeadlineSeconds).toBeGreaterThan(0);

    functionsDown = true;
    await stack.closeWebhookServer();
  }, 180_000);

  afterAll(async () => {
    // Removes the webhook registrations (and the policies) first: a real cluster must never keep calling functions that are gone.
    await stack?.stop();
    if (cluster && !cluster.isSimulated && admin) {
      for (const ns of Object.values(n)) await admin.call({ method: 'DELETE', path: `${NAMESPACES}/${ns}`, retry: once });
      await admin.call({ method: 'DELETE', path: `${ORGANIZATIONS_PATH}/${ORG}`, retry: once });
      await admin.call({ method: 'DELETE', path: `${INITIALIZATIONS}/${NIC}`, retry: once });
      for (const t of [`down-${run}`, BROKEN]) await admin.call({ method: 'DELETE', path: `${TEMPLATES}/${t}`, retry: once });
      await admin.call({ method: 'DELETE', path: `${LNAMESPACES}/down-lns-${run}`, retry: once });
      await admin.call({ method: 'DELETE', path: `/apis/${RBAC}/clusterrolebindings/${ROLE}`, retry: once });
      await admin.call({ method: 'DELETE', path: `/apis/${RBAC}/clusterroles/${ROLE}`, retry: once });
    }
    admin?.close();
    alice?.close();
    await cluster?.stop();
  }, 120_000);

  it('registered what the server can enforce: the policies and a fail-open mutate-namespace only where the server evaluates them', async () => {
    // kube-sim was started with or without them; a real server is what it is.
    if (variant.simPolicies !== undefined) expect(inTree).toBe(variant.simPolicies);
    expect(stack.inTreePolicies).toBe(inTree);
    const failurePolicy = async (kind: string, name: string) => ((await get(admin, `${ADMISSION}/${kind}/furnish-${name}`))?.webhooks as { failurePolicy?: string }[] | undefined)?.[0]?.failurePolicy;
    expect(await failurePolicy('mutatingwebhookconfigurations', 'mutate-namespace')).toBe(inTree ? 'Ignore' : 'Fail');
    expect(await failurePolicy('validatingwebhookconfigurations', 'validate-namespace')).toBe('Fail');
    const policies = inTree ? await ok(admin, { method: 'GET', path: `${ADMISSION}/validatingadmissionpolicies` }) as { items?: KubeObject[] } | undefined : undefined;
    expect(policies?.items?.map((p) => p.metadata.name)).toEqual(inTree ? expect.arrayContaining(POLICIES_ATTACKED) : undefined);
  });

  describe('each in-tree rule still refuses its attack', () => {
    it("alice changing the creator of a namespace: furnish-creator-immutable (webhooks only: mutate-namespace fails closed)", async () => {
      refused(await patchNamespace(alice, n.victim, { metadata: { annotations: { [KEY.creator]: aliceName } } }), inTree ? byPolicy('furnish-creator-immutable') : unanswered('mutate-namespace'));
    });

    it('alice marking a pending namespace ready, on the namespace and through namespaces/status: furnish-phase-and-ready', async () => {
      const because = inTree ? byPolicy('furnish-phase-and-ready') : unanswered('mutate-namespace');
      refused(await patchNamespace(alice, n.initializing, { metadata: { labels: { [KEY.phase]: 'ready' } } }), because);
      refused(await patchNamespace(alice, n.initializing, { metadata: { labels: { [KEY.phase]: 'ready' } } }, true), because);
    });

    it('alice forging the Ready condition through namespaces/status: furnish-phase-and-ready', async () => {
      const ready = { type: 'Ready', status: 'True', reason: 'Forged', message: 'by alice', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
      refused(await patchNamespace(alice, n.initializing, { status: { conditions: [ready] } }, true), inTree ? byPolicy('furnish-phase-and-ready') : unanswered('mutate-namespace'));
    });

    it('alice writing into a namespace that failed to be furnished: furnish-guard (webhooks only: guard-initializing fails closed)', async () => {
      refused(await createConfigMap(n.failed), inTree ? byPolicy('furnish-guard') : unanswered('guard-initializing'));
    });

    it('alice writing into a namespace whose initializers are pending: guard-initializing fails closed (it knows whose turn it is)', async () => {
      refused(await createConfigMap(n.initializing), unanswered('guard-initializing'));
    });

    it('alice opting a namespace out without verb optout: furnish-opt-out', async () => {
      refused(await patchNamespace(alice, n.victim, { metadata: { annotations: { [KEY.optOut]: 'true' } } }), inTree ? byPolicy('furnish-opt-out') : unanswered('mutate-namespace'));
    });

    it("alice removing the working initializer without verb initialize: furnish-initializer-keys", async () => {
      refused(await patchNamespace(alice, n.initializing, { metadata: { annotations: { [INITIALIZER_KEY.initializers]: null } } }), inTree ? byPolicy('furnish-initializer-keys') : unanswered('mutate-namespace'));
    });

    it('alice taking an ApplySet member out of its set through resourcequotas/status: furnish-subresource-metadata (webhooks only: not judged, as docs/operate/enforcement.md says)', async () => {
      const res = await send(alice, { method: 'PATCH', path: `${NAMESPACES}/${n.victim}/resourcequotas/${QUOTA}/status`, contentType: 'application/merge-patch+json', body: { metadata: { labels: { [KEY.applySetPartOf]: null } } } });
      if (inTree) refused(res, byPolicy('furnish-subresource-metadata'));
      else expect([res.status, res.data?.metadata.labels?.[KEY.applySetPartOf]]).toEqual([200, undefined]);
    });

    // Reserved names and the allowlist hold in-tree on a namespace that names an organization (its label);
    // on one that names none they turn on with the first Organization (state): validate-namespace alone, fail-closed.
    it('with organizations on, alice creating a reserved name in her organization, with the marks mutate-namespace would add: furnish-organization-metadata', async () => {
      const [labels, annotations] = marks();
      refused(await createNamespace(alice, n.reserved, { ...labels, [KEY.organization]: ORG }, annotations), inTree ? byPolicy('furnish-organization-metadata') : unanswered('mutate-namespace'));
    });

    it('with organizations on, alice adding a label, or only an annotation, outside the allowlist of her organization\'s namespace: furnish-organization-metadata', async () => {
      const because = inTree ? byPolicy('furnish-organization-metadata') : unanswered('mutate-namespace');
      refused(await patchNamespace(alice, n.orgNamespace, { metadata: { labels: { costcenter: 'elsewhere' } } }), because);
      refused(await patchNamespace(alice, n.orgNamespace, { metadata: { annotations: { costcenter: 'elsewhere' } } }), because);
      refused(await patchNamespace(alice, n.orgNamespace, { metadata: { annotations: { costcenter: 'elsewhere' } } }, true), because);
    });

    it('with organizations on, alice changing an allowlisted annotation of her organization\'s namespace: admitted, no function asked (webhooks only: mutate-namespace fails closed)', async () => {
      const res = await patchNamespace(alice, n.orgNamespace, { metadata: { annotations: { description: `edited while down ${run}` } } });
      if (inTree) expect([res.status, res.data?.metadata.annotations?.description]).toEqual([200, `edited while down ${run}`]);
      else refused(res, unanswered('mutate-namespace'));
    });

    it('with organizations on, alice changing metadata outside the allowlist of a namespace in no organization: validate-namespace', async () => {
      refused(await patchNamespace(alice, n.victim, { metadata: { labels: { costcenter: 'elsewhere' } } }), unanswered(inTree ? 'validate-namespace' : 'mutate-namespace'));
      refused(await patchNamespace(alice, n.victim, { metadata: { annotations: { costcenter: 'elsewhere' } } }), unanswered(inTree ? 'validate-namespace' : 'mutate-namespace'));
    });

    it('left every attacked namespace as it was', async () => {
      const victim = await get(admin, `${NAMESPACES}/${n.victim}`);
      expect(victim?.metadata.annotations?.[KEY.creator]).toBe(adminName);
      expect(victim?.metadata.annotations?.[KEY.optOut]).toBeUndefined();
      expect(victim?.metadata.labels?.costcenter).toBeUndefined();
      const inOrganization = await get(admin, `${NAMESPACES}/${n.orgNamespace}`);
      expect([inOrganization?.metadata.labels?.costcenter, inOrganization?.metadata.annotations?.costcenter]).toEqual([undefined, undefined]);
      expect(await get(admin, `${NAMESPACES}/${n.reserved}`)).toBeUndefined();
      const initializing = await get(admin, `${NAMESPACES}/${n.initializing}`);
      expect(initializing?.metadata.labels?.[KEY.phase]).toBe('pending');
      expect(initializing?.metadata.annotations?.[INITIALIZER_KEY.initializers]).toBe(INITIALIZER);
    });
  });

  describe("the administrator's namespace", () => {
    it('is created, unmarked (webhooks only: mutate-namespace fails closed)', async () => {
      const created = await createNamespace(admin, n.admin);
      if (!inTree) {
        refused(created, unanswered('mutate-namespace'));
        return;
      }
      expect(created.status).toBe(201);
      // Nobody recorded a creator or a phase: Furnish populates it when the reconcilers answer again, unguarded until then.
      expect(created.data?.metadata.annotations?.[KEY.creator]).toBeUndefined();
      expect(created.data?.metadata.labels?.[KEY.phase]).toBeUndefined();
    });
  });

  describe("the administrator's namespace deletion", () => {
    it('completes: the namespace controller\'s writes reach no webhook (webhooks only: it waits for the functions)', async () => {
      expect((await send(admin, { method: 'DELETE', path: `${NAMESPACES}/${n.deleted}` })).ok).toBe(true);
      const gone = async () => (await send(admin, { method: 'GET', path: `${NAMESPACES}/${n.deleted}` })).status === 404;
      if (inTree) {
        await waitFor(`namespace ${n.deleted} deleted`, gone, 60_000, 250);
        return;
      }
      // Its finalize and status writes go to mutate-namespace, which fails closed: it stays, terminating.
      await new Promise((r) => setTimeout(r, DELETION_WAIT_MS));
      expect(await gone()).toBe(false);
      expect((await get(admin, `${NAMESPACES}/${n.deleted}`))?.metadata.deletionTimestamp).toBeDefined();
    }, 90_000);
  });

  describe('the rules that need state fail as the table says', () => {
    it("alice's namespace: refused without the marks (furnish-namespace-marks), and with them (validate-namespace fails closed)", async () => {
      refused(await createNamespace(alice, n.tenant), inTree ? byPolicy('furnish-namespace-marks') : unanswered('mutate-namespace'));
      const [labels, annotations] = marks();
      refused(await createNamespace(alice, n.marked, labels, annotations), inTree ? unanswered('validate-namespace') : unanswered('mutate-namespace'));
    });

    it('a NamespaceTemplate write: validate-template fails closed', async () => {
      const template = { apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: `down-${run}` }, spec: { namespaces: { labelSelector: { matchLabels: { [INIT_LABEL]: run } } }, templates: [] } };
      refused(await send(admin, { method: 'POST', path: TEMPLATES, body: template }), unanswered('validate-template'));
    });

    it('an Organization write: validate-organization fails closed', async () => {
      refused(await send(admin, { method: 'PATCH', path: `${ORGANIZATIONS_PATH}/${ORG}`, contentType: 'application/merge-patch+json', body: { spec: { namespaceQuota: 11 } } }), unanswered('validate-organization'));
    });

    it("alice's LNamespace: mutate-lnamespace fails closed", async () => {
      refused(await send(alice, { method: 'POST', path: LNAMESPACES, body: { apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', metadata: { name: `down-lns-${run}` } } }), unanswered('mutate-lnamespace'));
    });

    it("alice's run-once Pod in an organization namespace: admitted without the default deadline (mutate-pod fails open)", async () => {
      const res = await createPod(`down-${run}`);
      expect(res.status).toBe(201);
      expect((res.data?.spec as { activeDeadlineSeconds?: number } | undefined)?.activeDeadlineSeconds).toBeUndefined();
    });
  });
});
