// `startLocalStack()`: the whole of Furnish on this machine against a cluster (what `npm start`,
// the integration and end-to-end tests and the benchmark run). Settings are read once, here, into
// a plain object (the process environment overlaid with `env`) and handed to each part.
import type { Bus } from '../../shared/bus/types.ts';
import { connect, createKubeClient, type FaultHook, type KubeClient, type KubeClientOptions } from '../../shared/kube/client.ts';
import { jsonLogger, type Logger } from '../../shared/log.ts';
import { reconcileConfig, relayConfig } from '../../shared/reconcile/config.ts';
import { startRelay, type RunningRelay } from '../../shared/reconcile/relay-process.ts';
import type { Runtime } from '../../shared/reconcile/runtime.ts';
import { readSetting } from '../../shared/config/settings.ts';
import { billingTopic, emulatorPush, memoryBusToPush } from './bus.ts';
import { ensureCrd, ensureFurnishNamespace, probeCluster } from './cluster.ts';
import { RECONCILERS, serveReconcilers } from './reconcilers.ts';
import { serveWebhooks } from './webhooks.ts';
import { removeStaleLocalRegistrations } from '../local-registrations.ts';

export interface LocalStackOptions {
  kubeconfigPath?: string;
  context?: string;
  /** `memory` (default) or `pubsub` (needs PUBSUB_EMULATOR_HOST or pubsubEmulatorHost). */
  bus?: 'memory' | 'pubsub';
  pubsubEmulatorHost?: string;
  pubsubProject?: string;
  /** Port of the reconcilers' HTTP server (0 = any free port). */
  port?: number;
  relayPort?: number;
  webhookPort?: number;
  /** Serve and register the admission webhooks (default true). */
  webhooks?: boolean;
  resyncSeconds?: number;
  log?: Logger;
  /** Per-client options (rate limits) for the reconcilers' Kubernetes client. */
  kubeOptions?: KubeClientOptions;
  /** Test hook: fault injection at the seam of the reconcilers' and the relay's Kubernetes clients. */
  faults?: FaultHook;
  env?: Record<string, string | undefined>;
}

export interface LocalStack {
  reconcilerUrl: string;
  relay: RunningRelay;
  bus: Bus;
  runtime: Runtime;
  kube: KubeClient;
  /** In-process bus only: resolves when no delivery is pending. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const env = { ...process.env, ...opts.env };
  const log = opts.log ?? jsonLogger('furnish-local');
  const kube = await probeCluster(opts.kubeconfigPath ?? env.KUBECONFIG?.split(':')[0], opts.context);
  if (opts.webhooks !== false) await removeStaleLocalRegistrations(kube, log);
  await ensureCrd(kube, log);
  await ensureFurnishNamespace(kube, log);
  const emulator = opts.pubsubEmulatorHost ?? env.PUBSUB_EMULATOR_HOST;
  const busKind = opts.bus ?? (emulator ? 'pubsub' : 'memory');
  const config = { ...reconcileConfig({ ...env, FURNISH_PUSH_AUTH: 'off' }), pubsubProject: opts.pubsubProject ?? env.PUBSUB_PROJECT_ID ?? 'furnish-local' };
  if (busKind === 'pubsub' && !emulator) throw new Error('bus=pubsub locally needs PUBSUB_EMULATOR_HOST (gcloud beta emulators pubsub start --host-port=127.0.0.1:8085)');
  const memory = busKind === 'memory' ? (await import('../../shared/bus/memory.ts')).createMemoryBus({ log }) : undefined;
  const bus: Bus = memory ?? (await (await import('../../shared/bus/pubsub.ts')).createPubSubBus({ projectId: config.pubsubProject, emulatorHost: emulator, log, maxMilliseconds: 5 }));

  const credentials = { kubeconfigPath: opts.kubeconfigPath ?? env.KUBECONFIG?.split(':')[0], context: opts.context };
  const reconcilers = await serveReconcilers({ credentials, config, bus, env, port: opts.port ?? readSetting(env, 'startPort'), log, kubeOptions: opts.faults ? { ...opts.kubeOptions, faults: opts.faults } : opts.kubeOptions });
  const { runtime, url: base } = reconcilers;
  if (memory) await memoryBusToPush(memory, config, base, billingTopic(env));
  else await emulatorPush(emulator!, config.pubsubProject, config, base, billingTopic(env));
  log.log('INFO', 'reconcilers served', { url: base, functions: RECONCILERS, bus: busKind, emulator });

  const webhooks = opts.webhooks === false ? null : await serveWebhooks(kube, credentials, opts.webhookPort ?? readSetting(env, 'webhookPort'), env, log);
  const relay = await startRelay({
    config: { ...relayConfig(env), bus: busKind, pubsubProject: config.pubsubProject, port: opts.relayPort ?? readSetting(env, 'relayPort'), resyncSeconds: opts.resyncSeconds ?? readSetting(env, 'resyncSeconds') },
    kube: createKubeClient(await connect(credentials), opts.faults ? { faults: opts.faults } : {}),
    bus,
    log,
    env,
  });
  let stopped: Promise<void> | undefined;
  return {
    reconcilerUrl: base,
    relay,
    bus,
    runtime,
    kube,
    idle: () => memory?.idle() ?? Promise.resolve(),
    stop() {
      stopped ??= (async () => {
        await relay.stop();
        await memory?.idle();
        await bus.close();
        await webhooks?.stop();
        await reconcilers.stop();
        kube.close();
        log.log('INFO', 'local stack stopped', {});
      })();
      return stopped;
    },
  };
}
