// The watch relay process (in-cluster Deployment, or `npm start`): config from the environment,
// credentials from the in-cluster service account or the kubeconfig, Pub/Sub (or the in-process
// bus when started by scripts/start.ts), health and metrics on PORT, graceful shutdown on SIGTERM.
import type { Server } from 'node:http';
import { connect, createKubeClient, type KubeClient } from '../../shared/kube/client.ts';
import type { Bus } from '../../shared/bus/types.ts';
import { relayConfig, type RelayConfig } from '../../shared/reconcile/config.ts';
import { jsonLogger, type Logger } from '../../shared/log.ts';
import { createRelay, type Relay } from '../../shared/reconcile/relay.ts';
import { relayServer } from '../../shared/reconcile/relay-http.ts';
import { billingTapConfig, createBillingTap } from '../../shared/billing/tap.ts';

export interface RunningRelay {
  relay: Relay;
  server: Server;
  port: number;
  stop(): Promise<void>;
}

export async function startRelay(opts: { config?: RelayConfig; kube?: KubeClient; bus?: Bus; log?: Logger; env?: Record<string, string | undefined> } = {}): Promise<RunningRelay> {
  const config = opts.config ?? relayConfig(process.env);
  const log = opts.log ?? jsonLogger('watch-relay');
  const kube = opts.kube ?? createKubeClient(await connect());
  const bus = opts.bus ?? (config.bus === 'pubsub' ? await (await import('../../shared/bus/pubsub.ts')).createPubSubBus({ projectId: config.pubsubProject, log }) : (await import('../../shared/bus/memory.ts')).createMemoryBus({ log }));
  const tapConfig = billingTapConfig(opts.env ?? process.env, config.cluster, config.pageSize);
  const billing = tapConfig ? createBillingTap({ kube, bus, config: tapConfig, log }) : undefined;
  const relay = createRelay({ kube, bus, config, log, billing });
  const server = relayServer(relay, () => bus.stats);
  await new Promise<void>((r) => server.listen(config.port, r));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  await relay.start();
  await billing?.start();
  log.log('INFO', 'relay started', { port, bus: config.bus, resyncSeconds: config.resyncSeconds, namespaces: relay.sizes().Namespace, templates: relay.sizes().NamespaceTemplate });
  let stopping: Promise<void> | undefined;
  return {
    relay,
    server,
    port,
    stop() {
      stopping ??= (async () => {
        await relay.stop();
        await new Promise<void>((r) => server.close(() => r()));
        if (!opts.bus) await bus.close();
        if (!opts.kube) kube.close();
        log.log('INFO', 'relay stopped', { ...relay.counters });
      })();
      return stopping;
    },
  };
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const running = await startRelay();
  const config = relayConfig(process.env);
  const shutdown = () => {
    const timer = setTimeout(() => process.exit(1), config.shutdownMs);
    timer.unref();
    void running.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
