// Wiring of the reconcilers, shared by the Cloud Functions entries, the local stack and tests:
// one Kubernetes client per cluster (created on first use, kept across invocations), the push
// verifier, the bus the fan-out publishes to. No decisions here.
import { createPushVerifier, type PushVerifier } from '../auth/oidc.ts';
import type { Bus } from '../bus/types.ts';
import { clientCache, connect, createKubeClient, type KubeClient, type KubeClientOptions } from '../kube/client.ts';
import { credentialsFor, type SecretReader } from '../kube/credentials.ts';
import { ResourceResolver } from '../kube/resources.ts';
import { cachedAuthorizer, createSarAuthorizer, type Authorizer } from '../kube/sar.ts';
import { callWindowMs, type ReconcileConfig } from './config.ts';
import type { Logger } from '../log.ts';
import { coalescer, gatherNotices, type RunHistory } from './concurrency.ts';
import { encodeMessage, statusMessage, type ReconcileMessage } from '../bus/envelope.ts';
import { reconcileNamespace, type NamespaceResult } from './namespace.ts';
import { reconcileTemplate, type TemplateResult } from './template.ts';
import { fanoutNeeded } from './fanout.ts';

export interface ClusterHandle {
  kube: KubeClient;
  resolver: ResourceResolver;
  authorizer: Authorizer;
}

export interface Runtime {
  config: ReconcileConfig;
  log: Logger;
  verify: PushVerifier;
  cluster(name: string): Promise<ClusterHandle>;
  namespace(msg: ReconcileMessage): Promise<NamespaceResult>;
  template(msg: ReconcileMessage): Promise<TemplateResult>;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  config: ReconcileConfig;
  log: Logger;
  /** The bus reconcile-template publishes to; created on first use. */
  bus: () => Promise<Bus>;
  /** Override how a cluster's client is made (tests, the local stack). */
  kubeFor?: (cluster: string) => Promise<KubeClient>;
  readSecret?: SecretReader;
  kubeOptions?: KubeClientOptions;
  verify?: PushVerifier;
}

const NOTIFY_TIMEOUT_MS = 3000;
/** How long an instance gathers its namespaces' notices before it sends them. */
const NOTICE_WINDOW_MS = 100;

/** Interval between two recounts of one template, in multiples of a recount's duration. */
const RECOUNT_SHARE = 5;

/**
 * Least time between the starts of two recounts of one template: a fifth of the time at most, by
 * the last recount's cost while namespaces keep converging; once they have gone quiet, by what a
 * recount costs with nothing competing (the shortest of the last few), since the last one may
 * have run beside the fan-out it counts and taken several times that: the recount that ends a
 * fan-out then waits for it, not for five times a slow one.
 */
export function recountInterval(floorMs: number, ceilingMs = Infinity): (history: RunHistory) => number {
  return (h) => Math.min(ceilingMs, Math.max(floorMs, RECOUNT_SHARE * (h.quiet ? h.shortestMs : h.lastMs)));
}

