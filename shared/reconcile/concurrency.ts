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
 * Runs at most one `fn` per key at a time and folds bursts: a call while one runs queues one more
 * run (it starts after every call it answers arrived); calls while that one is queued share it.
 */
export function coalescer<R>(): (key: string, fn: () => Promise<R>) => Promise<R> {
  const running = new Map<string, Promise<R>>();
  const queued = new Map<string, Promise<R>>();
  const start = (key: string, fn: () => Promise<R>): Promise<R> => {
    const p = fn().finally(() => {
      if (running.get(key) === p) running.delete(key);
    });
    running.set(key, p);
    return p;
  };
  return (key, fn) => {
    const waiting = queued.get(key);
    if (waiting) return waiting;
    const current = running.get(key);
    if (!current) return start(key, fn);
    const next = current.catch(() => undefined).then(() => {
      queued.delete(key);
      return start(key, fn);
    });
    queued.set(key, next);
    return next;
  };
}
