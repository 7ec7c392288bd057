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
  /** How long one delivery may run: the function's timeout and its push subscription's ack deadline. */
  deliveryTimeoutSeconds: number;
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

/** Kept at a delivery's end, after its last call's timeout, for its answer to get out. */
export const ANSWER_GRACE_MS = 2000;

/**
 * How long a delivery may send Kubernetes calls: its request timeout less one call's timeout and
 * a grace. It sends no call once Pub/Sub may deliver the message again (ADR 0009), and a call sent
 * at the window's end has had its answer or its timeout in time for the delivery to answer (503,
 * retried) before the request is cut.
 */
export function callWindowMs(deliveryTimeoutSeconds: number, callTimeoutMs: number): number {
  return deliveryTimeoutSeconds * 1000 - callTimeoutMs - ANSWER_GRACE_MS;
}

export function reconcileConfig(env: Env): ReconcileConfig {
  const mode = readSetting(env, 'pushAuth');
  const audience = readSetting(env, 'pushAudience');
  if (mode === 'oidc' && audience === '') throw settingProblem('pushAudience', "is required when FURNISH_PUSH_AUTH=oidc (the push subscription's audience)");
  const timeoutMs = readSetting(env, 'kubeTimeoutMs');
  const deliverySeconds = readSetting(env, 'deliveryTimeoutSeconds');
  const window = callWindowMs(deliverySeconds, timeoutMs);
  if (window < timeoutMs) throw settingProblem('deliveryTimeoutSeconds', `${deliverySeconds} s leaves ${Math.max(0, window)} ms for Kubernetes calls once one call's timeout (FURNISH_KUBE_TIMEOUT_MS, ${timeoutMs} ms) and ${ANSWER_GRACE_MS} ms are kept for the end: give at least ${Math.ceil((2 * timeoutMs + ANSWER_GRACE_MS) / 1000)} s, or a shorter FURNISH_KUBE_TIMEOUT_MS`);
  return {
    cluster: readSetting(env, 'clusterId'),
    clusters: readSetting(env, 'clusters'),
    systemNamespaces: readSetting(env, 'systemNamespaces'),
    topics: readTopics(env),
    pubsubProject: readSetting(env, 'pubsubProject'),
    push: { mode, issuer: readSetting(env, 'pushIssuer'), audience, jwksUrl: readSetting(env, 'pushJwksUrl'), serviceAccountEmail: readSetting(env, 'pushServiceAccount') },
    kube: { qps: readSetting(env, 'kubeQps'), maxInflight: readSetting(env, 'kubeMaxInflight'), timeoutMs },
    deliveryTimeoutSeconds: deliverySeconds,
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
