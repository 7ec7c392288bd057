// Adaptive request pacing: the API server, not a fixed client budget, sets how fast Furnish goes.
// A congestion controller in the manner of TCP and Netflix's concurrency-limits: the number of
// requests in flight and the request rate grow while answers come back fast; the in-flight limit
// is halved on a 429 (API Priority and Fairness rejecting: its Retry-After pauses every new
// request, and the rate falls to what the server sustained) and lowered by one per round trip
// while latency stays well above the best seen for that kind of request (the server is queueing). Both stay under ceilings a cluster admin may lower (FURNISH_KUBE_QPS,
// FURNISH_KUBE_MAX_INFLIGHT). The controller is pure arithmetic on an injected clock;
// `createPacer` is the thin async adapter the client calls once per request.

export interface PacingCeilings {
  /** Most requests per second the client may ever send. */
  maxPerSecond: number;
  /** Most requests the client may have in flight at once. */
  maxInflight: number;
}

export interface PacingTuning {
  /** In-flight limit at start; it grows from there (doubling per round trip until the first sign of congestion). */
  initialInflight: number;
  /** Recent latency above `latencyTolerance` × the usual one (and `latencySlackMs` more) means the server queues. */
  latencyTolerance: number;
  latencySlackMs: number;
  /** Pause after a 429 that names no Retry-After. */
  defaultRetryAfterMs: number;
  /** Longest pause a Retry-After may impose (a hostile or broken value cannot stall the client). */
  maxPauseMs: number;
}

export type PacingSettings = PacingCeilings & PacingTuning;

export const DEFAULT_MAX_PER_SECOND = 5_000;
export const DEFAULT_MAX_INFLIGHT = 64;

export const DEFAULT_PACING: PacingSettings = {
  maxPerSecond: DEFAULT_MAX_PER_SECOND,
  maxInflight: DEFAULT_MAX_INFLIGHT,
  initialInflight: 8,
  latencyTolerance: 2,
  latencySlackMs: 50,
  defaultRetryAfterMs: 1_000,
  maxPauseMs: 10_000,
};

/** Least rate and in-flight limit: the client always makes progress. */
const MIN_PER_SECOND = 1;
const MIN_INFLIGHT = 1;
/** Above the plateau, the limit grows at most once per this interval. */
const PROBE_INTERVAL_MS = 1_000;
/** Weight of a new sample in the short latency average. */
const SHORT_WEIGHT = 0.2;
/** Weight of a new sample in the long latency average: a slow server becomes the new normal. */
const LONG_WEIGHT = 0.02;

/** What one request found, as the controller needs it. */
export interface PaceOutcome {
  status: number;
  retryAfterSeconds?: number;
}

/** A granted request: when it went out and what the limits were then (a cut reacts once per window). */
export interface Ticket {
  sentAt: number;
  /** Latency class: requests of different shapes (a list, a get) are compared only with their own kind. */
  kind: string;
  waitedMs: number;
}

interface LatencyStats {
  /** Long moving average: what this kind of request normally takes (Gradient2's long window). */
  baseline: number;
  /** Short moving average. */
  recent: number;
}

/** Throttled by the server: a 429, or a 503 that says when to come back. */
export function isThrottle(o: PaceOutcome): boolean {
  return o.status === 429 || (o.status === 503 && o.retryAfterSeconds !== undefined);
}

/** The server is queueing this kind of request: recent latency well above its best. */
export function isQueueing(stats: LatencyStats, tuning: Pick<PacingTuning, 'latencyTolerance' | 'latencySlackMs'>): boolean {
  return stats.recent > stats.baseline * tuning.latencyTolerance && stats.recent - stats.baseline > tuning.latencySlackMs;
}

/** Latency statistics after one more sample. */
export function nextLatency(prev: LatencyStats | undefined, ms: number): LatencyStats {
  if (!prev) return { baseline: ms, recent: ms };
  // Not the minimum: on a busy machine the best sample is luck, and a limit tuned to it starves.
  const baseline = prev.baseline + (ms - prev.baseline) * LONG_WEIGHT;
  return { baseline, recent: prev.recent + (ms - prev.recent) * SHORT_WEIGHT };
}

