// Match and render 10,000 namespaces against 20 templates of 10 objects each, per namespace,
// beside a baseline measured in the same run: a plain structuredClone of the objects of the
// templates that namespace matches (the least any renderer must do).
//
// Run: npm run bench -- render
import { KEY } from '../../shared/keys.ts';
import type { KubeObject, LabelSelector, StringMap } from '../../shared/kube/types.ts';
import { matchTemplates } from '../../shared/render/match.ts';
import { renderNamespace } from '../../shared/render/render.ts';
import type { NamespaceInfo, NamespaceTemplate, RenderContext } from '../../shared/render/types.ts';
import { validateTemplate } from '../../shared/render/validate.ts';

const NAMESPACES = 10_000;
const TEMPLATES = 20;
const OBJECTS_PER_TEMPLATE = 10;
const WARMUP = 1_000;

/** Deterministic inputs (mulberry32), so two runs measure the same work. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(42);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** Ten objects of the kinds templates really hold, with tokens where platform teams put them. */
function objectsFor(t: number): KubeObject[] {
  const labels = { 'app.kubernetes.io/managed-by': 'platform', 'example.com/template-index': String(t) };
  const meta = (name: string) => ({ name: `t${t}-${name}`, labels });
  return [
    { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: meta('deny'), spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] } },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: meta('dns'),
      spec: {
        podSelector: {},
        policyTypes: ['Egress'],
        egress: [{ to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }], ports: [{ protocol: 'UDP', port: 53 }, { protocol: 'TCP', port: 53 }] }],
      },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta('admin'),
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: '$(CREATOR)' }],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta('reader'),
      rules: [{ apiGroups: [''], resources: ['configmaps', 'secrets', 'services'], verbs: ['get', 'list', 'watch'] }],
    },
    { apiVersion: 'v1', kind: 'ResourceQuota', metadata: meta('quota'), spec: { hard: { 'requests.cpu': '8', 'requests.memory': '16Gi', pods: '50', 'services.loadbalancers': '0' } } },
    {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: meta('limits'),
      spec: { limits: [{ type: 'Container', default: { cpu: '500m', memory: '512Mi' }, defaultRequest: { cpu: '100m', memory: '128Mi' } }] },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { ...meta('deployer'), annotations: { 'example.com/owner': '$(CREATOR)' } } },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { ...meta('settings'), labels: { ...labels, organization: '$(ORGANIZATION)' } },
      data: { owner: '$(CREATOR)', namespace: '$(NAMESPACE)', organization: '$(ORGANIZATION)', 'log-level': 'info', 'feature-flags': 'a=true,b=false,c=true' },
    },
    { apiVersion: 'v1', kind: 'Secret', metadata: meta('registry'), type: 'Opaque', stringData: { registry: 'registry.example.com/$(ORGANIZATION)/$(NAMESPACE)' } },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta('metrics'),
      spec: { selector: { app: 'metrics' }, ports: [{ name: 'http', port: 9090, targetPort: 9090, protocol: 'TCP' }] },
    },
  ].slice(0, OBJECTS_PER_TEMPLATE);
}

const SELECTORS: LabelSelector[] = [
  {},
  { matchLabels: { env: 'prod' } },
  { matchLabels: { env: 'staging' } },
  { matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'api'] }] },
  { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['dev'] }] },
  { matchExpressions: [{ key: KEY.organization, operator: 'Exists' }] },
  { matchExpressions: [{ key: 'legacy', operator: 'DoesNotExist' }] },
  { matchLabels: { 'cost-center': 'cc-1' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['batch'] }] },
  { matchLabels: { env: 'prod', tier: 'data' } },
  { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'staging'] }, { key: 'legacy', operator: 'DoesNotExist' }] },
];

function templates(): NamespaceTemplate[] {
  return Array.from({ length: TEMPLATES }, (_, t) => {
    const annotations: StringMap = {};
    if (t === 7) annotations[KEY.apply] = 'disable';
    if (t === 13 || t === 17) annotations[KEY.requirePermission] = 'true';
    return {
      apiVersion: 'furnish.dev/v1alpha1',
      kind: 'NamespaceTemplate',
      metadata: { name: `tpl-${String(t).padStart(2, '0')}`, annotations },
      spec: { namespaces: { labelSelector: SELECTORS[t % SELECTORS.length]! }, templates: objectsFor(t), deletionPolicy: 'Delete', mode: 'Enforce' },
    };
  });
}

