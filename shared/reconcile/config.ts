// Settings of the reconcilers and the relay, typed, from the environment (pure: `env` is passed in).
// Every variable is optional; the defaults run the local stack.
import type { ClusterCredentialSource, PushAuthSettings } from '../config/types.ts';
import { DEFAULT_DRIFT_RESOURCES } from './drift-watch.ts';
import { DEFAULT_MAX_INFLIGHT, DEFAULT_MAX_PER_SECOND } from '../kube/pacing.ts';

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
}

type Env = Record<string, string | undefined>;

function num(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number ≥ ${min}, got ${JSON.stringify(raw)}`);
  return n;
}

function list(env: Env, name: string): string[] {
  return (env[name] ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
}

function json<T>(env: Env, name: string, fallback: T): T {
  const raw = env[name];
  if (!raw) return fallback;
  try {
    return JSON.parse(raw) as T;
  } catch (e) {
    throw new Error(`${name} is not valid JSON: ${(e as Error).message}`, { cause: e });
  }
}

function topics(env: Env): Topics {
  return { namespaces: env.FURNISH_TOPIC_NAMESPACES ?? 'furnish-namespaces', templates: env.FURNISH_TOPIC_TEMPLATES ?? 'furnish-templates', lnamespaces: env.FURNISH_TOPIC_LNAMESPACES ?? 'furnish-lnamespaces' };
}

function project(env: Env): string {
  return env.FURNISH_PUBSUB_PROJECT ?? env.GOOGLE_CLOUD_PROJECT ?? env.PUBSUB_PROJECT_ID ?? 'furnish-local';
}

export function reconcileConfig(env: Env): ReconcileConfig {
  const mode = env.FURNISH_PUSH_AUTH ?? 'oidc';
  if (mode !== 'oidc' && mode !== 'off') throw new Error(`FURNISH_PUSH_AUTH must be oidc or off, got ${JSON.stringify(mode)}`);
  const audience = env.FURNISH_PUSH_AUDIENCE ?? '';
  if (mode === 'oidc' && audience === '') throw new Error('FURNISH_PUSH_AUDIENCE is required when FURNISH_PUSH_AUTH=oidc (the push subscription\'s audience)');
  return {
    cluster: env.FURNISH_CLUSTER ?? 'local',
    clusters: json<Record<string, ClusterCredentialSource>>(env, 'FURNISH_CLUSTERS', {}),
    systemNamespaces: list(env, 'FURNISH_SYSTEM_NAMESPACES'),
    topics: topics(env),
    pubsubProject: project(env),
    push: {
      mode,
      issuer: env.FURNISH_PUSH_ISSUER ?? 'https://accounts.google.com',
      audience,
      jwksUrl: env.FURNISH_PUSH_JWKS_URL ?? 'https://www.googleapis.com/oauth2/v3/certs',
      serviceAccountEmail: env.FURNISH_PUSH_SERVICE_ACCOUNT || undefined,
    },
    kube: { qps: num(env, 'FURNISH_KUBE_QPS', DEFAULT_MAX_PER_SECOND, 1), maxInflight: num(env, 'FURNISH_KUBE_MAX_INFLIGHT', DEFAULT_MAX_INFLIGHT, 1), timeoutMs: num(env, 'FURNISH_KUBE_TIMEOUT_MS', 10_000, 100) },
    applyConcurrency: num(env, 'FURNISH_APPLY_CONCURRENCY', 8, 1),
    readyDespiteFailures: env.FURNISH_READY_DESPITE_FAILURES === 'true',
    statusIntervalMs: num(env, 'FURNISH_STATUS_INTERVAL_MS', 1000),
    fanout: {
      concurrency: num(env, 'FURNISH_FANOUT_CONCURRENCY', 64, 1),
      messagesPerSecond: num(env, 'FURNISH_FANOUT_RATE', 2000, 1),
      progressEvery: num(env, 'FURNISH_FANOUT_PROGRESS_EVERY', 2000, 1),
      pageSize: num(env, 'FURNISH_LIST_PAGE_SIZE', 500, 1),
    },
  };
}

export function relayConfig(env: Env): RelayConfig {
  const bus = env.FURNISH_BUS ?? (env.PUBSUB_EMULATOR_HOST || env.GOOGLE_CLOUD_PROJECT ? 'pubsub' : 'memory');
  if (bus !== 'memory' && bus !== 'pubsub') throw new Error(`FURNISH_BUS must be memory or pubsub, got ${JSON.stringify(bus)}`);
  return {
    cluster: env.FURNISH_CLUSTER ?? 'local',
    resyncSeconds: num(env, 'FURNISH_RESYNC_SECONDS', 600),
    watchTimeoutSeconds: num(env, 'FURNISH_WATCH_TIMEOUT_SECONDS', 300, 1),
    watchSilenceSeconds: num(env, 'FURNISH_WATCH_SILENCE_SECONDS', 180),
    pendingRedriveSeconds: num(env, 'FURNISH_PENDING_REDRIVE_SECONDS', 60),
    driftResources: env.FURNISH_DRIFT_RESOURCES === undefined ? [...DEFAULT_DRIFT_RESOURCES] : list(env, 'FURNISH_DRIFT_RESOURCES'),
    pageSize: num(env, 'FURNISH_LIST_PAGE_SIZE', 500, 1),
    port: num(env, 'PORT', 8080),
    bus,
    pubsubProject: project(env),
    topics: topics(env),
    shutdownMs: num(env, 'FURNISH_SHUTDOWN_MS', 10_000),
  };
}
