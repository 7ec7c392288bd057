/**
 * Bounded concurrency: at most `limit` calls of `fn` in flight; results in input order. A call
 * that throws stops new ones from starting, and its error is thrown once every call started has
 * settled: nothing this starts outlives it (a delivery that failed answers only after its writes).
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  /** The first error thrown, in time. */
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (next < items.length && !failure) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!, i);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure) throw failure.error;
  return results;
}

/** How long the last runs of a key took, and whether its callers have gone quiet. */
export interface RunHistory {
  /** The last run's duration (ms); 0 before the first. */
  lastMs: number;
  /** The shortest of the last few runs (ms): what a run costs when nothing competes with it. */
  shortestMs: number;
  /** No call arrived for `quietMs`: the burst that queued the next run is over. */
  quiet: boolean;
}

export interface CoalescerOptions {
  /** Least time from one run's start to the next's (default 0), given the key's history. */
  intervalMs?: number | ((history: RunHistory) => number);
  /** A queued run re-decides its start when no call arrived for this long (default: never). */
  quietMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/** Runs remembered per key for `shortestMs`. */
const HISTORY = 8;
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Runs at most one `fn` per key at a time and folds bursts: a call while one runs (or within the
 * interval after the last start) queues one more run, which starts after every call it answers
 * arrived; calls while that one is queued share it. So a burst of N calls costs at most one run
 * per interval, and the last call is always answered by a run that started after it.
 * The interval may depend on the key's history: an expensive run then makes the next wait longer
 * (runs take a bounded share of the time), and once callers go quiet a run measured under load no
 * longer sets the wait of the one that ends the burst.
 */
export function coalescer<R>(opts: CoalescerOptions = {}): ((key: string, fn: () => Promise<R>) => Promise<R>) & { join(key: string): boolean } {
  // setTimeout fires at once beyond 2^31 - 1 ms: a longer wait is taken in steps.
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, Math.min(ms, MAX_TIMER_MS))));
  const now = opts.now ?? Date.now;
  const quietMs = opts.quietMs ?? Infinity;
  const running = new Map<string, Promise<R>>();
  const queued = new Map<string, Promise<R>>();
  const startedAt = new Map<string, number>();
  const lastCall = new Map<string, number>();
  const durations = new Map<string, number[]>();
  const intervalOf = (key: string): number => {
    if (typeof opts.intervalMs !== 'function') return opts.intervalMs ?? 0;
    const runs = durations.get(key) ?? [];
    return opts.intervalMs({ lastMs: runs.at(-1) ?? 0, shortestMs: runs.length ? Math.min(...runs) : 0, quiet: now() - (lastCall.get(key) ?? -Infinity) >= quietMs });
  };
  /** Time left before a run of `key` may start (0: now); a quiet key is re-decided when it goes quiet. */
  const waitOf = (key: string): number => {
    const interval = Math.max(0, (startedAt.get(key) ?? -Infinity) + intervalOf(key) - now());
    const untilQuiet = (lastCall.get(key) ?? -Infinity) + quietMs - now();
    return untilQuiet > 0 ? Math.min(interval, untilQuiet) : interval;
  };
  const start = (key: string, fn: () => Promise<R>): Promise<R> => {
    const began = now();
    startedAt.set(key, began);
    // In flight before fn starts (a call fn makes itself queues the next run), and fn starts now
    // (what it takes at its start, it takes before any later call); a throw is a rejection.
    let settle!: (r: Promise<R>) => void;
    const remember = (ms: number) => durations.set(key, [...(durations.get(key) ?? []), ms].slice(-HISTORY));
    const p = new Promise<R>((resolve) => (settle = resolve)).then(
      (r) => {
        remember(now() - began);
        return r;
      },
      (e: unknown) => {
        // A failed run may lengthen the interval (one that timed out under load), never shorten it.
        const ms = now() - began;
        if (ms > Math.max(0, ...(durations.get(key) ?? []))) remember(ms);
        throw e;
      },
    ).finally(() => {
      if (running.get(key) === p) running.delete(key);
    });
    running.set(key, p);
    try {
      settle(fn());
    } catch (e) {
      settle(Promise.reject(e));
    }
    return p;
  };
  const queue = async (key: string, fn: () => Promise<R>, current: Promise<R> | undefined): Promise<R> => {
    await current?.catch(() => undefined);
    for (let wait = waitOf(key); wait > 0; wait = waitOf(key)) await sleep(wait);
    queued.delete(key);
    return start(key, fn);
  };
  const run = (key: string, fn: () => Promise<R>): Promise<R> => {
    lastCall.set(key, now());
    const waiting = queued.get(key);
    if (waiting) return waiting;
    const current = running.get(key);
    if (!current && waitOf(key) === 0) return start(key, fn);
    const next = queue(key, fn, current);
    queued.set(key, next);
    return next;
  };
  /**
   * A call that a run queued for `key` answers (it will start after now), so the caller need not
   * wait for it: counted as a call (the key is not quiet). False when none is queued.
   */
  const join = (key: string): boolean => {
    if (!queued.has(key)) return false;
    lastCall.set(key, now());
    return true;
  };
  return Object.assign(run, { join });
}

/**
 * Gathers notices (a namespace, the templates whose state there changed) for `windowMs` from the
 * first, then sends the templates once, caused by the first namespace: every caller in the window
 * waits for that one send and shares its outcome.
 */
export function gatherNotices(windowMs: number, send: (cause: string, templates: string[]) => Promise<void>): (namespace: string, templates: string[]) => Promise<void> {
  let open: { templates: Set<string>; namespaces: number; sent: Promise<void> } | null = null;
  return (namespace, templates) => {
    if (!open) {
      const gathering = { templates: new Set<string>(), namespaces: 0, sent: Promise.resolve() };
      gathering.sent = new Promise<void>((r) => setTimeout(r, windowMs)).then(() => {
        open = null;
        const cause = gathering.namespaces > 1 ? `namespace/${namespace}+${gathering.namespaces - 1}` : `namespace/${namespace}`;
        return send(cause, [...gathering.templates].sort());
      });
      open = gathering;
    }
    templates.forEach((t) => open!.templates.add(t));
    open.namespaces += 1;
    return open.sent;
  };
}
