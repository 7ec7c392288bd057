// The keys and values pluggable namespace initializers add. Kept here, not in shared/keys.ts, so
// that this feature merges on its own; the phase `failed` and `furnish.dev/failure` are shared
// with the reconciler's own failure reporting.
import { PHASE } from '../keys.ts';

export const INITIALIZER_KEY = {
  /** annotation on a namespace: the initializers still to run, in order, comma-separated; set at CREATE by mutate-namespace. */
  initializers: 'furnish.dev/initializers',
  /** annotation on a namespace: why it failed (`<initializer>: <reason>`); set with phase `failed`. */
  failure: 'furnish.dev/failure',
  /** annotation on a namespace: an initializer reports its own failure (`<initializer>: <reason>`). */
  initializerFailed: 'furnish.dev/initializer-failed',
} as const;

export const INIT_PHASE = { ...PHASE, failed: 'failed' } as const;

/** Furnish's own template population: always the first initializer. */
export const FURNISH_INITIALIZER = 'furnish';

export const CONFIG_KIND = 'NamespaceInitializationConfiguration';
export const CONFIG_RESOURCE = 'namespaceinitializationconfigurations';
