// `npm run bench -- read-costs`: what each read a namespace reconcile could make costs the API
// server (and etcd), beside the write a fan-out sends: the server-side apply of one ResourceQuota.
// Issue 26 asks the fan-out to cost at most 2.0x that apply; this prints which reads fit in the
// rest (ADR 0009, Consequences). Every read runs once per namespace at concurrency 16, as the
// population bench's direct applies do, and is timed by the server's CPU, not by the client.
//
// A real server: FURNISH_TEST_KUBECONFIG=<kubeconfig> BENCH_SERVER_PIDS=<kube-apiserver>,<etcd>
// (a disposable cluster: it creates BENCH_NAMESPACES namespaces, default 1,100, and deletes them).
// Without them, kube-sim (which has no watch cache: every way of reading costs the same there).
// The reads: a GET and a namespace's list, each as a quorum read (no resourceVersion: etcd on 1.26,
// the watch cache once it reached etcd's revision on 1.31+) and through the watch cache
// (`resourceVersion=0`, any state the cache holds); a list at a revision of another resource
// (`resourceVersionMatch=NotOlderThan`) one namespace at a time, for its latency.
import { connect, createKubeClient, type KubeClient } from '../../shared/kube/client.ts';
import { API_RETRY } from '../../shared/kube/retry.ts';
import { mapLimit } from '../../shared/reconcile/concurrency.ts';
import { startKubeSimProcess } from './kube-sim-process.ts';
import { cpuMsOf, ratio } from './processes.ts';

const EXTERNAL = process.env.FURNISH_TEST_KUBECONFIG;
const N = Number(process.env.BENCH_NAMESPACES ?? 1_100);
const CONCURRENCY = 16;
const RUN = Date.now().toString(36).slice(-5);
const NETPOL = '/apis/networking.k8s.io/v1/namespaces/NS/networkpolicies';

/** What each namespace holds: about what the population bench's template puts there. */
const OBJECTS: [string, Record<string, unknown>][] = [
  ['/api/v1/namespaces/NS/configmaps', { metadata: { name: 'a' }, data: { k: 'v' } }],
  ['/api/v1/namespaces/NS/configmaps', { metadata: { name: 'b' }, data: { k: 'v' } }],
  ['/api/v1/namespaces/NS/resourcequotas', { metadata: { name: 'q' }, spec: { hard: { pods: '50' } } }],
  [NETPOL, { metadata: { name: 'np' }, spec: { podSelector: {} } }],
];

async function must(kube: KubeClient, req: Parameters<KubeClient['call']>[0]): Promise<{ metadata?: { resourceVersion?: string } }> {
  const r = await kube.call<{ metadata?: { resourceVersion?: string } }>(req);
  if (!r.ok && !(req.method === 'POST' && r.status === 409)) throw new Error(`${req.method} ${req.path}: ${r.status} ${r.error}`);
  return r.data ?? {};
}