function namespaces(): NamespaceInfo[] {
  return Array.from({ length: NAMESPACES }, (_, i) => {
    const name = `${pick(['team', 'svc', 'proj', 'sandbox'])}-${i}`;
    const labels: StringMap = {
      'kubernetes.io/metadata.name': name,
      env: pick(['prod', 'prod', 'staging', 'dev']),
      tier: pick(['web', 'api', 'data', 'batch']),
      'cost-center': pick(['cc-1', 'cc-2', 'cc-3']),
      team: `team-${i % 97}`,
      [KEY.phase]: 'pending',
    };
    if (random() < 0.8) labels[KEY.organization] = `org-${i % 13}`;
    if (random() < 0.1) labels.legacy = 'true';
    const annotations: StringMap = { [KEY.creator]: `user${i % 501}@example.com` };
    if (random() < 0.01) annotations[KEY.optOut] = 'true';
    return { name, labels, annotations };
  });
}

function contextOf(ns: NamespaceInfo): RenderContext {
  return { namespace: ns.name, creator: ns.annotations[KEY.creator]!, organization: ns.labels[KEY.organization] ?? '' };
}

interface Stats {
  mean: number;
  p50: number;
  p99: number;
}

function stats(samples: Float64Array): Stats {
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { mean: samples.reduce((a, b) => a + b, 0) / samples.length, p50: at(0.5), p99: at(0.99) };
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const us = (ms: number) => (ms * 1000).toFixed(1).padStart(8);
let sink = 0;

/** Times `work` once per namespace, after a warm-up on the first WARMUP namespaces. */
function measure(nss: readonly NamespaceInfo[], work: (ns: NamespaceInfo, i: number) => number): Float64Array {
  for (let i = 0; i < WARMUP; i++) sink += work(nss[i]!, i);
  gc();
  const samples = new Float64Array(nss.length);
  for (let i = 0; i < nss.length; i++) {
    const start = performance.now();
    sink += work(nss[i]!, i);
    samples[i] = performance.now() - start;
  }
  return samples;
}

const tpls = templates();
const problems = tpls.flatMap((t) => validateTemplate(t));
if (problems.length > 0) throw new Error(`bench templates are invalid: ${JSON.stringify(problems)}`);
const nss = namespaces();
const granted = (name: string) => name === 'tpl-13';
const began = performance.now();

// Untimed: what each namespace matches, so the baseline clones exactly the same objects.
const matchedPerNs = nss.map((ns) => matchTemplates(ns, tpls, { granted }).matched);
const matchedTemplates = matchedPerNs.reduce((n, m) => n + m.length, 0) / nss.length;

const render = measure(nss, (ns) => {
  const { matched } = matchTemplates(ns, tpls, { granted });
  const result = renderNamespace(matched, contextOf(ns));
  return result.objects.length + result.problems.length;
});
gc();
const baseline = measure(nss, (_ns, i) => {
  let n = 0;
  for (const t of matchedPerNs[i]!) n += structuredClone(t.spec.templates!).length;
  return n;
});

const r = stats(render);
const b = stats(baseline);
console.log(`inputs: ${NAMESPACES} namespaces x ${TEMPLATES} templates x ${OBJECTS_PER_TEMPLATE} objects; ${matchedTemplates.toFixed(1)} templates (${(matchedTemplates * OBJECTS_PER_TEMPLATE).toFixed(0)} objects) matched per namespace on average`);
console.log(`                                       mean µs    p50 µs    p99 µs   (per namespace)`);
console.log(`match + render (furnish)             ${us(r.mean)}  ${us(r.p50)}  ${us(r.p99)}`);
console.log(`baseline: structuredClone of objects ${us(b.mean)}  ${us(b.p50)}  ${us(b.p99)}`);
console.log(`ratio furnish / baseline: mean ${(r.mean / b.mean).toFixed(2)}x, p50 ${(r.p50 / b.p50).toFixed(2)}x, p99 ${(r.p99 / b.p99).toFixed(2)}x`);
console.log(`total bench time: ${((performance.now() - began) / 1000).toFixed(1)} s (checksum ${sink})`);
