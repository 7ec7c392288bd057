// `npm start`: the whole of Furnish on this machine, against the current kubeconfig.
//   - every function served locally with the Functions Framework: the reconcilers over HTTP
//     (Pub/Sub push format), the admission webhooks over HTTPS with a generated certificate and
//     registered in the cluster;
//   - the watch relay;
//   - the in-process bus, or the Pub/Sub emulator when PUBSUB_EMULATOR_HOST is set (topics and
//     push subscriptions to the local reconcilers are created);
//   - structured JSON logs on stdout.
// With no reachable cluster (and no KUBECONFIG naming one) it starts the project's test cluster
// itself (scripts/local-cluster.ts); a KUBECONFIG that names an unreachable cluster is an error.
//
// `startLocalStack()` is also what the integration tests and the benchmark run.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { parseAllDocuments } from 'yaml';
import type { Bus, SubscribableBus } from '../shared/bus/types.ts';
import { bearerCredentials, connect, createKubeClient, type FaultHook, type KubeClient, type KubeClientOptions } from '../shared/kube/client.ts';
import { KEY } from '../shared/keys.ts';
import type { KubeObject } from '../shared/kube/types.ts';
import { contentHash } from '../shared/render/index.ts';
import { reconcileConfig, relayConfig, type ReconcileConfig } from '../shared/reconcile/config.ts';
import { useRuntime } from '../shared/reconcile/functions.ts';
import { jsonLogger, type Logger } from '../shared/log.ts';
import { createRuntime, type Runtime } from '../shared/reconcile/runtime.ts';
import type { RunningRelay } from '../functions/watch-relay/index.ts';
import { localReconcilerPrincipals } from './local-identity.ts';
import { WEBHOOKS } from '../shared/config/types.ts';
import { billingRuntime, RECORD_BILLING, useBillingRuntime } from '../shared/billing/function.ts';

const ROOT = join(import.meta.dirname, '..');
const RECONCILERS = ['reconcile-namespace', 'reconcile-template', 'reconcile-organization', 'reconcile-lnamespace'] as const;
/** The relay's billing topic (README, Billing). */
const billingTopic = () => process.env.FURNISH_TOPIC_BILLING || 'furnish-billing';
const WEBHOOK_NAMES = WEBHOOKS;

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

export class NoClusterError extends Error {}

/** Says whether a cluster answers, and how to get one if not. */
export async function probeCluster(kubeconfigPath?: string, context?: string): Promise<KubeClient> {
  let kube: KubeClient;
  try {
    kube = createKubeClient(await connect({ kubeconfigPath, context }), { retry: { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 }, timeoutMs: 3000 });
  } catch (e) {
    throw new NoClusterError(noClusterMessage(`no usable kubeconfig (${(e as Error).message})`), { cause: e });
  }
  const res = await kube.call({ method: 'GET', path: '/version' });
  if (res.status === 0 || res.status >= 500) {
    kube.close();
    throw new NoClusterError(noClusterMessage(`nothing answers at ${kube.server} (${res.error ?? `HTTP ${res.status}`})`));
  }
  return kube;
}

function noClusterMessage(why: string): string {
  return [
    `No Kubernetes cluster is reachable: ${why}.`,
    'KUBECONFIG names this cluster, so npm start does not start its own test cluster in its place.',
    'Start that cluster, or select a reachable one with `kubectl config use-context <name>`, or unset',
    'KUBECONFIG to let npm start run the project\'s test cluster (kube-sim) itself; then run `npm start` again.',
  ].join('\n');
}

/**
 * Creates Furnish's own namespace (infra/namespace.yaml) before any webhook is registered, so that
 * nobody else can claim it first: the webhooks exempt it by its name.
 */
async function ensureFurnishNamespace(kube: KubeClient, log: Logger): Promise<void> {
  const ns = parseAllDocuments(readFileSync(join(ROOT, 'infra/namespace.yaml'), 'utf8'))[0]!.toJS() as KubeObject;
  const res = await kube.call({ method: 'PATCH', path: `/api/v1/namespaces/${ns.metadata.name}`, query: { fieldManager: 'furnish', force: true }, contentType: 'application/apply-patch+yaml', body: ns });
  log.log(res.ok ? 'INFO' : 'ERROR', res.ok ? 'Furnish namespace ready' : 'could not create the Furnish namespace', { name: ns.metadata.name, status: res.status, error: res.error });
}