export class PacingController {
  readonly settings: PacingSettings;
  /** In-flight limit (fractional: additive increase adds 1/limit per answer). */
  limit: number;
  /** Request rate limit, per second. */
  rate: number;
  inflight = 0;
  /** No request leaves before this time (a Retry-After). */
  pausedUntil = 0;
  /** Grow fast (one per answer) below this, slowly (one per window) above it. */
  private threshold = Number.POSITIVE_INFINITY;
  /**
   * Just under the limit the server last refused (429): the limit climbs back to it in a
   * few round trips, then probes above it once per `PROBE_INTERVAL_MS` with a step that doubles
   * while the server keeps up (as CUBIC plateaus near its last maximum). A 429 costs a whole
   * Retry-After, far more than a round trip, so the sawtooth must be slow.
   */
  private plateau = Number.POSITIVE_INFINITY;
  private probeStep = 1;
  private lastProbe = Number.NEGATIVE_INFINITY;
  /** Last cut: requests sent before it must not cut again (one cut per window, as TCP). */
  private lastCut = Number.NEGATIVE_INFINITY;
  private tokens: number;
  private tokensAt: number;
  private readonly latency = new Map<string, LatencyStats>();
  /** Answers in the current and the last one-second window: the rate the server sustained. */
  private windowStart: number;
  private windowCount = 0;
  private lastWindowRate = 0;
  /** Most requests in flight in the current and the last window. */
  private windowPeak = 0;
  private lastWindowPeak = 0;
  readonly counters = { throttled: 0, queueing: 0, cuts: 0, pausedMs: 0 };

  constructor(settings: Partial<PacingSettings> = {}, now = 0) {
    this.settings = validPacing({ ...DEFAULT_PACING, ...settings });
    this.limit = Math.min(this.settings.initialInflight, this.settings.maxInflight);
    this.rate = this.settings.maxPerSecond;
    this.tokens = this.burst();
    this.tokensAt = now;
    this.windowStart = now;
  }

  private burst(): number {
    // A tenth of a second of traffic may leave at once (never less than one request).
    return Math.max(1, this.rate / 10);
  }

  /**
   * Asks to send a request at `now`. 'full' when the in-flight limit is reached (wait for a
   * request to finish); otherwise the request is admitted (counted in flight, its token taken)
   * and the answer is how many ms it must wait before it goes (0: at once).
   */
  admit(now: number): number | 'full' {
    if (this.inflight >= Math.max(MIN_INFLIGHT, Math.floor(this.limit))) return 'full';
    this.inflight += 1;
    this.windowPeak = Math.max(this.windowPeak, this.inflight);
    this.tokens = Math.min(this.burst(), this.tokens + ((now - this.tokensAt) / 1000) * this.rate);
    this.tokensAt = now;
    this.tokens -= 1;
    const tokenWait = this.tokens >= 0 ? 0 : (-this.tokens / this.rate) * 1000;
    const wait = Math.ceil(Math.max(tokenWait, this.pausedUntil - now, 0));
    this.counters.pausedMs += wait;
    return wait;
  }

  /** Free slots now (requests waiting for 'full' may retry this many times). */
  room(): number {
    return Math.max(0, Math.max(MIN_INFLIGHT, Math.floor(this.limit)) - this.inflight);
  }

  /** A request admitted earlier ended (`outcome` undefined: no answer worth learning from, e.g. a watch). */
  finish(now: number, ticket: Ticket, outcome?: PaceOutcome): void {
    this.inflight = Math.max(0, this.inflight - 1);
    if (!outcome) return;
    this.countAnswer(now);
    if (isThrottle(outcome)) return this.onThrottle(now, ticket, outcome);
    // No answer (a timeout, a refused connection) says nothing about the server's queue.
    if (outcome.status === 0) return;
    const stats = nextLatency(this.latency.get(ticket.kind), now - ticket.sentAt);
    this.latency.set(ticket.kind, stats);
    if (isQueueing(stats, this.settings)) {
      // Queueing is a gentle signal (and a noisy one on a busy machine): one less per round trip, as
      // TCP Vegas, never below the starting limit (only a 429 goes lower) and without a plateau.
      this.counters.queueing += 1;
      this.cut(now, ticket, (l) => Math.max(Math.min(l, this.settings.initialInflight), l - 1));
      return;
    }
    this.grow(now);
  }

  private countAnswer(now: number): void {
    if (now - this.windowStart >= 1000) {
      this.lastWindowRate = (this.windowCount * 1000) / (now - this.windowStart);
      this.windowStart = now;
      this.windowCount = 0;
      this.lastWindowPeak = this.windowPeak;
      this.windowPeak = this.inflight;
    }
    this.windowCount += 1;
  }

