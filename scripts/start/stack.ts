// `startLocalStack()`: the whole of Furnish on this machine against a cluster (what `npm start`,
// the integration and end-to-end tests and the benchmark run), each component under the identity
// it has when deployed: the kubeconfig's user (the admin) installs Furnish's namespace, CRDs,
// infra/'s ServiceAccounts and RBAC for its components, and the webhook registrations; the
// reconcilers then run as furnish-reconciler, the webhooks' API calls as furnish-webhook and the
// relay as furnish-relay, on tokens minted for them (identities.ts). Settings are read once, here,
// into a plain object (the stack's defaults, the process environment, then `env`) and handed to each part.
import type { Bus } from '../../shared/bus/types.ts';
import { connect, createKubeClient, type FaultHook, type KubeClient, type KubeClientOptions } from '../../shared/kube/client.ts';
import { jsonLogger, type Logger } from '../../shared/log.ts';
import { reconcileConfig } from '../../shared/reconcile/config.ts';
import { relayConfig } from '../../functions/watch-relay/lib/config.ts';
import { startRelay, type RunningRelay } from '../../functions/watch-relay/lib/relay-process.ts';
import type { Runtime } from '../../shared/reconcile/runtime.ts';
import { readSetting } from '../../shared/config/settings.ts';
import { billingTopic, emulatorPush, memoryBusToPush } from './bus.ts';
import { ensureCrd, ensureFurnishNamespace, probeCluster } from './cluster.ts';
import { installIdentities, mintIdentities, type Identities, type TokenTiming } from './identities.ts';
import { RECONCILERS, serveReconcilers } from './reconcilers.ts';
import { serveWebhooks } from './webhooks.ts';
import { close } from './http.ts';
import { startRegistrationWatchdog } from './watchdog.ts';
import { unregisterWhileSuspended } from './suspend.ts';
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
  /**
   * false: register the webhook-only variant (no policies, no matchConditions) even where the server
   * has in-tree policies, as on 1.26 (the webhook-traffic bench's baseline). Default: by discovery.
   */
  inTreePolicies?: boolean;
  resyncSeconds?: number;
  log?: Logger;
  /** Per-client options (rate limits) for the reconcilers' Kubernetes client. */
  kubeOptions?: KubeClientOptions;
  /** Test hook: the components' token lifetime and renewal period (identities.ts). */
  tokens?: TokenTiming;
  /** Test hook: fault injection at the seam of the reconcilers' and the relay's Kubernetes clients. */
  faults?: FaultHook;
  env?: Record<string, string | undefined>;
  /** The cluster's process when npm start runs it (scripts/local-cluster.ts): the watchdog stops once it is gone. */
  clusterPid?: number;
}

/**
 * What the stack sets unless the environment or `env` says otherwise: Organizations on, as the
 * suites and `npm start` must exercise them (a cluster without Organization objects behaves as before).
 */
export const LOCAL_DEFAULTS: Readonly<Record<string, string>> = { FURNISH_ORGANIZATIONS: 'true' };

/** The User-Agent of the admin's client: installation (and the webhook registrations) only. */
export const INSTALL_USER_AGENT = 'furnish-local-install';

