// Render cost against a baseline measured in the same run: a plain structuredClone of the very
// objects of the templates each namespace matches (the least any renderer must do). Two
// workloads: the repository's examples/ plus a template like the population bench's (ConfigMaps
// with $(CREATOR) and $(NAMESPACE), a NetworkPolicy, a RoleBinding, a ResourceQuota) for 3,000
// namespaces, and 20 synthetic templates of 10 objects each, under varied selectors, for 4,000.
//
// Each workload: matching done first (untimed), one warm-up round, then ROUNDS rounds that each
// time render and the baseline over every namespace, alternating block by block (so that load
// that comes and goes colours both alike), and the median of the rounds' ratios with their range.
// The ratio line renders the same template objects for every namespace (a fan-out). Informational:
// "listed afresh" gives each namespace its own copy of the templates (a reconcile that listed
// them; the copies made untimed), and match + render.
//
// Run: npm run bench -- render
import { join } from 'node:path';
import { KEY } from '../../shared/keys.ts';
import { loadTemplates } from '../../shared/cli/load.ts';
import type { KubeObject, LabelSelector, StringMap } from '../../shared/kube/types.ts';
import { matchTemplates } from '../../shared/render/match.ts';
import { renderNamespace } from '../../shared/render/render.ts';
import type { NamespaceInfo, NamespaceTemplate, RenderContext } from '../../shared/render/types.ts';
import { validateTemplate } from '../../shared/render/validate.ts';

const ROUNDS = 9;
const COLD_NAMESPACES = 300;

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

const rbac = 'rbac.authorization.k8s.io';
const adminBinding = (name: string) => ({
  apiVersion: `${rbac}/v1`,
  kind: 'RoleBinding',
  metadata: { name },
  subjects: [{ apiGroup: rbac, kind: 'User', name: '$(CREATOR)' }],
  roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'admin' },
});

/** The population bench's template: what a fan-out there renders for every namespace. */
function populationTemplate(): NamespaceTemplate {
  const hard = { pods: '50', 'requests.cpu': '1000m', 'requests.memory': '1024Mi', 'limits.cpu': '0.5' };
  const objects: KubeObject[] = [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { owner: '$(CREATOR)' } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'contacts' }, data: { team: '$(NAMESPACE)' } },
    { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'default-deny' }, spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] } },
    adminBinding('namespace-admin'),
    { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'default-quota' }, spec: { hard } },
  ];
  return { apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: 'bench' }, spec: { namespaces: { labelSelector: { matchLabels: { bench: 'run' } } }, templates: objects } };
}

function exampleTemplates(): NamespaceTemplate[] {
  const loaded = loadTemplates([join(import.meta.dirname, '..', '..', 'examples')]);
  if (loaded.problems.length > 0) throw new Error(`examples do not load: ${JSON.stringify(loaded.problems)}`);
  return loaded.items.map((i) => i.template);
}

function exampleNamespaces(count: number): NamespaceInfo[] {
  return Array.from({ length: count }, (_, i) => {
    const name = `${pick(['team', 'svc', 'proj'])}-${i}`;
    const labels: StringMap = { 'kubernetes.io/metadata.name': name, bench: 'run' };
    if (random() < 0.8) labels[KEY.organization] = `org-${i % 13}`;
    if (random() < 0.1) labels['namespace-class'] = 'privileged';
    return { name, labels, annotations: { [KEY.creator]: `user${i % 501}@example.com` } };
  });
}

/** Ten objects of the kinds templates really hold, with tokens where platform teams put them. */
function syntheticObjects(t: number): KubeObject[] {
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
    { ...adminBinding('admin'), metadata: meta('admin') },
    { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: meta('reader'), rules: [{ apiGroups: [''], resources: ['configmaps', 'secrets', 'services'], verbs: ['get', 'list', 'watch'] }] },
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
    { apiVersion: 'v1', kind: 'Service', metadata: meta('metrics'), spec: { selector: { app: 'metrics' }, ports: [{ name: 'http', port: 9090, targetPort: 9090, protocol: 'TCP' }] } },
  ];
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

function syntheticTemplates(): NamespaceTemplate[] {
  return Array.from({ length: 20 }, (_, t) => {
    const annotations: StringMap = {};
    if (t === 7) annotations[KEY.apply] = 'disable';
    if (t === 13 || t === 17) annotations[KEY.requirePermission] = 'true';
    return {
      apiVersion: 'furnish.dev/v1alpha1',
      kind: 'NamespaceTemplate',
      metadata: { name: `tpl-${String(t).padStart(2, '0')}`, annotations },
      spec: { namespaces: { labelSelector: SELECTORS[t % SELECTORS.length]! }, templates: syntheticObjects(t), deletionPolicy: 'Delete', mode: 'Enforce' },
    };
  });
}

