// The relay's settings, typed, read through the settings table (shared/config/settings.ts); pure:
// `env` is passed in. Its topics are the reconcilers' (shared/reconcile/config.ts).
import { readSetting } from '../../../shared/config/settings.ts';
import { readTopics, type Env, type Topics } from '../../../shared/reconcile/config.ts';
import { DEFAULT_DRIFT_RESOURCES } from './drift-watch.ts';

export type { Topics };

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
    topics: readTopics(env),
    shutdownMs: readSetting(env, 'shutdownMs'),
  };
}
