// Admission webhooks as kube-apiserver calls them, checked against the AdmissionReviews a real
// kube-apiserver 1.26 sent (test/fixtures/kube-apiserver-1.26/admission).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';
import { createCertificateAuthority } from '../support/kube-sim/pki.ts';
import { admissionFixture, call, CONFIGMAP, webhookServer, type WebhookServer } from './helpers.ts';

let cluster: SimCluster;
let hooks: WebhookServer;
/** /hold refuses until released: a webhook that holds a namespace's content, as protect-objects may. */
let holding = true;
const NS = '/api/v1/namespaces';
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';

function webhook(name: string, path: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name, admissionReviewVersions: ['v1'], sideEffects: 'None', timeoutSeconds: 5, failurePolicy: 'Fail',
    clientConfig: { url: `${hooks.url}${path}`, caBundle: Buffer.from(cluster.caPem).toString('base64') },
    rules: [{ operations: ['CREATE', 'UPDATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], scope: '*' }],
    ...extra,
  };
}

async function register(url: string, kind: string, name: string, webhooks: unknown[]): Promise<void> {
  const reply = await call(cluster, 'POST', url, { body: { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name }, webhooks } });
  expect(reply.status).toBe(201);
}

const patchOf = (ops: unknown[]): Record<string, unknown> => ({ allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') });

beforeAll(async () => {
  // A policy in force as soon as it is written: these cases are about which writes admission sees,
  // not how soon a policy takes effect (start-policies.test.ts waits that out as on a real server).
  cluster = await startCluster({ namespaceDefaultObjects: false, policyRefreshIntervalMs: 0 });
  cluster.sim.seed({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'namespace-creator' },
    rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'get', 'patch', 'update'] }] });
  cluster.sim.seed({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'dev-namespace-creator' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'namespace-creator' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'dev' }] });
  hooks = await webhookServer(cluster, (review, path) => {
    const req = review.request;
    if (path === '/mutate' && req.operation === 'CREATE') return patchOf([{ op: 'add', path: '/metadata/annotations', value: { 'furnish.dev/creator': req.userInfo.username } }]);
    if (path === '/validate' && req.object?.metadata?.annotations?.refuse === 'yes') return { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'annotation refuse=yes is refused' } };
    if (path === '/validate' && String(req.name).startsWith('deny-')) return { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'names starting with deny- are refused' } };
    if (path === '/guard') return { allowed: false, status: { message: 'guarded' } };
    if (path === '/slow') return new Promise((resolve) => setTimeout(() => resolve({ allowed: true }), 1500));
    if (path === '/hold' && holding) return { allowed: false, status: { code: 403, message: 'held' } };
    return { allowed: true, warnings: path === '/validate' ? ['looked at it'] : [] };
  });
  await register(MWC, 'MutatingWebhookConfiguration', 'furnish-mutate', [webhook('mutate.furnish.dev', '/mutate')]);
  await register(VWC, 'ValidatingWebhookConfiguration', 'furnish-validate', [webhook('validate.furnish.dev', '/validate')]);
  await register(VWC, 'ValidatingWebhookConfiguration', 'furnish-guard', [webhook('guard.furnish.dev', '/guard', {
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: 'Namespaced' }],
    namespaceSelector: { matchLabels: { capture: 'yes' } },
    objectSelector: { matchExpressions: [{ key: 'unguarded', operator: 'DoesNotExist' }] },
  })]);
});
afterAll(async () => {
  await cluster.stop();
  await hooks.close();
});
beforeEach(() => {
  hooks.reviews.length = 0;
});

