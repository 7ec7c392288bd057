// The watch relay as a running process: its HTTP server (health, metrics), the relay, the billing
// tap, started and stopped together. functions/watch-relay/index.ts (the in-cluster Deployment)
// and `npm start` both start it from here, with their settings.
import type { Server } from 'node:http';
import { connect, createKubeClient, type KubeClient } from '../kube/client.ts';
import type { Bus } from '../bus/types.ts';
import { relayConfig, type RelayConfig } from './config.ts';
import { jsonLogger, type Logger } from '../log.ts';
import { createRelay, type Relay } from './relay.ts';
import { relayServer } from './relay-http.ts';
import { billingTapConfig, createBillingTap } from '../billing/tap.ts';

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
  const bus = opts.bus ?? (config.bus === 'pubsub' ? await (await import('../bus/pubsub.ts')).createPubSubBus({ projectId: config.pubsubProject, log }) : (await import('../bus/memory.ts')).createMemoryBus({ log }));
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