function syntheticNamespaces(count: number): NamespaceInfo[] {
  return Array.from({ length: count }, (_, i) => {
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
  return { namespace: ns.name, creator: ns.annotations[KEY.creator] ?? '', organization: ns.labels[KEY.organization] ?? '', annotations: ns.annotations };
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
let sink = 0;

/** Namespaces per block: render and baseline alternate block by block, so load that comes and goes colours both alike. */
const BLOCK = 20;

/** Milliseconds of `work` over namespaces [from, to). */
function timed(from: number, to: number, work: (i: number) => number): number {
  const start = performance.now();
  for (let i = from; i < to; i++) sink += work(i);
  return performance.now() - start;
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (x: number) => x.toFixed(1).padStart(8);

/**
 * One warm-up round, then ROUNDS rounds over all `count` namespaces, each timing `subject` and
 * `baseline` block by block in alternating order; prints the median µs per namespace of each and
 * the median of the rounds' ratios, with their range. `setup` runs untimed before each round.
 */
function compare(label: string, count: number, subject: (i: number) => number, baseline: (i: number) => number, setup?: () => void): number {
  const s: number[] = [];
  const b: number[] = [];
  for (let r = -1; r < ROUNDS; r++) {
    setup?.();
    gc();
    let subjectMs = 0;
    let baselineMs = 0;
    for (let from = 0, k = 0; from < count; from += BLOCK, k++) {
      const to = Math.min(count, from + BLOCK);
      if ((k + r) % 2 === 0) baselineMs += timed(from, to, baseline);
      subjectMs += timed(from, to, subject);
      if ((k + r) % 2 !== 0) baselineMs += timed(from, to, baseline);
    }
    if (r < 0) continue;
    s.push((subjectMs * 1000) / count);
    b.push((baselineMs * 1000) / count);
  }
  const ratios = s.map((x, i) => x / b[i]!);
  const ratio = median(ratios);
  console.log(`  ${label.padEnd(34)} ${fmt(median(s))} µs vs ${fmt(median(b))} µs: ${ratio.toFixed(2)}x (rounds ${Math.min(...ratios).toFixed(2)}x–${Math.max(...ratios).toFixed(2)}x)`);
  return ratio;
}

function workload(name: string, tpls: NamespaceTemplate[], nss: NamespaceInfo[]): number {
  const problems = tpls.flatMap((t) => validateTemplate(t));
  if (problems.length > 0) throw new Error(`${name}: templates are invalid: ${JSON.stringify(problems)}`);
  const granted = (t: string) => t === 'tpl-13' || t === 'privileged';
  const matched = nss.map((ns) => matchTemplates(ns, tpls, { granted }).matched);
  const contexts = nss.map(contextOf);
  const objects = matched.reduce((n, m) => n + m.reduce((k, t) => k + (t.spec.templates?.length ?? 0), 0), 0) / nss.length;
  console.log(`${name}: ${nss.length} namespaces x ${tpls.length} templates; ${objects.toFixed(1)} objects matched per namespace on average; ${ROUNDS} rounds, median (range); per namespace:`);
  const clone = (i: number) => {
    let n = 0;
    for (const t of matched[i]!) n += structuredClone(t.spec.templates!).length;
    return n;
  };
  const render = (i: number) => {
    const result = renderNamespace(matched[i]!, contexts[i]!);
    return result.objects.length + result.problems.length;
  };
  const ratio = compare('render / structuredClone', nss.length, render, clone);
  // Each namespace its own copies of the templates, made untimed: what a render pays when its templates were just listed.
  const cold = Math.min(COLD_NAMESPACES, nss.length);
  let copies: NamespaceTemplate[][] = [];
  const fresh = () => void (copies = matched.slice(0, cold).map((m) => structuredClone(m)));
  compare('render (listed afresh) / clone', cold, (i) => {
    const result = renderNamespace(copies[i]!, contexts[i]!);
    return result.objects.length + result.problems.length;
  }, clone, fresh);
  compare('match + render / clone', nss.length, (i) => {
    const result = renderNamespace(matchTemplates(nss[i]!, tpls, { granted }).matched, contexts[i]!);
    return result.objects.length + result.problems.length;
  }, clone);
  return ratio;
}

const began = performance.now();
const examples = workload('examples/ + population template', [...exampleTemplates(), populationTemplate()], exampleNamespaces(3_000));
const synthetic = workload('synthetic', syntheticTemplates(), syntheticNamespaces(4_000));
console.log(`render / structuredClone (median of rounds): examples ${examples.toFixed(2)}x, synthetic ${synthetic.toFixed(2)}x; target <= 1.50x`);
console.log(`total bench time: ${((performance.now() - began) / 1000).toFixed(1)} s (checksum ${sink})`);
