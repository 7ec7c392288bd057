// Organizations' cost on the admission path, measured in one run against the same API server
// (kube-sim in its own process, or the cluster FURNISH_TEST_KUBECONFIG names):
//   1. a namespace CREATE through mutate-namespace and validate-namespace with organizations on
//      (the user's default organization read fresh, the Organization read fresh, the quota slot
//      reserved by a resourceVersion-checked status update) against the same CREATE with
//      organizations off; the two interleaved so that drift in machine load colours both alike;
//   2. mutate-pod's decision in process: a Pod that restarts forever (every Deployment's Pod:
//      no look-up) and a run-once Pod (namespace read, then remembered for a few seconds).
// mutate-pod's HTTP latency and cold start against the echo function are in webhooks.bench.ts.
import { bearerCredentials } from '../../shared/kube/client.ts';
import { createKubeHttp, type KubeHttp } from '../../shared/kube/http.ts';
import { cachedAuthorizer } from '../../shared/kube/sar.ts';
import { clusterOrganizations, ORGANIZATIONS_PATH } from '../../shared/org/source.ts';
import type { WebhookDeps } from '../../shared/webhooks/deps.ts';
import { mutateNamespace } from '../../shared/webhooks/handlers/mutate-namespace.ts';
import { mutatePod } from '../../shared/webhooks/handlers/mutate-pod.ts';
import { validateNamespace } from '../../shared/webhooks/handlers/validate-namespace.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { fakeAuthorizer, SCENARIO_TEMPLATES, testDeps } from '../support/fixtures.ts';
import { namespaceObject, namespaceRequest, organization, orgDeps, podReview } from '../support/organizations.ts';
import { startKubeSimProcess } from './kube-sim-process.ts';

const CREATES = { warmup: 50, measured: 600, resetEvery: 25 };
const POD_DECISIONS = { warmup: 5_000, measured: 50_000 };
const suffix = Date.now().toString(36).slice(-5);
const ORG = `bench-${suffix}`;
const alice = { username: 'alice', groups: ['system:authenticated'] };

function summary(samples: number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
  return { p50: at(0.5), p99: at(0.99) };
}
const ms = (v: number, digits = 2) => `${v.toFixed(digits)} ms`;

/** Furnish's part of one `kubectl create namespace`: the mutating call, then the validating one on the mutated object. */
async function admitCreate(deps: WebhookDeps, name: string, labels: Record<string, string>): Promise<boolean> {
  const mutated = await mutateNamespace(namespaceRequest({ webhook: 'mutate', user: alice, name, labels }), deps);
  if (!mutated.allowed) throw new Error(`mutate refused ${name}: ${mutated.status?.message}`);
  const organization = deps.settings.organizations?.enabled ? ORG : undefined;
  const validated = await validateNamespace(namespaceRequest({ user: alice, name, labels: organization ? { ...labels, 'furnish.dev/organization': organization } : labels }), deps);
  if (!validated.allowed) throw new Error(`validate refused ${name}: ${validated.status?.message}`);
  return true;
}

async function resetStatus(http: KubeHttp): Promise<void> {
  const org = await http<{ metadata: { resourceVersion: string } }>({ method: 'GET', path: `${ORGANIZATIONS_PATH}/${ORG}` });
  await http({ method: 'PUT', path: `${ORGANIZATIONS_PATH}/${ORG}/status`, body: { ...(org.data as object), status: { namespaces: 0, reservations: [] } } });
}