describe('calling webhooks', () => {
  it('calls mutating then validating webhooks with the reviews kube-apiserver sends', async () => {
    const reply = await call(cluster, 'POST', `${NS}?fieldManager=kubectl-create&fieldValidation=Strict`, {
      user: 'alice', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.metadata.annotations).toEqual({ 'furnish.dev/creator': 'alice' });
    expect(reply.headers.warning).toBe('299 - "looked at it"');
    expect(hooks.reviews.map((r) => r.path)).toEqual(['/mutate?timeout=5s', '/validate?timeout=5s']);

    const [mutate, validate] = hooks.reviews;
    const real = admissionFixture('024-mutate-CREATE-namespaces-team-c-alice.json');
    expect(Object.keys(mutate!.review.request).sort()).toEqual(Object.keys(real.review.request).sort());
    expect(mutate!.review.request).toMatchObject({
      kind: real.review.request.kind, resource: real.review.request.resource, operation: 'CREATE', name: 'team-a', namespace: 'team-a',
      userInfo: { username: 'alice', uid: 'alice-uid', groups: ['dev', 'system:authenticated'] }, oldObject: null, dryRun: false,
      options: real.review.request.options,
    });
    expect(mutate!.review.request.object.metadata.creationTimestamp).toBeNull();
    expect(mutate!.review.request.object.metadata.uid).toBeUndefined();
    expect(mutate!.review.request.object.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'team-a' });
    expect(mutate!.review.request.object.metadata.managedFields).toEqual([expect.objectContaining({ manager: 'kubectl-create', fieldsV1: real.review.request.object.metadata.managedFields[0].fieldsV1 })]);
    expect(validate!.review.request.object.metadata.uid).toEqual(expect.any(String));
    expect(validate!.review.request.object.spec).toEqual({ finalizers: ['kubernetes'] });
    for (const header of ['user-agent', 'accept', 'content-type']) expect(mutate!.headers[header]).toBe(real.headers[header]);
  });

  it('returns denials the way kubectl shows them', async () => {
    const reply = await call(cluster, 'POST', NS, { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'deny-me' } } });
    expect(reply.status).toBe(403);
    expect(reply.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Forbidden', code: 403,
      message: 'admission webhook "validate.furnish.dev" denied the request: names starting with deny- are refused' });
  });

  it('sends UPDATE with oldObject and DELETE with a null object', async () => {
    await call(cluster, 'PATCH', `${NS}/team-a?fieldManager=kubectl-label`, { user: 'alice', contentType: 'application/merge-patch+json', body: { metadata: { labels: { team: 'blue' } } } });
    const update = hooks.reviews.find((r) => r.path.startsWith('/validate'))!.review.request;
    expect(update.operation).toBe('UPDATE');
    expect(update.oldObject.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'team-a' });
    expect(update.object.metadata.labels.team).toBe('blue');
    expect(update.options).toEqual({ kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'kubectl-label' });
    hooks.reviews.length = 0;
    await call(cluster, 'POST', NS, { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'short-lived' } } });
    hooks.reviews.length = 0;
    expect((await call(cluster, 'DELETE', `${NS}/short-lived`)).status).toBe(200);
    const remove = hooks.reviews.find((r) => r.path.startsWith('/validate'))!.review.request;
    expect(remove).toMatchObject({ operation: 'DELETE', object: null, oldObject: { metadata: { name: 'short-lived' } }, options: { kind: 'DeleteOptions' } });
  });

  // kube-sim's apply pruned the fields its manager no longer applies from the stored object itself:
  // webhooks saw an oldObject without them (protect-objects let a tenant's apply as manager
  // `furnish` take an object out of Furnish's ApplySet), and a refused apply still removed them.
  it('an apply that drops fields its manager alone owned: oldObject as stored, and a refusal leaves it stored as it was', async () => {
    const apply = (metadata: Record<string, unknown>) => call(cluster, 'PATCH', `${NS}/applied?fieldManager=labeller`, { contentType: 'application/apply-patch+yaml', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'applied', ...metadata } } });
    expect((await apply({ labels: { drop: '1' } })).status).toBe(201);
    hooks.reviews.length = 0;
    expect((await apply({})).status).toBe(200);
    const review = hooks.reviews.find((r) => r.path.startsWith('/validate'))!.review.request;
    expect(review.oldObject.metadata.labels.drop).toBe('1');
    expect(review.object.metadata.labels.drop).toBeUndefined();
    expect((await apply({ labels: { drop: '1' } })).status).toBe(200);
    expect((await apply({ annotations: { refuse: 'yes' } })).status).toBe(403);
    const stored = (await call(cluster, 'GET', `${NS}/applied`)).body as { metadata: { labels: Record<string, string>; annotations?: Record<string, string> } };
    expect(stored.metadata.labels.drop).toBe('1');
    expect(stored.metadata.annotations?.refuse).toBeUndefined();
  });

  it('passes dryRun and refuses webhooks with side effects on dry runs', async () => {
    await call(cluster, 'POST', `${NS}?dryRun=All`, { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dry-one' } } });
    expect(hooks.reviews[0]!.review.request).toMatchObject({ dryRun: true, options: { dryRun: ['All'] } });
    await register(MWC, 'MutatingWebhookConfiguration', 'side-effects', [webhook('side.furnish.dev', '/allow', { sideEffects: 'Unknown' })]);
    const reply = await call(cluster, 'POST', `${NS}?dryRun=All`, { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dry-two' } } });
    expect([reply.status, reply.body.message]).toEqual([400, 'admission webhook "side.furnish.dev" does not support dry run']);
    await call(cluster, 'DELETE', `${MWC}/side-effects`);
  });
});

describe('namespace deletion, as the namespace controller does it (fixture 039)', () => {
  it('empties the namespace through admission: a collection DELETE without a name, the object in oldObject; a refusal holds the namespace until allowed', async () => {
    await register(VWC, 'ValidatingWebhookConfiguration', 'hold', [webhook('hold.furnish.dev', '/hold', {
      rules: [{ operations: ['UPDATE', 'DELETE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Namespaced' }],
      objectSelector: { matchExpressions: [{ key: 'furnish.dev/template', operator: 'Exists' }] },
    })]);
    try {
      await call(cluster, 'POST', NS, { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } } });
      const labelled = { ...CONFIGMAP('kept', 'doomed'), metadata: { name: 'kept', labels: { 'furnish.dev/template': 't' } } };
      expect((await call(cluster, 'POST', `${NS}/doomed/configmaps`, { body: labelled })).status).toBe(201);
      expect((await call(cluster, 'POST', `${NS}/doomed/configmaps`, { body: CONFIGMAP('plain', 'doomed') })).status).toBe(201);
      hooks.reviews.length = 0;
      expect((await call(cluster, 'DELETE', `${NS}/doomed`)).status).toBe(200);
      const held = async () => {
        for (let i = 0; i < 100 && !hooks.reviews.some((r) => r.path.startsWith('/hold')); i++) await new Promise((r) => setTimeout(r, 20));
        return hooks.reviews.find((r) => r.path.startsWith('/hold'))?.review.request;
      };
      const seen = await held();
      const real = admissionFixture('039-protect-DELETE-networkpolicies-default-deny-system_serviceaccount_kube_system_namespace_controller.json').review.request;
      expect(real.name).toBeUndefined();
      expect(seen).toMatchObject({ operation: real.operation, namespace: 'doomed', object: null, oldObject: { metadata: { name: 'kept', labels: { 'furnish.dev/template': 't' } } }, options: real.options });
      expect(seen.name).toBeUndefined();
      expect({ username: seen.userInfo.username, groups: seen.userInfo.groups }).toEqual({ username: real.userInfo.username, groups: real.userInfo.groups });
      // Held: the refused object stays, so does the namespace, Terminating (kube-apiserver's single
      // deletecollection worker stops at the first refusal; the controller tries again).
      await new Promise((r) => setTimeout(r, 300));
      expect((await call(cluster, 'GET', `${NS}/doomed/configmaps/kept`)).status).toBe(200);
      expect((await call(cluster, 'GET', `${NS}/doomed`)).body.status.phase).toBe('Terminating');
      holding = false;
      for (let i = 0; i < 100 && (await call(cluster, 'GET', `${NS}/doomed`)).status !== 404; i++) await new Promise((r) => setTimeout(r, 20));
      expect((await call(cluster, 'GET', `${NS}/doomed`)).status).toBe(404);
      expect((await call(cluster, 'GET', `${NS}/doomed/configmaps/plain`)).status).toBe(404);
    } finally {
      holding = false;
      await call(cluster, 'DELETE', `${VWC}/hold`);
    }
  });
});

describe("the namespace controller's own writes (namespaces/status, namespaces/finalize), as on kube-apiserver 1.26.3 and 1.32.0-rc.0", () => {
  const CONTROLLER = { username: 'system:serviceaccount:kube-system:namespace-controller', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'] };
  const ownWrites = () => hooks.reviews.filter((r) => r.path.startsWith('/hold')).map((r) => r.review.request);
  const gone = async (name: string): Promise<boolean> => {
    for (let i = 0; i < 200 && (await call(cluster, 'GET', `${NS}/${name}`)).status !== 404; i++) await new Promise((r) => setTimeout(r, 50));
    return (await call(cluster, 'GET', `${NS}/${name}`)).status === 404;
  };

  it('a webhook refusing them holds the emptied namespace Terminating; the controller tries again, and once admitted the namespace goes', async () => {
    await register(VWC, 'ValidatingWebhookConfiguration', 'hold-finalize', [webhook('hold-finalize.furnish.dev', '/hold', {
      rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces/finalize', 'namespaces/status'], scope: '*' }],
      objectSelector: { matchLabels: { hold: 'finalize' } },
    })]);
    holding = true;
    try {
      await call(cluster, 'POST', NS, { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'finalize-held', labels: { hold: 'finalize' } } } });
      expect((await call(cluster, 'POST', `${NS}/finalize-held/configmaps`, { body: CONFIGMAP('inside', 'finalize-held') })).status).toBe(201);
      hooks.reviews.length = 0;
      expect((await call(cluster, 'DELETE', `${NS}/finalize-held`)).status).toBe(200);
      for (let i = 0; i < 200 && ownWrites().filter((r) => r.subResource === 'finalize').length < 3; i++) await new Promise((r) => setTimeout(r, 20));

      // Each pass: the deletion conditions through namespaces/status (its refusal only logged), then namespaces/finalize.
      const [status, finalize] = ownWrites();
      expect(status).toMatchObject({ operation: 'UPDATE', subResource: 'status', name: 'finalize-held', resource: { group: '', version: 'v1', resource: 'namespaces' },
        userInfo: CONTROLLER, object: { status: { phase: 'Terminating', conditions: [{ type: 'NamespaceDeletionDiscoveryFailure', status: 'False' }, {}, {}, {}, { type: 'NamespaceFinalizersRemaining' }] } } });
      expect(finalize).toMatchObject({ operation: 'UPDATE', subResource: 'finalize', name: 'finalize-held', userInfo: CONTROLLER,
        object: { spec: { finalizers: [] } }, oldObject: { spec: { finalizers: ['kubernetes'] } } });
      expect(ownWrites().filter((r) => r.subResource === 'finalize').length).toBeGreaterThanOrEqual(3);
      expect((await call(cluster, 'GET', `${NS}/finalize-held/configmaps/inside`)).status).toBe(404);
      const held = (await call(cluster, 'GET', `${NS}/finalize-held`)).body;
      expect([held.status.phase, held.spec]).toEqual(['Terminating', { finalizers: ['kubernetes'] }]);

      holding = false;
      expect(await gone('finalize-held')).toBe(true);
    } finally {
      holding = false;
      await call(cluster, 'DELETE', `${VWC}/hold-finalize`);
    }
  });

  it('a ValidatingAdmissionPolicy refusing namespaces/finalize holds it too, until its binding goes', async () => {
    const VAP = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
    const VAPB = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';
    expect((await call(cluster, 'POST', VAP, { body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: 'hold-finalize' }, spec: {
      matchConstraints: { resourceRules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces/finalize'] }], objectSelector: { matchLabels: { hold: 'policy' } } },
      validations: [{ expression: `request.userInfo.username != '${CONTROLLER.username}'`, message: 'held' }],
    } } })).status).toBe(201);
    expect((await call(cluster, 'POST', VAPB, { body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'hold-finalize' },
      spec: { policyName: 'hold-finalize', validationActions: ['Deny'] } } })).status).toBe(201);
    try {
      await call(cluster, 'POST', NS, { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'policy-held', labels: { hold: 'policy' } } } });
      expect((await call(cluster, 'DELETE', `${NS}/policy-held`)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 500));
      const held = (await call(cluster, 'GET', `${NS}/policy-held`)).body;
      expect([held.status.phase, held.spec]).toEqual(['Terminating', { finalizers: ['kubernetes'] }]);
      expect(held.status.conditions).toContainEqual(expect.objectContaining({ type: 'NamespaceContentRemaining', status: 'False', reason: 'ContentRemoved' }));
      expect((await call(cluster, 'DELETE', `${VAPB}/hold-finalize`)).status).toBe(200);
      expect(await gone('policy-held')).toBe(true);
    } finally {
      await call(cluster, 'DELETE', `${VAPB}/hold-finalize`);
      await call(cluster, 'DELETE', `${VAP}/hold-finalize`);
    }
  });
});

