// Settings of the reconcilers and the relay, typed, read through the settings table
// (config/settings.ts: variables, parsers, defaults); pure: `env` is passed in.
// Every variable is optional; the defaults run the local stack.
import { readSetting, settingProblem } from '../config/settings.ts';
import type { ClusterCredentialSource, PushAuthSettings } from '../config/types.ts';
import { DEFAULT_DRIFT_RESOURCES } from './drift-watch.ts';

export type { ClusterCredentialSource, PushAuthSettings };

export interface ReconcileConfig {
  /** Cluster name used when a message names none, and by the local stack. */
  cluster: string;
  clusters: Record<string, ClusterCredentialSource>;
  systemNamespaces: string[];
  topics: Topics;
  pubsubProject: string;
  push: PushAuthSettings;
  /** Ceilings of the adaptive pacing (shared/kube/pacing.ts): requests per second and in flight. */
  kube: { qps: number; maxInflight: number; timeoutMs: number };
  /** Objects applied in parallel inside one namespace. */
  applyConcurrency: number;
  /** Set phase=ready even when a template failed permanently (default: phase failed). */
  readyDespiteFailures: boolean;
  /** Least time between two status recounts of one template prompted by namespaces (STATUS messages). */
  statusIntervalMs: number;
  fanout: { concurrency: number; messagesPerSecond: number; batch: number; progressEvery: number; pageSize: number };
}

export interface RelayConfig {
  cluster: string;
  /** Full resync period; 0 disables it. */
  resyncSeconds: number;
  /** Server-side timeout of one watch request; the relay reconnects after it. */
  watchTimeoutSeconds: number;
  /** A watch that delivered nothing, not even a bookmark, for this long is presumed dead and relisted (0: never). */
  watchSilenceSeconds: number;
  /** A namespace still pending this long after its last message is published again (0: never). */
  pendingRedriveSeconds: number;
  /** Kinds watched by Furnish's label for drift (`plural` core, `plural.group/version`); empty: none. */
  driftResources: string[];
  pageSize: number;
  port: number;
  bus: 'memory' | 'pubsub';
  pubsubProject: string;
  topics: Topics;
  /** Grace period for flushing on SIGTERM. */
  shutdownMs: number;
}

/** Pub/Sub topics; without `lnamespaces` the relay does not watch LNamespaces. */
export interface Topics {
  namespaces: string;
  templates: string;
  lnamespaces?: string;
  /** Namespaces a user is waiting on (pending), on their own subscription: never behind a resync. Without it they share `namespaces`. */
  pending?: string;
}

type Env = Record<string, string | undefined>;

function topics(env: Env): Topics {
  return { namespaces: readSetting(env, 'topicNamespaces'), templates: readSetting(env, 'topicTemplates'), lnamespaces: readSetting(env, 'topicLnamespaces'), pending: readSetting(env, 'topicPending') };
}

export function reconcileConfig(env: Env): ReconcileConfig {
  const mode = readSetting(env, 'pushAuth');
  const audience = readSetting(env, 'pushAudience');
  if (mode === 'oidc' && audience === '') throw settingProblem('pushAudience', "is required when FURNISH_PUSH_AUTH=oidc (the push subscription's audience)");
  return {
    cluster: readSetting(env, 'clusterId'),
    clusters: readSetting(env, 'clusters'),
    systemNamespaces: readSetting(env, 'systemNamespaces'),
    topics: topics(env),
    pubsubProject: readSetting(env, 'pubsubProject'),
    push: { mode, issuer: readSetting(env, 'pushIssuer'), audience, jwksUrl: readSetting(env, 'pushJwksUrl'), serviceAccountEmail: readSetting(env, 'pushServiceAccount') },
    kube: { qps: readSetting(env, 'kubeQps'), maxInflight: readSetting(env, 'kubeMaxInflight'), timeoutMs: readSetting(env, 'kubeTimeoutMs') },
    applyConcurrency: readSetting(env, 'applyConcurrency'),
    readyDespiteFailures: readSetting(env, 'readyDespiteFailures'),
    statusIntervalMs: readSetting(env, 'statusIntervalMs'),
    fanout: {
      concurrency: readSetting(env, 'fanoutConcurrency'),
      messagesPerSecond: readSetting(env, 'fanoutRate'),
      batch: readSetting(env, 'fanoutBatch'),
      progressEvery: readSetting(env, 'fanoutProgressEvery'),
      pageSize: readSetting(env, 'fanoutPageSize'),
    },
  };
}

export function relayConfig(env: Env): RelayConfig {
  return {
    cluster: readSetting(env, 'clusterId'),
    resyncSeconds: readSetting(env, 'resyncSeconds'),
    watchTimeoutSeconds: readSetting(env, 'watchTimeoutSeconds'),
    watchSilenceSeconds: readSetting(env, 'watchSilenceSeconds'),
    pendingRedriveSeconds: readSetting(env, 'pendingRedriveSeconds'),
    driftResources: readSetting(env, 'driftResources') ?? [...DEFAULT_DRIFT_RESOURCES],
    pageSize: readSetting(env, 'listPageSize'),
    port: readSetting(env, 'port'),
    bus: readSetting(env, 'bus'),
    pubsubProject: readSetting(env, 'pubsubProject'),
    topics: topics(env),
    shutdownMs: readSetting(env, 'shutdownMs'),
  };
}
