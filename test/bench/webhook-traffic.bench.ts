// `npm run bench -- webhook-traffic`: how many admission requests no longer leave the cluster with
// the webhooks' matchConditions (issue 29, item 2). The population bench's traffic at a modest size
// (a NamespaceTemplate written, BENCH_NAMESPACES namespaces (default 30) created by a tenant and
// furnished, then a template fan-out: its quota `pods` 50 → 60 reaching every one), run twice
// against the same cluster by `npm start`'s stack (every component under its deployed identity):
//   baseline          the webhook-only registrations (no policies, no matchConditions: as on 1.26)
//   matchConditions   the in-tree variant `furnish install` writes (policies, matchConditions)
// The AdmissionReviews the functions received are counted per webhook by their own metrics
// (furnish_admission_decisions_total), each phase's difference; a `ROW` per webhook gives both
// counts and the share of the baseline's requests kept in the cluster. Organizations off, as the
// functions' default (the population bench's settings).
// Needs a server that evaluates matchConditions: kube-sim (in a process of its own, by default) or
// a real one, FURNISH_TEST_KUBECONFIG (a kubeconfig with contexts admin and alice), 1.30+.
import { startLocalStack, type LocalStack } from '../../scripts/start.ts';
import { connect, createKubeClient, type KubeClient } from '../../shared/kube/client.ts';
import { inTreePolicies } from '../../shared/kube/features.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { KEY, PHASE } from '../../shared/keys.ts';
import { jsonLogger, silentLogger } from '../../shared/log.ts';
import { mapLimit } from '../../shared/reconcile/concurrency.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import { webhookMetrics } from '../../shared/webhooks/observe.ts';
import { startKubeSimProcess } from './kube-sim-process.ts';

const EXTERNAL = process.env.FURNISH_TEST_KUBECONFIG;
const N = Number(process.env.BENCH_NAMESPACES ?? 30);
const CONCURRENCY = 8;
const RUN = Date.now().toString(36).slice(-5);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 180_000);
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const TEMPLATES = '/apis/furnish.dev/v1alpha1/namespacetemplates';
// The webhook functions read their log level from the process: one line per decision only with BENCH_LOG=INFO.
process.env.FURNISH_LOG_LEVEL = process.env.BENCH_LOG === 'INFO' ? 'INFO' : 'WARNING';

/** The population bench's template (test/bench/population.bench.ts), selecting this phase's namespaces. */
const template = (phase: string, pods: string): NamespaceTemplate => ({
  apiVersion: 'furnish.dev/v1alpha1',
  kind: 'NamespaceTemplate',
  metadata: { name: `traffic-${RUN}-${phase}` },
  spec: {
    namespaces: { labelSelector: { matchLabels: { 'bench-traffic': `${RUN}-${phase}` } } },
    templates: [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { owner: '$(CREATOR)' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'contacts' }, data: { team: '$(NAMESPACE)' } },
      { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'default-deny' }, spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] } },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'namespace-admin' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: '$(CREATOR)' }], roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' } },
      { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'default-quota' }, spec: { hard: { pods, 'requests.cpu': '1000m' } } },
    ],
  },
});

/** AdmissionReviews each function has decided so far, by webhook (the functions' own counter). */
function reviewsByWebhook(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of webhookMetrics.text().split('\n')) {
    const m = /^furnish_admission_decisions_total\{(.*)\} (\d+(?:\.\d+)?)$/.exec(line);
    const webhook = m && /webhook="([^"]+)"/.exec(m[1]!)?.[1];
    if (webhook) counts.set(webhook, (counts.get(webhook) ?? 0) + Number(m[2]));
  }
  return counts;
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + TIMEOUT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${TIMEOUT_MS} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function count(kube: KubeClient, path: string, labelSelector: string, pred: (o: KubeObject) => boolean): Promise<number> {
  const r = await kube.call<{ items: KubeObject[] }>({ method: 'GET', path, query: { labelSelector } });
  if (!r.ok) throw new Error(`list ${path}: ${r.status} ${r.error}`);
  return r.data!.items.filter(pred).length;
}

async function applyTemplate(admin: KubeClient, t: NamespaceTemplate): Promise<void> {
  const r = await admin.call({ method: 'PATCH', path: `${TEMPLATES}/${t.metadata.name}`, query: { fieldManager: 'bench', force: true }, contentType: 'application/apply-patch+yaml', body: t });
  if (!r.ok) throw new Error(`apply template: ${r.status} ${r.error}`);
}

