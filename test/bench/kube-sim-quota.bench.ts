// What kube-sim's resource quota controller costs the server: namespaces stored each with the
// examples' ResourceQuota and six ConfigMaps (through storage, as a first population leaves them),
// timed until every quota holds status.used, against the same work with the controller off,
// measured in the same run. Rounds alternate on and off; the median of their ratios and its range
// are printed. Informational (no target): other benchmarks on kube-sim pay this once per quota.
//
// Run: npm run bench -- kube-sim-quota
import { startCluster } from '../support/kube-sim/index.ts';

const NAMESPACES = 2_000;
const ROUNDS = 5;
const HARD = { 'requests.cpu': '8', 'requests.memory': '16Gi', 'limits.cpu': '16', 'limits.memory': '32Gi', pods: '50', persistentvolumeclaims: '20',
  'requests.storage': '200Gi', 'services.loadbalancers': '0', 'services.nodeports': '0' };

/** Milliseconds to store the namespaces and, with the controller on, for every quota's status to be written. */
async function populate(controller: boolean): Promise<number> {
  const cluster = await startCluster({ resourceQuotaController: controller, namespaceDefaultObjects: false });
  try {
    const started = performance.now();
    for (let i = 0; i < NAMESPACES; i++) {
      const namespace = `bench-${i}`;
      cluster.sim.seed({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
      cluster.sim.seed({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'default-quota', namespace }, spec: { hard: HARD }, status: {} });
      for (let j = 0; j < 6; j++) cluster.sim.seed({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `settings-${j}`, namespace }, data: { a: '1' } });
    }
    const counted = () => cluster.sim.store.list('resourcequotas.', undefined, (q) => (q.status as { used?: object } | undefined)?.used !== undefined).length;
    while (controller && counted() < NAMESPACES) await new Promise((r) => setTimeout(r, 10));
    return performance.now() - started;
  } finally {
    await cluster.stop();
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

await populate(true); // warm-up
const on: number[] = [];
const off: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  // Alternate which goes first, so that load that comes and goes colours both alike.
  if (round % 2 === 0) {
    on.push(await populate(true));
    off.push(await populate(false));
  } else {
    off.push(await populate(false));
    on.push(await populate(true));
  }
}
const ratios = on.map((t, i) => t / off[i]!);
console.log(`${NAMESPACES} namespaces (quota + 6 ConfigMaps each), stored until every quota is counted: controller on ${median(on).toFixed(0)} ms vs off ${median(off).toFixed(0)} ms: `
  + `${median(ratios).toFixed(2)}x (rounds ${Math.min(...ratios).toFixed(2)}x–${Math.max(...ratios).toFixed(2)}x); ${(((median(on) - median(off)) / NAMESPACES) * 1000).toFixed(0)} µs per quota`);
