// `npm run bench -- lnamespace`: the LNamespace reconciler at scale against kube-sim (in a process
// of its own), in one run.
//   converge  N LNamespaces (default 500; BENCH_LNAMESPACES), each with a user, a manager and a
//             sudoer shared with 9 others (50 shared self-impersonation roles with 10 holders each)
//   resync    every one reconciled again with nothing changed: writes (must be 0) and wall time
//   baseline  the reads a resync cannot avoid (the LNamespace, its namespace, the three lists of
//             what it holds), issued alone with the same concurrency: the ratio is the cost of
//             planning on top of reading
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { listAll } from '../../shared/kube/api.ts';
import { connect, createKubeClient, type KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { DEFAULT_LNS_SETTINGS, holderLabel } from '../../shared/lnamespace/desired.ts';
import { reconcileLNamespace } from '../../shared/lnamespace/reconcile.ts';
import type { LNamespace } from '../../shared/lnamespace/types.ts';
import { mapLimit } from '../../shared/reconcile/concurrency.ts';
import { silentLogger } from '../../shared/log.ts';
import { startKubeSimProcess } from './kube-sim-process.ts';

const N = Number(process.env.BENCH_LNAMESPACES ?? 500);
const CONCURRENCY = 16;
const ROUNDS = 3;

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await work();
  return { ms: performance.now() - t0, value };
}

function lnamespace(i: number): LNamespace {
  return {
    apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace',
    metadata: { name: `bench-${i}`, annotations: { 'furnish.dev/creator': 'alice' } },
    spec: { users: [{ kind: 'User', name: `dev-${i}` }], managers: [{ kind: 'User', name: 'alice' }], sudoers: [{ kind: 'User', name: `oncall-${i % 50}` }], billing: { costCenter: String(4000 + (i % 7)) } },
  };
}

async function reconcileAll(kube: KubeClient, names: string[]): Promise<{ writes: number; results: Record<string, number> }> {
  const before = kube.metrics.writes;
  const results: Record<string, number> = {};
  await mapLimit(names, CONCURRENCY, async (name) => {
    const r = await reconcileLNamespace({ kube, settings: DEFAULT_LNS_SETTINGS, log: silentLogger }, name);
    results[r.result] = (results[r.result] ?? 0) + 1;
  });
  return { writes: kube.metrics.writes - before, results };
}

/** The reads a no-op resync of one LNamespace makes, without deciding anything. */
async function readsAlone(kube: KubeClient, names: string[]): Promise<void> {
  await mapLimit(names, CONCURRENCY, async (name) => {
    await kube.call({ method: 'GET', path: `/apis/furnish.dev/v1alpha1/lnamespaces/${name}` });
    await kube.call({ method: 'GET', path: `/api/v1/namespaces/${name}` });
    const selector = { labelSelector: holderLabel(name) };
    await Promise.all([
      listAll(kube, `/apis/rbac.authorization.k8s.io/v1/namespaces/${name}/rolebindings`, selector),
      listAll(kube, '/apis/rbac.authorization.k8s.io/v1/clusterroles', selector),
      listAll(kube, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', selector),
    ]);
  });
}

async function main(): Promise<void> {
  const sim = await startKubeSimProcess();
  const kube = createKubeClient(await connect({ kubeconfigPath: sim.kubeconfigPath, context: sim.adminContext }), { pacing: { maxPerSecond: 1e6 } });
  try {
    const crd = parse(readFileSync(join(import.meta.dirname, '..', '..', 'infra', 'crds', 'lnamespaces.yaml'), 'utf8')) as KubeObject;
    await kube.call({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd });
    for (let i = 0; i < 100 && !(await kube.call({ method: 'GET', path: '/apis/furnish.dev/v1alpha1/lnamespaces' })).ok; i++) await new Promise((r) => setTimeout(r, 50));
    const names = Array.from({ length: N }, (_, i) => `bench-${i}`);
    const setup = await timed(() => mapLimit(names.map((_, i) => lnamespace(i)), CONCURRENCY, async (l) => {
      const res = await kube.call({ method: 'POST', path: '/apis/furnish.dev/v1alpha1/lnamespaces', body: l });
      if (!res.ok) throw new Error(`create ${l.metadata.name}: ${res.status} ${res.error}`);
    }));
    console.log(`\n-- ${N} LNamespaces (1 user, 1 manager, 1 sudoer shared by ${N / 50} each), concurrency ${CONCURRENCY}, kube-sim in its own process; created in ${seconds(setup.ms)}`);

    const first = await timed(() => reconcileAll(kube, names));
    console.log(`converge   ${seconds(first.ms)}  writes ${first.value.writes} (${(first.value.writes / N).toFixed(1)} per LNamespace)  results ${JSON.stringify(first.value.results)}`);
    // The first pass wrote each status; one more settles everything, then the measured resyncs must write nothing.
    await reconcileAll(kube, names);

    let failed = false;
    const resync: number[] = [];
    const baseline: number[] = [];
    // Interleaved, so drift in machine load colours both alike.
    for (let round = 0; round < ROUNDS; round++) {
      const reads = kube.metrics.requests;
      const r = await timed(() => reconcileAll(kube, names));
      const requests = kube.metrics.requests - reads;
      resync.push(r.ms);
      if (r.value.writes !== 0) failed = true;
      const b = await timed(() => readsAlone(kube, names));
      baseline.push(b.ms);
      console.log(`round ${round + 1}    resync ${seconds(r.ms)} (${r.value.writes} writes, ${(requests / N).toFixed(1)} requests per LNamespace)   baseline reads alone ${seconds(b.ms)}`);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const rs = median(resync);
    const bs = median(baseline);
    console.log(`\nno-op resync of ${N} LNamespaces: ${seconds(rs)} median (${(rs / N).toFixed(2)} ms each), writes ${failed ? 'NOT ZERO' : '0'}; baseline (reads alone) ${seconds(bs)}; ratio ${(rs / bs).toFixed(2)}x`);
    if (failed) process.exitCode = 1;
  } finally {
    kube.close();
    await sim.stop();
  }
}

await main();