/** The traffic: a template, N namespaces created by alice and furnished, a fan-out to all of them. */
async function traffic(admin: KubeClient, alice: KubeClient, phase: string): Promise<string[]> {
  const selector = `bench-traffic=${RUN}-${phase}`;
  await applyTemplate(admin, template(phase, '50'));
  const names = Array.from({ length: N }, (_, i) => `traffic-${RUN}-${phase}-${i}`);
  await mapLimit(names, CONCURRENCY, async (name) => {
    const r = await alice.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'bench-traffic': `${RUN}-${phase}` } } } });
    if (!r.ok) throw new Error(`create ${name} as alice: ${r.status} ${r.error}`);
  });
  await until(`${phase}: every namespace ready`, async () => (await count(admin, '/api/v1/namespaces', selector, (o) => o.metadata.labels?.[KEY.phase] === PHASE.ready)) === N);
  await applyTemplate(admin, template(phase, '60'));
  await until(`${phase}: the fan-out in every namespace`, async () => {
    let done = 0;
    await mapLimit(names, CONCURRENCY, async (ns) => {
      const q = await admin.call<{ spec: { hard: Record<string, string> } }>({ method: 'GET', path: `/api/v1/namespaces/${ns}/resourcequotas/default-quota` });
      if (q.data?.spec.hard.pods === '60') done += 1;
    });
    return done === N;
  });
  return names;
}

interface Measured {
  reviews: Map<string, number>;
  seconds: number;
  inTree: boolean;
}

/** One phase: a fresh stack with this variant, the traffic, the reviews the functions received meanwhile. */
async function measure(kubeconfigPath: string, phase: string, inTree: boolean, admin: KubeClient, alice: KubeClient, cleanup: string[]): Promise<Measured> {
  const log = process.env.BENCH_LOG ? jsonLogger('furnish-local', (l) => process.stderr.write(l), 'WARNING') : silentLogger;
  const stack: LocalStack = await startLocalStack({ kubeconfigPath, context: 'admin', log, port: 0, relayPort: 0, webhookPort: 0, inTreePolicies: inTree, env: { FURNISH_ORGANIZATIONS: 'false' } });
  try {
    if (stack.inTreePolicies !== inTree) throw new Error(`${phase}: the stack registered the ${stack.inTreePolicies ? 'in-tree' : 'webhook-only'} variant`);
    const before = reviewsByWebhook();
    const t0 = performance.now();
    cleanup.push(...await traffic(admin, alice, phase));
    const seconds = (performance.now() - t0) / 1000;
    const after = reviewsByWebhook();
    return { reviews: new Map([...after].map(([w, n]) => [w, n - (before.get(w) ?? 0)])), seconds, inTree: stack.inTreePolicies };
  } finally {
    await stack.stop();
  }
}

const pct = (kept: number, of: number) => (of === 0 ? 'n/a' : `${((100 * kept) / of).toFixed(1)}%`);

async function main(): Promise<void> {
  const sim = EXTERNAL ? undefined : await startKubeSimProcess();
  const kubeconfigPath = EXTERNAL ?? sim!.kubeconfigPath;
  const admin = createKubeClient(await connect({ kubeconfigPath, context: 'admin' }));
  const alice = createKubeClient(await connect({ kubeconfigPath, context: 'alice' }));
  const cleanup: string[] = [];
  try {
    if (!(await inTreePolicies(admin))) throw new Error('this server evaluates no ValidatingAdmissionPolicies nor matchConditions (1.30+, or kube-sim without KUBE_SIM_ADMISSION_POLICIES=0): nothing to measure');
    // alice, a tenant: may create namespaces (and what `admin` of her own namespaces gives her).
    await admin.call({ method: 'POST', path: `${RBAC}/clusterroles`, body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `traffic-${RUN}` }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'get', 'list'] }] } });
    await admin.call({ method: 'POST', path: `${RBAC}/clusterrolebindings`, body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: `traffic-${RUN}` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `traffic-${RUN}` }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }] } });
    const baseline = await measure(kubeconfigPath, 'baseline', false, admin, alice, cleanup);
    const conditions = await measure(kubeconfigPath, 'conditions', true, admin, alice, cleanup);
    console.log(`\n-- ${N} namespaces created by a tenant and furnished (5 objects each), then a template fan-out; ${EXTERNAL ? 'FURNISH_TEST_KUBECONFIG' : 'kube-sim in its own process'}`);
    console.log(`traffic took ${baseline.seconds.toFixed(1)} s (webhook-only) and ${conditions.seconds.toFixed(1)} s (in-tree variant)`);
    const webhooks = [...new Set([...baseline.reviews.keys(), ...conditions.reviews.keys()])].sort();
    let all = 0;
    let sent = 0;
    for (const w of webhooks) {
      const b = baseline.reviews.get(w) ?? 0;
      const c = conditions.reviews.get(w) ?? 0;
      all += b;
      sent += c;
      console.log(`ROW ${w}: ${c} AdmissionReviews with matchConditions; baseline (no matchConditions) ${b}; kept in the cluster ${pct(b - c, b)}`);
    }
    console.log(`ROW all webhooks: ${sent} AdmissionReviews with matchConditions; baseline ${all}; kept in the cluster ${pct(all - sent, all)}`);
  } finally {
    await mapLimit(cleanup, CONCURRENCY, (ns) => admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }));
    for (const phase of ['baseline', 'conditions']) await admin.call({ method: 'DELETE', path: `${TEMPLATES}/traffic-${RUN}-${phase}` });
    await admin.call({ method: 'DELETE', path: `${RBAC}/clusterrolebindings/traffic-${RUN}` });
    await admin.call({ method: 'DELETE', path: `${RBAC}/clusterroles/traffic-${RUN}` });
    admin.close();
    alice.close();
    await sim?.stop();
  }
}

await main();