const CRD_FILES = {
  namespacetemplates: 'infra/crds/namespacetemplates.yaml',
  organizations: 'infra/crds/organizations.yaml',
  namespaceinitializationconfigurations: 'infra/crds/namespaceinitializationconfigurations.yaml',
  lnamespaces: 'infra/crds/lnamespaces.yaml',
};

/**
 * Installs each of Furnish's CRDs that the cluster does not serve in this version (absent, or
 * installed by an older checkout: its content hash annotation differs); otherwise writes nothing.
 */
export async function ensureCrd(kube: KubeClient, log: Logger): Promise<void> {
  const docs = Object.values(CRD_FILES).flatMap((file) => parseAllDocuments(readFileSync(join(ROOT, file), 'utf8')).map((d) => d.toJS() as KubeObject));
  for (const crd of docs) {
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
    const hash = contentHash(crd).slice(0, 32);
    const served = await kube.call<KubeObject>({ method: 'GET', path });
    if (served.ok && served.data?.metadata.annotations?.[KEY.appliedHash] === hash) continue;
    const body = { ...crd, metadata: { ...crd.metadata, annotations: { ...crd.metadata.annotations, [KEY.appliedHash]: hash } } };
    const res = await kube.call({ method: 'PATCH', path, query: { fieldManager: 'furnish', force: true }, contentType: 'application/apply-patch+yaml', body });
    log.log(res.ok ? 'INFO' : 'ERROR', res.ok ? 'installed CRD' : 'could not install CRD', { name: crd.metadata.name, status: res.status, error: res.error });
  }
  const servedAll = async () => {
    const r = await kube.call<{ resources?: Array<{ name: string }> }>({ method: 'GET', path: '/apis/furnish.dev/v1alpha1' });
    const names = new Set((r.data?.resources ?? []).map((x) => x.name));
    return r.ok && Object.keys(CRD_FILES).every((plural) => names.has(plural));
  };
  for (let i = 0; i < 100 && !(await servedAll()); i++) await new Promise((r) => setTimeout(r, 100));
}

async function listen(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const a = server.address();
  return typeof a === 'object' && a ? a.port : port;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections?.();
  await new Promise<void>((r) => server.close(() => r()));
}

/** One listener routing `/<function>` to the Functions Framework server of that function. */
async function functionRouter(names: readonly string[]): Promise<RequestListener> {
  const { getTestServer } = await import('@google-cloud/functions-framework/testing');
  const routes = new Map(names.map((n) => [n, getTestServer(n).listeners('request')[0] as RequestListener]));
  return (req: IncomingMessage, res: ServerResponse) => {
    const name = (req.url ?? '/').split('/')[1]?.split('?')[0] ?? '';
    const route = routes.get(name);
    if (!route) return void res.writeHead(404, { 'content-type': 'text/plain' }).end(`no function ${name}; have ${[...routes.keys()].join(', ')}\n`);
    route(req, res);
  };
}

/** Pub/Sub push format, as the emulator and Pub/Sub deliver it. */
function pushBody(d: { id: string; data: Buffer; attributes: Record<string, string>; orderingKey: string }, subscription: string): string {
  return JSON.stringify({ message: { data: d.data.toString('base64'), attributes: d.attributes, messageId: d.id, orderingKey: d.orderingKey }, subscription });
}

