// Retry and backoff policies as data, and the pure arithmetic on them.

export interface RetryPolicy {
  /** Total attempts including the first; 1 = never retry. */
  attempts: number;
  baseMs: number;
  maxMs: number;
  factor: number;
  /** 0..1: fraction of the delay that is randomised ("equal jitter"). */
  jitter: number;
}

/** API calls inside one delivery: short, because Pub/Sub redelivery is the outer loop. */
export const API_RETRY: RetryPolicy = { attempts: 4, baseMs: 100, maxMs: 2_000, factor: 2, jitter: 0.5 };
/** Watch reconnects in the relay: never give up, cap at 30 s. */
export const WATCH_RECONNECT: RetryPolicy = { attempts: Number.POSITIVE_INFINITY, baseMs: 250, maxMs: 30_000, factor: 2, jitter: 0.5 };
/** Publishing from the relay: a lost message is repaired by the next resync. */
export const PUBLISH_RETRY: RetryPolicy = { attempts: 5, baseMs: 100, maxMs: 5_000, factor: 2, jitter: 0.5 };

/**
 * Delay before attempt `attempt + 1` (attempt counts from 1). A server's Retry-After wins when
 * it is longer, capped at maxMs so a hostile value cannot stall a delivery.
 */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number = Math.random, retryAfterSeconds?: number): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * policy.factor ** Math.max(0, attempt - 1));
  const delay = exp * (1 - policy.jitter) + exp * policy.jitter * random();
  const server = retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) ? Math.min(policy.maxMs, retryAfterSeconds * 1000) : 0;
  return Math.round(Math.max(delay, server));
}

export function hasAttemptsLeft(policy: RetryPolicy, attempt: number): boolean {
  return attempt < policy.attempts;
}

export function parseRetryAfter(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}
