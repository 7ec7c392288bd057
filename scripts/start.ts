// `npm start`: the whole of Furnish on this machine, against the current kubeconfig.
//   - every function served locally with the Functions Framework: the reconcilers over HTTP
//     (Pub/Sub push format), the admission webhooks over HTTPS with a generated certificate and
//     registered in the cluster;
//   - the watch relay;
//   - each component under the identity it has when deployed (furnish-system's ServiceAccounts
//     furnish-reconciler, furnish-webhook, furnish-relay, with infra/'s RBAC, on tokens minted for
//     them): the kubeconfig's user only installs (start/identities.ts);
//   - Organizations on (FURNISH_ORGANIZATIONS=true unless set);
//   - the in-process bus, or the Pub/Sub emulator when PUBSUB_EMULATOR_HOST is set (topics and
//     push subscriptions to the local reconcilers are created);
//   - structured JSON logs on stdout, and where each component serves its metrics (metrics-urls.ts).
// With no reachable cluster (and no KUBECONFIG naming one) it starts the project's test cluster
// itself, as a process of its own (scripts/local-cluster.ts); a KUBECONFIG that names an
// unreachable cluster is an error. `npm start` runs this with the relay's and the functions' node
// flags (package.json; shared/functions/memory-flags.ts), so its memory is theirs.
//
// `startLocalStack()` (scripts/start/stack.ts) is also what the integration tests and the benchmark
// run; the parts are in scripts/start/ by concern (cluster, identities, bus, webhooks, reconcilers, http).
import { resolve } from 'node:path';
import { readSetting } from '../shared/config/settings.ts';
import { jsonLogger } from '../shared/log.ts';
import { NoClusterError, probeCluster, ROOT } from './start/cluster.ts';
import { localMetricsUrls, metricsBanner } from './start/metrics-urls.ts';
import { startLocalStack } from './start/stack.ts';

export { ensureCrd, NoClusterError, probeCluster } from './start/cluster.ts';
export { memoryBusToPush } from './start/bus.ts';
export { serveReconcilers, type ServedReconcilers } from './start/reconcilers.ts';
export { startLocalStack, type LocalStack, type LocalStackOptions } from './start/stack.ts';
export { removeRegistrationsCommand } from './local-registrations.ts';

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const log = jsonLogger('furnish-local');
  // The settings, read once: everything below takes this object.
  const env = { ...process.env };
  const { chooseCluster, embeddedClusterBanner, portInUseMessage, startEmbeddedCluster } = await import('./local-cluster.ts');
  let embedded: Awaited<ReturnType<typeof startEmbeddedCluster>> | undefined;
  try {
    const unreachable = await probeCluster(env.KUBECONFIG?.split(':')[0]).then(
      (kube) => void kube.close(),
      (e: unknown) => {
        if (e instanceof NoClusterError) return e;
        throw e;
      },
    );
    const choice = chooseCluster(unreachable === undefined, env);
    if (choice.kind === 'refuse') throw unreachable;
    if (choice.kind === 'embedded') {
      embedded = await startEmbeddedCluster(resolve(ROOT, readSetting(env, 'stateDir')));
      process.stdout.write(embeddedClusterBanner(embedded));
    }
    const stack = await startLocalStack({ log, kubeconfigPath: embedded?.kubeconfigPath, env, ...(embedded ? { clusterPid: embedded.pid } : {}) });
    const metrics = await localMetricsUrls(stack);
    log.log('INFO', 'Furnish is running: create a namespace (kubectl create namespace team-a) and watch it get furnished', { reconcilers: stack.reconcilerUrl, metrics, kubeconfig: embedded?.kubeconfigPath });
    process.stdout.write(metricsBanner(metrics));
    const shutdown = () => {
      const t = setTimeout(() => process.exit(1), 15_000);
      t.unref();
      void stack.stop().then(() => embedded?.stop()).then(() => process.exit(0));
    };
    process.once('SIGINT', shutdown);
    process.once('SIGTERM', shutdown);
    // A closed terminal too: the test cluster runs in its own process group and would outlive it.
    process.once('SIGHUP', shutdown);
  } catch (e) {
    const message = e instanceof NoClusterError ? e.message : portInUseMessage(e, env);
    if (message === undefined) throw e;
    process.stderr.write(`\n${message}\n\n`);
    await embedded?.stop();
    process.exit(2);
  }
}