describe('matching', () => {
  beforeAll(async () => {
    await call(cluster, 'POST', NS, { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'captured', labels: { capture: 'yes' } } } });
    await call(cluster, 'POST', NS, { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'free' } } });
  });

  it('honours namespaceSelector and objectSelector; a denial without code is a 400', async () => {
    const denied = await call(cluster, 'POST', `${NS}/captured/configmaps`, { body: CONFIGMAP('x', 'captured') });
    expect([denied.status, denied.body.message]).toEqual([400, 'admission webhook "guard.furnish.dev" denied the request: guarded']);
    expect((await call(cluster, 'POST', `${NS}/free/configmaps`, { body: CONFIGMAP('x', 'free') })).status).toBe(201);
    const unguarded = { ...CONFIGMAP('y', 'captured'), metadata: { name: 'y', labels: { unguarded: 'true' } } };
    expect((await call(cluster, 'POST', `${NS}/captured/configmaps`, { body: unguarded })).status).toBe(201);
  });
});

describe('failures', () => {
  const failing = async (name: string, extra: Record<string, unknown>, path = '/allow'): Promise<Awaited<ReturnType<typeof call>>> => {
    await register(VWC, 'ValidatingWebhookConfiguration', name, [webhook(`${name}.furnish.dev`, path, {
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }], ...extra,
    })]);
    try {
      return await call(cluster, 'POST', `${NS}/free/configmaps`, { body: CONFIGMAP(`cm-${name}`, 'free') });
    } finally {
      await call(cluster, 'DELETE', `${VWC}/${name}`);
    }
  };

  it('fails closed on an unreachable webhook with failurePolicy Fail, open with Ignore', async () => {
    const closed = await failing('down', { clientConfig: { url: 'https://127.0.0.1:1/x' } });
    expect([closed.status, closed.body.reason]).toEqual([500, 'InternalError']);
    expect(closed.body.message).toMatch(/^Internal error occurred: failed calling webhook "down.furnish.dev": failed to call webhook: Post "https:\/\/127\.0\.0\.1:1\/x\?timeout=5s": /);
    const open = await failing('ignored', { clientConfig: { url: 'https://127.0.0.1:1/x' }, failurePolicy: 'Ignore' });
    expect(open.status).toBe(201);
  });

  it('verifies the webhook certificate against caBundle', async () => {
    const other = Buffer.from(createCertificateAuthority('someone-else').certPem).toString('base64');
    const reply = await failing('untrusted', { clientConfig: { url: `${hooks.url}/allow`, caBundle: other } });
    expect(reply.status).toBe(500);
  });

  it('gives up after timeoutSeconds', async () => {
    const reply = await failing('slow', { timeoutSeconds: 1 }, '/slow');
    expect(reply.status).toBe(500);
    expect(reply.body.message).toMatch(/context deadline exceeded/);
  });
});