export interface LocalStack {
  reconcilerUrl: string;
  /** The webhooks' HTTPS server (undefined when not served). */
  webhookUrl?: string;
  /** The server has in-tree policies: Furnish's are written with the registrations (this run's, removed on stop). */
  inTreePolicies: boolean;
  /**
   * Test hook: the webhooks' HTTPS server stops answering, their registrations (and policies) left
   * as they are, so the API server's calls to them fail as when the functions are unreachable
   * (test/e2e/functions-down.test.ts). stop() still removes the registrations.
   */
  closeWebhookServer(): Promise<void>;
  relay: RunningRelay;
  bus: Bus;
  runtime: Runtime;
  /** The installing admin's client (User-Agent INSTALL_USER_AGENT); no component calls through it. */
  kube: KubeClient;
  /** The components' ServiceAccounts and their current tokens. */
  identities: Identities;
  /** In-process bus only: resolves when no delivery is pending. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const env = { ...LOCAL_DEFAULTS, ...process.env, ...opts.env };
  const log = opts.log ?? jsonLogger('furnish-local');
  const admin = { kubeconfigPath: opts.kubeconfigPath ?? env.KUBECONFIG?.split(':')[0], context: opts.context };
  const kube = await probeCluster(admin.kubeconfigPath, admin.context, INSTALL_USER_AGENT);
  // The webhooks' watchdog, starting while the rest installs; awaited before any registration (docs/adr/0010).
  const watchdogReady = opts.webhooks === false ? null : startRegistrationWatchdog(admin, log, opts.clusterPid === undefined ? {} : { clusterPid: opts.clusterPid });
  watchdogReady?.catch(() => {}); // its error is thrown where it is awaited
  if (opts.webhooks !== false) await removeStaleLocalRegistrations(kube, log);
  await ensureCrd(kube, log);
  await ensureFurnishNamespace(kube, log);
  await installIdentities(kube, log);
  const identities = await mintIdentities(kube, await connect(admin), log, opts.tokens);
  const emulator = opts.pubsubEmulatorHost ?? env.PUBSUB_EMULATOR_HOST;
  const busKind = opts.bus ?? (emulator ? 'pubsub' : 'memory');
  const config = { ...reconcileConfig({ ...env, FURNISH_PUSH_AUTH: 'off' }), pubsubProject: opts.pubsubProject ?? env.PUBSUB_PROJECT_ID ?? 'furnish-local' };
  if (busKind === 'pubsub' && !emulator) throw new Error('bus=pubsub locally needs PUBSUB_EMULATOR_HOST (gcloud beta emulators pubsub start --host-port=127.0.0.1:8085)');
  const memory = busKind === 'memory' ? (await import('../../shared/bus/memory.ts')).createMemoryBus({ log }) : undefined;
  const bus: Bus = memory ?? (await (await import('../../shared/bus/pubsub.ts')).createPubSubBus({ projectId: config.pubsubProject, emulatorHost: emulator, log, maxMilliseconds: 5 }));

  const reconcilers = await serveReconcilers({ credentials: identities.reconciler.credentials, config, bus, env, port: opts.port ?? readSetting(env, 'startPort'), log, kubeOptions: opts.faults ? { ...opts.kubeOptions, faults: opts.faults } : opts.kubeOptions });
  const { runtime, url: base } = reconcilers;
  if (memory) await memoryBusToPush(memory, config, base, billingTopic(env));
  else await emulatorPush(emulator!, config.pubsubProject, config, base, billingTopic(env));
  log.log('INFO', 'reconcilers served', { url: base, functions: RECONCILERS, bus: busKind, emulator });

  // No registration may exist that a SIGKILL of this process would leave failing closed.
  const watchdog = await watchdogReady;
  const webhooks = watchdog && await serveWebhooks(kube, identities, opts.webhookPort ?? readSetting(env, 'webhookPort'), env, log, watchdog.runId, { inTreePolicies: opts.inTreePolicies });
  const removeSuspendHandlers = webhooks && unregisterWhileSuspended(webhooks, log);
  const relay = await startRelay({
    config: { ...relayConfig(env), bus: busKind, pubsubProject: config.pubsubProject, port: opts.relayPort ?? readSetting(env, 'relayPort'), resyncSeconds: opts.resyncSeconds ?? readSetting(env, 'resyncSeconds') },
    kube: createKubeClient(await connect(identities.relay.credentials), opts.faults ? { faults: opts.faults } : {}),
    bus,
    log,
    env,
  });
  let stopped: Promise<void> | undefined;
  return {
    reconcilerUrl: base,
    ...(webhooks ? { webhookUrl: webhooks.url } : {}),
    inTreePolicies: webhooks?.inTree ?? false,
    closeWebhookServer: async () => {
      if (webhooks) await close(webhooks.server);
    },
    relay,
    bus,
    runtime,
    kube,
    identities,
    idle: () => memory?.idle() ?? Promise.resolve(),
    stop() {
      stopped ??= (async () => {
        identities.stop();
        await relay.stop();
        await memory?.idle();
        await bus.close();
        removeSuspendHandlers?.();
        // Each registration removed here: the watchdog has nothing left to do.
        if ((await webhooks?.stop()) !== false) watchdog?.release();
        await reconcilers.stop();
        identities.remove();
        kube.close();
        log.log('INFO', 'local stack stopped', {});
      })();
      return stopped;
    },
  };
}