async function namespaceCreates(http: KubeHttp): Promise<void> {
  const base = testDeps({ authorizer: cachedAuthorizer(fakeAuthorizer([])), templates: SCENARIO_TEMPLATES });
  const off: WebhookDeps = { ...base, organizations: clusterOrganizations(http) };
  const on: WebhookDeps = { ...off, settings: { ...base.settings, organizations: { enabled: true } } };
  const samples = { off: [] as number[], on: [] as number[] };
  let n = 0;
  const run = async (deps: WebhookDeps, into?: number[]) => {
    const t = performance.now();
    await admitCreate(deps, `b-${suffix}-${n++}`, {});
    into?.push(performance.now() - t);
  };
  for (let i = 0; i < CREATES.warmup; i++) {
    await run(off);
    await run(on);
  }
  await resetStatus(http);
  for (let i = 0; i < CREATES.measured; i++) {
    // A live organization holds at most about its quota in reservations: keep the status that size.
    if (i % CREATES.resetEvery === 0) await resetStatus(http);
    await run(off, samples.off);
    await run(on, samples.on);
  }
  const a = summary(samples.off);
  const b = summary(samples.on);
  console.log(`\n-- namespace CREATE: mutate-namespace + validate-namespace in process, API look-ups over loopback (${CREATES.measured} each, interleaved, after ${CREATES.warmup} warm-up)`);
  console.log(`${'without organizations'.padEnd(26)} p50 ${ms(a.p50)}  p99 ${ms(a.p99)}`);
  console.log(`${'with organizations'.padEnd(26)} p50 ${ms(b.p50)} (${(b.p50 / a.p50).toFixed(2)}x)  p99 ${ms(b.p99)} (${(b.p99 / a.p99).toFixed(2)}x)`);
  console.log(`${'added by organizations'.padEnd(26)} p50 ${ms(b.p50 - a.p50)}  p99 ${ms(b.p99 - a.p99)}  (one Organization list, one Organization read, one status update)`);
}

async function podDecisions(): Promise<void> {
  console.log(`\n-- mutate-pod decision in process (${POD_DECISIONS.measured} calls each after ${POD_DECISIONS.warmup} warm-up)`);
  const deps = orgDeps({ namespaces: [namespaceObject('team-a', { 'furnish.dev/organization': 'acme' })] });
  const cases = [
    ['restartPolicy Always', podReview('team-a', { restartPolicy: 'Always' }).request],
    ['run-once, default set', podReview('team-a', { restartPolicy: 'Never' }).request],
  ] as const;
  for (const [label, request] of cases) {
    for (let i = 0; i < POD_DECISIONS.warmup; i++) await mutatePod(request, deps);
    const samples = new Array<number>(POD_DECISIONS.measured);
    for (let i = 0; i < POD_DECISIONS.measured; i++) {
      const t = performance.now();
      await mutatePod(request, deps);
      samples[i] = performance.now() - t;
    }
    const { p50, p99 } = summary(samples);
    console.log(`${label.padEnd(26)} p50 ${ms(p50, 4)}  p99 ${ms(p99, 4)}`);
  }
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
  await podDecisions();
  const external = process.env.FURNISH_TEST_KUBECONFIG;
  const sim = external ? undefined : await startKubeSimProcess();
  try {
    const creds = await bearerCredentials({ kubeconfigPath: external ?? sim!.kubeconfigPath, context: external ? undefined : sim!.adminContext });
    const http = createKubeHttp({ server: creds.server, caPem: creds.caPem, token: creds.token, timeoutMs: 10_000 });
    console.log(`\nAPI server: ${external ? `kube-apiserver (${creds.server})` : 'kube-sim (own process)'}`);
    const crd = parse(readFileSync(join(import.meta.dirname, '..', '..', 'infra', 'crds', 'organizations.yaml'), 'utf8'));
    await http({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd });
    for (let i = 0; i < 100 && !(await http({ method: 'GET', path: ORGANIZATIONS_PATH })).ok; i++) await new Promise((r) => setTimeout(r, 100));
    const created = await http({ method: 'POST', path: ORGANIZATIONS_PATH, body: organization(ORG, [{ kind: 'User', name: 'alice', default: true }], { quota: 1_000_000 }) });
    if (!created.ok) throw new Error(`create organization: ${created.error}`);
    try {
      await namespaceCreates(http);
    } finally {
      await http({ method: 'DELETE', path: `${ORGANIZATIONS_PATH}/${ORG}` });
    }
  } finally {
    await sim?.stop();
  }
}

await main();
