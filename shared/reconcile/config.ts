// Settings of the reconcilers, and the topics the relay shares with them (the relay's own:
// functions/watch-relay/lib/config.ts), typed, read through the settings table
// (config/settings.ts: variables, parsers, defaults); pure: `env` is passed in.
// Every variable is optional; the defaults run the local stack.
import { readSetting, settingProblem } from '../config/settings.ts';
import type { ClusterCredentialSource, PushAuthSettings } from '../config/types.ts';

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
  fanout: { concurrency: number; messagesPerSecond: number; progressEvery: number; pageSize: number };
}

/** Pub/Sub topics; without `lnamespaces` the relay does not watch LNamespaces. */
export interface Topics {
  namespaces: string;
  templates: string;
  lnamespaces?: string;
}

export type Env = Record<string, string | undefined>;

/** One topic per kind: every message about a namespace takes the namespaces topic, whose ordering key (cluster/Namespace/<name>) serializes its reconciles. */
export function readTopics(env: Env): Topics {
  return { namespaces: readSetting(env, 'topicNamespaces'), templates: readSetting(env, 'topicTemplates'), lnamespaces: readSetting(env, 'topicLnamespaces') };
}

export function reconcileConfig(env: Env): ReconcileConfig {
  const mode = readSetting(env, 'pushAuth');
  const audience = readSetting(env, 'pushAudience');
  if (mode === 'oidc' && audience === '') throw settingProblem('pushAudience', "is required when FURNISH_PUSH_AUTH=oidc (the push subscription's audience)");
  return {
    cluster: readSetting(env, 'clusterId'),
    clusters: readSetting(env, 'clusters'),
    systemNamespaces: readSetting(env, 'systemNamespaces'),
    topics: readTopics(env),
    pubsubProject: readSetting(env, 'pubsubProject'),
    push: { mode, issuer: readSetting(env, 'pushIssuer'), audience, jwksUrl: readSetting(env, 'pushJwksUrl'), serviceAccountEmail: readSetting(env, 'pushServiceAccount') },
    kube: { qps: readSetting(env, 'kubeQps'), maxInflight: readSetting(env, 'kubeMaxInflight'), timeoutMs: readSetting(env, 'kubeTimeoutMs') },
    applyConcurrency: readSetting(env, 'applyConcurrency'),
    readyDespiteFailures: readSetting(env, 'readyDespiteFailures'),
    statusIntervalMs: readSetting(env, 'statusIntervalMs'),
    fanout: {
      concurrency: readSetting(env, 'fanoutConcurrency'),
      messagesPerSecond: readSetting(env, 'fanoutRate'),
      progressEvery: readSetting(env, 'fanoutProgressEvery'),
      pageSize: readSetting(env, 'fanoutPageSize'),
    },
  };
}