  private onThrottle(now: number, ticket: Ticket, outcome: PaceOutcome): void {
    this.counters.throttled += 1;
    // Answers to requests sent before the last cut are old news: the cut and its pause covered them
    // (each such request still waits its own Retry-After before it is retried).
    const refused = this.limit;
    if (this.cut(now, ticket, (l) => l * 0.5)) {
      this.plateau = Math.max(MIN_INFLIGHT, Math.min(refused - 1, refused * 0.9));
      this.probeStep = 1;
      this.lastProbe = now;
      const pauseMs = Math.min(this.settings.maxPauseMs, outcome.retryAfterSeconds !== undefined ? outcome.retryAfterSeconds * 1000 : this.settings.defaultRetryAfterMs);
      this.pausedUntil = Math.max(this.pausedUntil, now + pauseMs);
      // No faster than the rate the server sustained before it said no (the in-flight cut slows it further).
      const sustained = this.lastWindowRate > 0 ? this.lastWindowRate : this.rate;
      this.rate = Math.max(MIN_PER_SECOND, Math.min(this.rate, sustained));
      this.tokens = Math.min(this.tokens, this.burst());
    }
  }

  /** Lowers the in-flight limit, once per window: answers to requests sent before the last cut are old news. */
  private cut(now: number, ticket: Ticket, lower: (limit: number) => number): boolean {
    if (ticket.sentAt < this.lastCut) return false;
    this.lastCut = now;
    this.counters.cuts += 1;
    this.limit = Math.max(MIN_INFLIGHT, lower(this.limit));
    this.threshold = this.limit;
    return true;
  }

  private grow(now: number): void {
    // Only a limit in use (over this second or the last) is evidence that a higher one would work.
    if (Math.max(this.windowPeak, this.lastWindowPeak) < this.limit / 2) return;
    this.limit = Math.min(this.settings.maxInflight, this.nextLimit(now));
    // The rate grows by the same proportion as the in-flight limit would in slow start.
    this.rate = Math.min(this.settings.maxPerSecond, this.rate * (1 + 1 / Math.max(this.limit, 1)));
  }

  private nextLimit(now: number): number {
    if (this.limit < this.threshold) return this.limit + 1;
    if (this.limit + 1 / this.limit <= this.plateau) return this.limit + 1 / this.limit;
    if (now - this.lastProbe < PROBE_INTERVAL_MS) return Math.max(this.limit, this.plateau);
    this.lastProbe = now;
    const next = this.limit + this.probeStep;
    this.probeStep *= 2;
    return next;
  }
}

/** Settings checked: every ceiling a positive number. */
export function validPacing(s: PacingSettings): PacingSettings {
  for (const [k, v] of Object.entries(s)) {
    if (typeof v !== 'number' || !(v > 0)) throw new Error(`pacing.${k} must be a positive number, got ${String(v)}`);
  }
  return s;
}

/** `GET list`, `GET one`, `PATCH`: latency is compared within one kind of request. */
export function requestKind(method: string, path: string): string {
  // A collection path has an odd number of segments after /api/v1 or /apis/group/version.
  const segs = path.split('?')[0]!.split('/').filter(Boolean);
  const rest = segs[0] === 'api' ? segs.length - 2 : segs.length - 3;
  return `${method} ${rest % 2 === 1 ? 'list' : 'one'}`;
}

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export interface Pacer {
  /** Waits for a turn; the ticket goes back with `done`. */
  take(kind: string): Promise<Ticket>;
  done(ticket: Ticket, outcome?: PaceOutcome): void;
  readonly controller: PacingController;
}

/** The async side: requests wait their turn in order when the in-flight limit is reached. */
export function createPacer(settings: Partial<PacingSettings> = {}, clock: Clock = { now: () => performance.now(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) }): Pacer {
  const controller = new PacingController(settings, clock.now());
  const waiting: Array<() => void> = [];
  const wake = () => {
    for (let n = controller.room(); n > 0 && waiting.length > 0; n -= 1) waiting.shift()!();
  };
  return {
    controller,
    async take(kind) {
      for (;;) {
        const wait = controller.admit(clock.now());
        if (wait === 'full') {
          await new Promise<void>((resolve) => waiting.push(resolve));
          continue;
        }
        if (wait > 0) await clock.sleep(wait);
        return { sentAt: clock.now(), kind, waitedMs: wait };
      }
    },
    done(ticket, outcome) {
      controller.finish(clock.now(), ticket, outcome);
      wake();
    },
  };
}