export async function memoryBusToPush(bus: SubscribableBus, config: ReconcileConfig, base: string): Promise<void> {
  const route = (topic: string, fn: string) =>
    bus.subscribe(topic, async (d) => {
      const res = await fetch(`${base}/${fn}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: pushBody(d, `projects/local/subscriptions/${fn}`) });
      await res.arrayBuffer();
      if (res.status >= 300) throw new Error(`${fn} answered HTTP ${res.status}`);
    }, { concurrency: 64, maxAttempts: 20, minBackoffMs: 100, maxBackoffMs: 10_000 });
  route(config.topics.namespaces, 'reconcile-namespace');
  route(config.topics.templates, 'reconcile-template');
  route(config.topics.namespaces, 'reconcile-organization');
  route(billingTopic(), RECORD_BILLING);
  if (config.topics.lnamespaces) route(config.topics.lnamespaces, 'reconcile-lnamespace');
}

async function emulatorPush(host: string, project: string, config: ReconcileConfig, base: string): Promise<void> {
  const rest = async (path: string, body?: unknown) => {
    const r = await fetch(`http://${host}/v1/projects/${project}/${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
    if (!r.ok && r.status !== 409) throw new Error(`Pub/Sub emulator PUT ${path}: HTTP ${r.status} ${await r.text()}`);
  };
  const routes = [[config.topics.namespaces, 'reconcile-namespace'], [config.topics.templates, 'reconcile-template'], [config.topics.namespaces, 'reconcile-organization'], [billingTopic(), RECORD_BILLING], ...(config.topics.lnamespaces ? [[config.topics.lnamespaces, 'reconcile-lnamespace']] : [])] as const;
  for (const [topic, fn] of routes) {
    await rest(`topics/${topic}`);
    // Recreated each start so the endpoint (port) is current.
    await fetch(`http://${host}/v1/projects/${project}/subscriptions/${fn}`, { method: 'DELETE' });
    await rest(`subscriptions/${fn}`, { topic: `projects/${project}/topics/${topic}`, pushConfig: { pushEndpoint: `${base}/${fn}` }, enableMessageOrdering: true, ackDeadlineSeconds: 60, retryPolicy: { minimumBackoff: '1s', maximumBackoff: '10s' } });
  }
}

/** The kubectl command that deletes these webhook registrations. */
export function removeRegistrationsCommand(configs: readonly KubeObject[]): string {
  const names = (kind: string) => configs.filter((c) => c.kind === kind).map((c) => c.metadata.name).join(' ');
  return [['MutatingWebhookConfiguration', 'mutatingwebhookconfiguration'], ['ValidatingWebhookConfiguration', 'validatingwebhookconfiguration']]
    .filter(([kind]) => names(kind!) !== '').map(([kind, resource]) => `kubectl delete ${resource} ${names(kind!)}`).join('; ');
}

interface Webhooks {
  server: Server;
  stop(): Promise<void>;
}

/**
 * Serves the webhook functions over HTTPS with a certificate made for 127.0.0.1 and registers them.
 * kube-apiserver cannot be told to send a bearer token to a URL webhook without its own admission
 * configuration, so locally the URL carries a random path secret and this shim turns it into the
 * webhook JWT (HS256, local secret). Local only: the cloud deployment verifies the real token.
 */
async function serveWebhooks(kube: KubeClient, credentials: { kubeconfigPath?: string; context?: string }, port: number, env: Record<string, string | undefined>, log: Logger): Promise<Webhooks | null> {
  const dir = mkdtempSync(join(tmpdir(), 'furnish-start-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=furnish-local', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  } catch (e) {
    log.log('WARNING', 'openssl is not available: webhooks not served', { error: (e as Error).message });
    return null;
  }
  const key = readFileSync(join(dir, 'key.pem'));
  const cert = readFileSync(join(dir, 'cert.pem'));
  rmSync(dir, { recursive: true, force: true });
  const secret = randomBytes(32).toString('hex');
  const pathSecret = randomBytes(16).toString('hex');
  const server = createHttpsServer({ key, cert });
  const actualPort = await listen(server, port);
  const publicUrl = `https://127.0.0.1:${actualPort}`;
  // The webhooks ask the API server (SubjectAccessReviews, templates) as the kubeconfig's user.
  const api = await bearerCredentials(credentials);
  Object.assign(process.env, { FURNISH_CLUSTER_ID: env.FURNISH_CLUSTER_ID ?? 'local', FURNISH_JWT_SECRET: secret, FURNISH_PUBLIC_URL: publicUrl, FURNISH_API_SERVER: kube.server });
  process.env.FURNISH_GUARD_RECONCILER = env.FURNISH_GUARD_RECONCILER ?? await localReconcilerPrincipals(kube, log);
  // The local reconcilers (the LNamespace one creates namespaces for their requesters) are trusted creators.
  process.env.FURNISH_TRUSTED_CREATORS = env.FURNISH_TRUSTED_CREATORS ?? process.env.FURNISH_GUARD_RECONCILER;
  if (api.caPem) process.env.FURNISH_API_CA = api.caPem;
  if (api.token) process.env.FURNISH_API_TOKEN = api.token;
  const loaded: string[] = [];
  for (const name of WEBHOOK_NAMES) {
    if (!existsSync(join(ROOT, 'functions', name, 'index.ts'))) continue;
    try {
      await import(`../functions/${name}/index.ts`);
      loaded.push(name);
    } catch (e) {
      log.log('WARNING', 'webhook function did not load', { webhook: name, error: (e as Error).message });
    }
  }
  if (loaded.length === 0) {
    await close(server);
    return null;
  }
  const router = await functionRouter(loaded);
  const key256 = new TextEncoder().encode(secret);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const [path = '', query] = (req.url ?? '').split('?');
    const [, given, name, ...rest] = path.split('/');
    if (given !== pathSecret || !name) return void res.writeHead(404).end();
    void new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(env.FURNISH_CLUSTER_ID ?? 'local').setAudience(`${publicUrl}/${name}`).setIssuedAt().setExpirationTime('5m').sign(key256).then((jwt) => {
      req.headers.authorization = `Bearer ${jwt}`;
      req.url = `/${[name, ...rest].join('/')}${query === undefined ? '' : `?${query}`}`;
      router(req, res);
    });
  });
  // The webhook engineer's configurations (infra/webhooks), rendered for this local endpoint.
  const vars: Record<string, string> = { FURNISH_FUNCTIONS_URL: `${publicUrl}/${pathSecret}`, FURNISH_CA_BUNDLE: cert.toString('base64'), FURNISH_WEBHOOK_CREDENTIAL_PATH: '' };
  const configs = loaded.flatMap((name) => {
    const file = join(ROOT, 'infra/webhooks', `${name}.yaml`);
    if (!existsSync(file)) return [];
    const text = readFileSync(file, 'utf8').replace(/\$\{(FURNISH_[A-Z_]+)\}/g, (m, v: string) => vars[v] ?? m);
    return parseAllDocuments(text).map((d) => d.toJS() as KubeObject).filter((o) => o?.kind?.endsWith('WebhookConfiguration'));
  });
  for (const c of configs) {
    const plural = c.kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
    const res = await kube.call({ method: 'PATCH', path: `/apis/admissionregistration.k8s.io/v1/${plural}/${c.metadata.name}`, query: { fieldManager: 'furnish-local', force: true }, contentType: 'application/apply-patch+yaml', body: c });
    log.log(res.ok ? 'INFO' : 'WARNING', res.ok ? 'webhook registered' : 'could not register webhook', { kind: c.kind, name: c.metadata.name, status: res.status, error: res.error });
  }
  // Registered over any left by an earlier run (same names); a killed run leaves these behind, and
  // they fail closed: say how to remove them by hand.
  log.log('INFO', 'webhooks served', { url: publicUrl, webhooks: loaded, removeIfKilled: removeRegistrationsCommand(configs) });
  return {
    server,
    async stop() {
      // Unregistered on exit: a webhook pointing at a stopped local server would block namespace writes.
      for (const c of configs) {
        const plural = c.kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
        await kube.call({ method: 'DELETE', path: `/apis/admissionregistration.k8s.io/v1/${plural}/${c.metadata.name}`, retry: { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 } });
      }
      await close(server);
    },
  };
}

export interface ServedReconcilers {
  url: string;
  runtime: Runtime;
  stop(): Promise<void>;
}

/** reconcile-namespace and reconcile-template on one local HTTP server (push format, auth off). */
export async function serveReconcilers(opts: { credentials: { kubeconfigPath?: string; context?: string }; config: ReconcileConfig; bus: Bus; port: number; log: Logger; kubeOptions?: KubeClientOptions; env?: Record<string, string | undefined> }): Promise<ServedReconcilers> {
  const { config, log, credentials } = opts;
  const runtime = createRuntime({
    config,
    log,
    bus: async () => opts.bus,
    kubeFor: async () => createKubeClient(await connect(credentials), { pacing: { maxPerSecond: config.kube.qps, maxInflight: config.kube.maxInflight }, ...opts.kubeOptions }),
  });
  for (const name of RECONCILERS) {
    await import(`../functions/${name}/index.ts`);
    useRuntime(name, runtime);
  }
  await import('../functions/record-billing/index.ts');
  const billing = await billingRuntime(runtime, opts.env ?? process.env, log);
  useBillingRuntime(billing);
  const http = createHttpServer(await functionRouter([...RECONCILERS, RECORD_BILLING]));
  http.keepAliveTimeout = 65_000;
  const port = await listen(http, opts.port);
  return {
    url: `http://127.0.0.1:${port}`,
    runtime,
    async stop() {
      await close(http);
      await billing.deps.sink.close();
      (await runtime.cluster(config.cluster).catch(() => null))?.kube.close();
    },
  };
}

export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const env = { ...process.env, ...opts.env };
  const log = opts.log ?? jsonLogger('furnish-local');
  const kube = await probeCluster(opts.kubeconfigPath ?? env.KUBECONFIG?.split(':')[0], opts.context);
  await ensureCrd(kube, log);
  await ensureFurnishNamespace(kube, log);
  const emulator = opts.pubsubEmulatorHost ?? env.PUBSUB_EMULATOR_HOST;
  const busKind = opts.bus ?? (emulator ? 'pubsub' : 'memory');
  const config = { ...reconcileConfig({ ...env, FURNISH_PUSH_AUTH: 'off' }), pubsubProject: opts.pubsubProject ?? env.PUBSUB_PROJECT_ID ?? 'furnish-local' };
  if (busKind === 'pubsub') {
    if (!emulator) throw new Error('bus=pubsub locally needs PUBSUB_EMULATOR_HOST (gcloud beta emulators pubsub start --host-port=127.0.0.1:8085)');
    process.env.PUBSUB_EMULATOR_HOST = emulator;
  }
  const memory = busKind === 'memory' ? (await import('../shared/bus/memory.ts')).createMemoryBus({ log }) : undefined;
  const bus: Bus = memory ?? (await (await import('../shared/bus/pubsub.ts')).createPubSubBus({ projectId: config.pubsubProject, log, maxMilliseconds: 5 }));

  const credentials = { kubeconfigPath: opts.kubeconfigPath ?? env.KUBECONFIG?.split(':')[0], context: opts.context };
  const reconcilers = await serveReconcilers({ credentials, config, bus, env, port: opts.port ?? Number(env.FURNISH_START_PORT ?? 8080), log, kubeOptions: opts.faults ? { ...opts.kubeOptions, faults: opts.faults } : opts.kubeOptions });
  const { runtime, url: base } = reconcilers;
  if (memory) await memoryBusToPush(memory, config, base);
  else await emulatorPush(emulator!, config.pubsubProject, config, base);
  log.log('INFO', 'reconcilers served', { url: base, functions: RECONCILERS, bus: busKind, emulator });

  const webhooks = opts.webhooks === false ? null : await serveWebhooks(kube, credentials, opts.webhookPort ?? Number(env.FURNISH_WEBHOOK_PORT ?? 8443), env, log);
  const { startRelay } = await import('../functions/watch-relay/index.ts');
  const relay = await startRelay({
    config: { ...relayConfig(env), bus: busKind, pubsubProject: config.pubsubProject, port: opts.relayPort ?? Number(env.FURNISH_RELAY_PORT ?? 8081), resyncSeconds: opts.resyncSeconds ?? Number(env.FURNISH_RESYNC_SECONDS ?? 600) },
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

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const log = jsonLogger('furnish-local');
  const { chooseCluster, embeddedClusterBanner, portInUseMessage, startEmbeddedCluster } = await import('./local-cluster.ts');
  let embedded: Awaited<ReturnType<typeof startEmbeddedCluster>> | undefined;
  try {
    const unreachable = await probeCluster(process.env.KUBECONFIG?.split(':')[0]).then(
      (kube) => void kube.close(),
      (e: unknown) => {
        if (e instanceof NoClusterError) return e;
        throw e;
      },
    );
    const choice = chooseCluster(unreachable === undefined, process.env);
    if (choice.kind === 'refuse') throw unreachable;
    if (choice.kind === 'embedded') {
      embedded = await startEmbeddedCluster(process.env.FURNISH_STATE_DIR ?? join(ROOT, '.furnish'));
      process.stdout.write(embeddedClusterBanner(embedded));
    }
    const stack = await startLocalStack({ log, kubeconfigPath: embedded?.kubeconfigPath });
    log.log('INFO', 'Furnish is running: create a namespace (kubectl create namespace team-a) and watch it get furnished', { reconcilers: stack.reconcilerUrl, relay: `http://127.0.0.1:${stack.relay.port}/metrics`, kubeconfig: embedded?.kubeconfigPath });
    const shutdown = () => {
      const t = setTimeout(() => process.exit(1), 15_000);
      t.unref();
      void stack.stop().then(() => embedded?.stop()).then(() => process.exit(0));
    };
    process.once('SIGINT', shutdown);
    process.once('SIGTERM', shutdown);
  } catch (e) {
    const message = e instanceof NoClusterError ? e.message : portInUseMessage(e, process.env);
    if (message === undefined) throw e;
    process.stderr.write(`\n${message}\n\n`);
    await embedded?.stop();
    process.exit(2);
  }
}