async function main(): Promise<void> {
  const sim = EXTERNAL ? undefined : await startKubeSimProcess([]);
  const kube = createKubeClient(await connect({ kubeconfigPath: EXTERNAL ?? sim!.kubeconfigPath, context: sim?.adminContext }), { pacing: { maxPerSecond: 1e6, maxInflight: 1e6, initialInflight: 1e6 }, userAgent: 'furnish-bench' });
  const pids = sim ? [sim.pid] : (process.env.BENCH_SERVER_PIDS ?? '').split(',').filter((p) => p !== '').map(Number);
  if (pids.length === 0) throw new Error('BENCH_SERVER_PIDS: the kube-apiserver and etcd pids of FURNISH_TEST_KUBECONFIG\'s server');
  const cpu = () => pids.reduce((a, pid) => a + cpuMsOf(pid), 0);
  const names = Array.from({ length: N }, (_, i) => `reads-${RUN}-${String(i).padStart(5, '0')}`);
  const at = (path: string, ns: string) => path.replace('NS', ns);
  console.log(`read costs: ${N} namespaces × ${OBJECTS.length} objects, each read once per namespace at concurrency ${CONCURRENCY}, against ${EXTERNAL ? `the real cluster ${EXTERNAL}` : 'kube-sim'}`);
  try {
    await mapLimit(names, CONCURRENCY, async (ns) => {
      await must(kube, { method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: ns } } });
      for (const [path, body] of OBJECTS) await must(kube, { method: 'POST', path: at(path, ns), body });
    });
    /** Server CPU per namespace of `one`, run for every namespace. */
    const perNamespace = async (one: (ns: string) => Promise<unknown>): Promise<number> => {
      const from = cpu();
      await mapLimit(names, CONCURRENCY, one);
      return (cpu() - from) / N;
    };
    const apply = (pods: number) => perNamespace((ns) => must(kube, { method: 'PATCH', path: `/api/v1/namespaces/${ns}/resourcequotas/q`, query: { fieldManager: 'furnish-bench', force: true }, contentType: 'application/apply-patch+yaml', body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: ns }, spec: { hard: { pods: String(pods) } } } }));
    await apply(60);
    const write = await apply(70);
    console.log(`baseline: server-side apply of a ResourceQuota, ${write.toFixed(2)} ms of server CPU per namespace`);
    const reads: [string, (ns: string) => Promise<unknown>][] = [
      ['GET namespace, quorum', (ns) => must(kube, { method: 'GET', path: `/api/v1/namespaces/${ns}` })],
      ['GET namespace, watch cache (resourceVersion=0)', (ns) => must(kube, { method: 'GET', path: `/api/v1/namespaces/${ns}`, query: { resourceVersion: '0' } })],
      ['list ConfigMaps of a namespace, quorum', (ns) => must(kube, { method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps`, query: { limit: 500 } })],
      ['list ConfigMaps of a namespace, watch cache', (ns) => must(kube, { method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps`, query: { resourceVersion: '0' } })],
      ['list NetworkPolicies of a namespace, quorum', (ns) => must(kube, { method: 'GET', path: at(NETPOL, ns), query: { limit: 500 } })],
      ['list NetworkPolicies of a namespace, watch cache', (ns) => must(kube, { method: 'GET', path: at(NETPOL, ns), query: { resourceVersion: '0' } })],
    ];
    for (const [label, read] of reads) {
      const cost = await perNamespace(read);
      console.log(`ROW ${label}: ${cost.toFixed(2)} ms of server CPU per namespace; the apply ${write.toFixed(2)} ms; ratio ${ratio(cost, write)}`);
    }
    // NotOlderThan a revision of another resource (a ConfigMap just written): how long the
    // NetworkPolicies' cache takes to show it has reached it (1.26: never, 504 after 3 s).
    let waited = 0;
    let failed = '';
    const tries = 5;
    for (let i = 0; i < tries; i++) {
      const rv = (await must(kube, { method: 'PATCH', path: `/api/v1/namespaces/${names[0]}/configmaps/a`, query: { fieldManager: 'furnish-bench', force: true }, contentType: 'application/apply-patch+yaml', body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: names[0] }, data: { k: String(i) } } })).metadata?.resourceVersion ?? '';
      const t = performance.now();
      const r = await kube.call({ method: 'GET', path: at(NETPOL, names[i]!), query: { resourceVersion: rv, resourceVersionMatch: 'NotOlderThan' }, retry: { ...API_RETRY, attempts: 1 } });
      waited += performance.now() - t;
      if (!r.ok) failed = `${r.status} ${r.error ?? ''}`;
    }
    console.log(`    a NetworkPolicy list NotOlderThan a ConfigMap's new revision: ${(waited / tries).toFixed(0)} ms each (mean of ${tries}, one at a time)${failed ? `; answered ${failed}` : ''}`);
  } finally {
    await mapLimit(names, 32, (ns) => kube.call({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }));
    kube.close();
    await sim?.stop();
  }
}

await main();