export function createRuntime(opts: RuntimeOptions): Runtime {
  const { config, log } = opts;
  const kubeFor = opts.kubeFor ?? (async (cluster: string) => {
    const creds = await credentialsFor(cluster, config.clusters, opts.readSecret);
    return createKubeClient(await connect(creds), { pacing: { maxPerSecond: config.kube.qps, maxInflight: config.kube.maxInflight }, timeoutMs: config.kube.timeoutMs, ...opts.kubeOptions });
  });
  const clients = clientCache(async (cluster): Promise<ClusterHandle> => {
    const kube = await kubeFor(cluster);
    return { kube, resolver: new ResourceResolver(kube), authorizer: cachedAuthorizer(createSarAuthorizer((c) => kube.http(c)), { ttlMs: 10_000 }) };
  });
  let bus: Promise<Bus> | undefined;
  const busOnce = (): Promise<Bus> => (bus ??= opts.bus());
  const verify = opts.verify ?? createPushVerifier(config.push);
  // STATUS messages arrive in bursts (one per namespace converging): recounts of one template that
  // would start while another is queued share it, and it starts after every message it answers.
  // A recount reads every namespace and the template's objects cluster-wide: at most one per
  // interval (recountInterval; a recount of a large cluster during a fan-out competes with the
  // fan-out's own writes). No STATUS for an interval: the burst is over.
  // At most half a delivery's time for calls after the last one started: a queued recount rarely starts past its queuer's window.
  const recount = coalescer<TemplateResult>({ intervalMs: recountInterval(config.statusIntervalMs, callWindowMs(config.deliveryTimeoutSeconds, config.kube.timeoutMs) / 2), quietMs: config.statusIntervalMs });
  // Best effort and bounded: a lost STATUS message costs a late status (the next resync recounts), never the namespace's ack.
  const publishNotices = async (cluster: string, cause: string, templates: string[]) => {
    const b = await busOnce();
    const sent = Promise.all(templates.map((name) => b.publish(config.topics.templates, encodeMessage(statusMessage(cluster, name, cause)))));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`publishing STATUS took longer than ${NOTIFY_TIMEOUT_MS} ms`)), NOTIFY_TIMEOUT_MS); });
    try {
      const results = await Promise.race([sent, late]);
      const failed = results.filter((r) => !r.ok).length;
      if (failed > 0) throw new Error(`${failed} of ${templates.length} STATUS publishes failed`);
    } finally {
      clearTimeout(timer);
    }
  };
  // A fan-out's namespaces converge together: the notices of one instance within a short window go
  // out as one STATUS message per template, not one per namespace (each reconcile waits for it).
  const notices = new Map<string, (namespace: string, templates: string[]) => Promise<void>>();
  const notifyTemplates = (cluster: string, namespace: string) => (templates: string[]) => {
    let gather = notices.get(cluster);
    if (!gather) notices.set(cluster, (gather = gatherNotices(NOTICE_WINDOW_MS, (cause, all) => publishNotices(cluster, cause, all))));
    return gather(namespace, templates);
  };
  return {
    config,
    log,
    verify,
    cluster: clients,
    async namespace(msg) {
      const c = await clients(msg.cluster || config.cluster);
      const cluster = msg.cluster || config.cluster;
      const deps = { kube: c.kube, resolver: c.resolver, authorizer: c.authorizer, systemNamespaces: config.systemNamespaces, applyConcurrency: config.applyConcurrency, readyDespiteFailures: config.readyDespiteFailures, notifyTemplates: notifyTemplates(cluster, msg.name), log };
      return reconcileNamespace(deps, msg.name, { resourceVersion: msg.resourceVersion });
    },
    async template(msg) {
      const c = await clients(msg.cluster || config.cluster);
      const b = await busOnce();
      const run = () => reconcileTemplate({
        kube: c.kube,
        resolver: c.resolver,
        bus: b,
        cluster: msg.cluster || config.cluster,
        namespaceTopic: config.topics.namespaces,
        systemNamespaces: config.systemNamespaces,
        concurrency: config.fanout.concurrency,
        messagesPerSecond: config.fanout.messagesPerSecond,
        progressEvery: config.fanout.progressEvery,
        pageSize: config.fanout.pageSize,
        log,
      }, msg.name, { fanOut: fanoutNeeded(msg.type) });
      if (msg.type !== 'STATUS') return run();
      // A recount queued to start later answers this message too: acknowledge at once, so that a
      // burst of STATUS messages holds one delivery, not one each.
      const key = `${msg.cluster}/${msg.name}`;
      if (recount.join(key)) return { template: msg.name, deleted: false, fannedOut: false, published: 0, targets: 0, statusWritten: false, coalesced: true };
      return recount(key, run);
    },
    async close() {
      if (bus) await (await bus).close();
    },
  };
}
