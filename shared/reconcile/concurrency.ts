// Bounded concurrency: at most `limit` calls of `fn` in flight; results in input order.
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

/**
 * Runs at most one `fn` per key at a time and folds bursts: a call while one runs (or within
 * `minIntervalMs` of the last start) queues one more run, which starts after every call it
 * answers arrived; calls while that one is queued share it. So a burst of N calls costs at most
 * one run per interval, and the last call is always answered by a run that started after it.
 * `minIntervalMs` may depend on how long the last run took: an expensive run then waits longer
 * before the next, so that runs take a bounded share of the time.
 */
export function coalescer<R>(minIntervalMs: number | ((lastRunMs: number) => number) = 0, sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms))): ((key: string, fn: () => Promise<R>) => Promise<R>) & { queued(key: string): boolean } {
  const running = new Map<string, Promise<R>>();
  const queued = new Map<string, Promise<R>>();
  const startedAt = new Map<string, number>();
  const interval = new Map<string, number>();
  const intervalAfter = (ms: number) => (typeof minIntervalMs === 'number' ? minIntervalMs : minIntervalMs(ms));
  const start = (key: string, fn: () => Promise<R>): Promise<R> => {
    const began = Date.now();
    startedAt.set(key, began);
    const p = fn().finally(() => {
      interval.set(key, intervalAfter(Date.now() - began));
      if (running.get(key) === p) running.delete(key);
    });
    running.set(key, p);
    return p;
  };
  const run = (key: string, fn: () => Promise<R>): Promise<R> => {
    const waiting = queued.get(key);
    if (waiting) return waiting;
    const current = running.get(key);
    const wait = Math.max(0, (startedAt.get(key) ?? -Infinity) + (interval.get(key) ?? intervalAfter(0)) - Date.now());
    if (!current && wait === 0) return start(key, fn);
    const next = Promise.all([current?.catch(() => undefined), wait > 0 ? sleep(wait) : undefined]).then(() => {
      queued.delete(key);
      return start(key, fn);
    });
    queued.set(key, next);
    return next;
  };
  /** A run is queued for `key`: it will start after now, so a caller need not wait for it. */
  return Object.assign(run, { queued: (key: string) => queued.has(key) });
}
