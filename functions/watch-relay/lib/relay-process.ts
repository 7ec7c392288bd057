// The watch relay as a running process: its HTTP server (health, metrics), the relay and what it
// is handed (wiring.ts), started and stopped together. functions/watch-relay/index.ts (the
// in-cluster Deployment) and `npm start` both start it from here, with their settings.
import type { Server } from 'node:http';
import { connect, createKubeClient, type KubeClient } from '../../../shared/kube/client.ts';
import type { Bus } from '../../../shared/bus/types.ts';
import { relayConfig, type RelayConfig } from './config.ts';
import { jsonLogger, type Logger } from '../../../shared/log.ts';
import { createRelay, type Relay } from './relay.ts';
import { relayServer } from './relay-http.ts';
import { relayObservers } from './wiring.ts';

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
  const bus = opts.bus ?? (config.bus === 'pubsub' ? await (await import('../../../shared/bus/pubsub.ts')).createPubSubBus({ projectId: config.pubsubProject, log }) : (await import('../../../shared/bus/memory.ts')).createMemoryBus({ log }));
  const { observers, kinds, driftWatches } = relayObservers({ kube, bus, log, config, env: opts.env ?? process.env });
  const relay = createRelay({ kube, bus, config, log, observers, kinds, driftWatches });
  const server = relayServer(relay, () => bus.stats);
  await new Promise<void>((r) => server.listen(config.port, r));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  await relay.start();
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

