// The pacing controller on an injected clock: no test waits or reads the wall clock.
import { describe, it, expect } from '@jest/globals';
import { PacingController, createPacer, isQueueing, nextLatency, requestKind, validPacing, DEFAULT_PACING, type Ticket } from '../../../shared/kube/pacing.ts';

const ok = { status: 200 };
const ticket = (sentAt: number, kind = 'GET one'): Ticket => ({ sentAt, kind, waitedMs: 0 });

/** Runs `rounds` round trips of `latencyMs`, each sending as many requests as the limit allows; returns the clock. */
function roundTrips(c: PacingController, start: number, rounds: number, latencyMs: number, answer: (i: number) => { status: number; retryAfterSeconds?: number } = () => ok): number {
  let now = start;
  for (let r = 0; r < rounds; r += 1) {
    const sent: number[] = [];
    for (let w = c.admit(now); w !== 'full'; w = c.admit(now)) sent.push(now + w);
    now = Math.max(now, ...sent) + latencyMs;
    sent.forEach((at, i) => c.finish(now, ticket(at), answer(i)));
  }
  return now;
}

describe('PacingController', () => {
  it('admits up to the in-flight limit, then says full until a request finishes', () => {
    const c = new PacingController({ initialInflight: 2 }, 0);
    expect([c.admit(0), c.admit(0), c.admit(0)]).toEqual([0, 0, 'full']);
    c.finish(5, ticket(0), ok);
    expect(c.admit(5)).toBe(0);
  });

  it('doubles the in-flight limit per round trip while answers are fast, up to the ceiling', () => {
    const c = new PacingController({ initialInflight: 4, maxInflight: 40 }, 0);
    roundTrips(c, 0, 1, 5);
    expect(c.limit).toBe(8);
    roundTrips(c, 100, 1, 5);
    expect(c.limit).toBe(16);
    roundTrips(c, 200, 5, 5);
    expect(c.limit).toBe(40);
  });

  it('does not grow a limit it does not use', () => {
    const c = new PacingController({ initialInflight: 16 }, 0);
    for (let t = 0; t < 100; t += 10) {
      expect(c.admit(t)).toBe(0);
      c.finish(t + 2, ticket(t), ok);
    }
    expect(c.limit).toBe(16);
  });

  it('on a 429 halves the limits once, and pauses every new request for the Retry-After', () => {
    const c = new PacingController({ initialInflight: 32, maxPerSecond: 1000 }, 0);
    // A second of traffic at 500/s so that the controller knows the rate the server sustained.
    for (let t = 0; t <= 1000; t += 2) {
      c.admit(t);
      c.finish(t + 1, ticket(t), ok);
    }
    const limit = c.limit;
    for (let i = 0; i < 8; i += 1) c.admit(1100);
    // Eight answers to requests of the same window: one cut, not eight.
    for (let i = 0; i < 8; i += 1) c.finish(1110, ticket(1100), { status: 429, retryAfterSeconds: 2 });
    expect(c.limit).toBeCloseTo(limit / 2);
    expect(c.rate).toBeLessThanOrEqual(501);
    expect(c.rate).toBeGreaterThan(400);
    expect(c.counters.throttled).toBe(8);
    expect(c.counters.cuts).toBe(1);
    expect(c.admit(1200)).toBe(1910);
    expect(c.admit(3110)).toBe(0);
  });

  it('a 429 without Retry-After pauses for the default, and a hostile Retry-After is capped', () => {
    const c = new PacingController({}, 0);
    c.admit(0);
    c.finish(10, ticket(0), { status: 429 });
    expect(c.pausedUntil).toBe(10 + DEFAULT_PACING.defaultRetryAfterMs);
    c.admit(20);
    c.finish(30, ticket(20), { status: 429, retryAfterSeconds: 86_400 });
    expect(c.pausedUntil).toBe(30 + DEFAULT_PACING.maxPauseMs);
  });

  it('a 503 with Retry-After throttles like a 429; a plain 500 or a 404 does not', () => {
    const c = new PacingController({ initialInflight: 8 }, 0);
    c.admit(0);
    c.finish(1, ticket(0), { status: 500 });
    c.admit(2);
    c.finish(3, ticket(2), { status: 404 });
    expect(c.counters.throttled).toBe(0);
    c.admit(4);
    c.finish(5, ticket(4), { status: 503, retryAfterSeconds: 1 });
    expect(c.counters.throttled).toBe(1);
    expect(c.limit).toBe(4);
  });

  it('lowers the limit by one per round trip while latency stays well above the best seen', () => {
    const c = new PacingController({ initialInflight: 4, maxInflight: 64 }, 0);
    const now = roundTrips(c, 0, 3, 5);
    expect(c.limit).toBe(32);
    roundTrips(c, now, 2, 200);
    // The first slow round only moves the average; each later one takes one off.
    expect(c.limit).toBeLessThan(32);
    expect(c.limit).toBeGreaterThanOrEqual(28);
    expect(c.counters.queueing).toBeGreaterThan(0);
  });

  it('after a 429, climbs back to just under the limit that was refused, then probes above it once a second', () => {
    const c = new PacingController({ initialInflight: 4, maxInflight: 64 }, 0);
    let now = roundTrips(c, 0, 2, 5);
    expect(c.limit).toBe(16);
    // One 429 among the answers of a round: halved to 8, plateau at 14.4.
    now = roundTrips(c, now, 1, 5, (i) => (i === 0 ? { status: 429, retryAfterSeconds: 1 } : ok));
    expect(c.limit).toBeLessThan(16);
    now = roundTrips(c, now + 1000, 20, 5);
    expect(c.limit).toBeGreaterThanOrEqual(14);
    expect(c.limit).toBeLessThan(17);
    // Each second above the plateau: a step that doubles (1, 2, 4, ...).
    for (let s = 0; s < 4; s += 1) now = roundTrips(c, now + 1000, 1, 5);
    expect(c.limit).toBeGreaterThan(25);
  });

  it('latency alone never takes the limit below where it started, and a request without an answer cuts nothing', () => {
    const c = new PacingController({ initialInflight: 8 }, 0);
    let now = 0;
    for (let r = 0; r < 50; r += 1) now = roundTrips(c, now, 1, r < 3 ? 5 : 5 + r * 100);
    expect(c.counters.queueing).toBeGreaterThan(0);
    expect(c.limit).toBeGreaterThanOrEqual(8);
    const d = new PacingController({ initialInflight: 8 }, 0);
    d.admit(0);
    d.finish(10_000, ticket(0), { status: 0 });
    expect([d.limit, d.counters.cuts]).toEqual([8, 0]);
  });

  it('compares latency within a kind of request: a slow list does not slow the gets', () => {
    const c = new PacingController({ initialInflight: 4 }, 0);
    for (let t = 0; t < 50; t += 1) {
      c.admit(t * 300);
      c.finish(t * 300 + (t % 2 ? 250 : 2), ticket(t * 300, t % 2 ? 'GET list' : 'GET one'), ok);
    }
    expect(c.counters.queueing).toBe(0);
  });

  it('recovers the rate after a throttle: it grows back toward the ceiling while answers are fast', () => {
    const c = new PacingController({ initialInflight: 8, maxPerSecond: 1000 }, 0);
    // A second at 200 requests per second, then a 429: the rate falls to what the server sustained.
    for (let t = 0; t <= 1000; t += 5) {
      c.admit(t);
      c.finish(t + 1, ticket(t), ok);
    }
    c.admit(1001);
    c.finish(1005, ticket(1001), { status: 429, retryAfterSeconds: 1 });
    expect(c.rate).toBeCloseTo(200, 0);
    roundTrips(c, 2000, 30, 5);
    expect(c.rate).toBe(1000);
  });

  it('spaces requests at the rate once the burst is spent', () => {
    const c = new PacingController({ maxPerSecond: 100, initialInflight: 64, maxInflight: 64 }, 0);
    const waits = Array.from({ length: 12 }, () => c.admit(0));
    expect(waits.slice(0, 10)).toEqual(Array(10).fill(0));
    expect(waits.slice(10)).toEqual([10, 20]);
  });

  it('refuses a ceiling that is not a positive number, naming it', () => {
    expect(() => validPacing({ ...DEFAULT_PACING, maxPerSecond: 0 })).toThrow('pacing.maxPerSecond must be a positive number, got 0');
    expect(() => new PacingController({ maxInflight: Number.NaN })).toThrow(/pacing.maxInflight/);
  });
});

describe('pure helpers', () => {
  it('latency: a long average is the baseline, a short one the recent; queueing is recent well above usual', () => {
    let s = nextLatency(undefined, 10);
    s = nextLatency(s, 110);
    expect(s.baseline).toBeCloseTo(12);
    expect(s.recent).toBeCloseTo(30);
    expect(isQueueing({ baseline: 5, recent: 60 }, DEFAULT_PACING)).toBe(true);
    expect(isQueueing({ baseline: 5, recent: 40 }, DEFAULT_PACING)).toBe(false);
    expect(isQueueing({ baseline: 100, recent: 180 }, DEFAULT_PACING)).toBe(false);
  });

  it('request kinds', () => {
    expect(requestKind('GET', '/api/v1/namespaces')).toBe('GET list');
    expect(requestKind('GET', '/api/v1/namespaces/a')).toBe('GET one');
    expect(requestKind('GET', '/api/v1/namespaces/a/configmaps')).toBe('GET list');
    expect(requestKind('PATCH', '/apis/rbac.authorization.k8s.io/v1/namespaces/a/rolebindings/b')).toBe('PATCH one');
    expect(requestKind('GET', '/apis/furnish.dev/v1alpha1/namespacetemplates')).toBe('GET list');
  });
});

describe('createPacer', () => {
  it('queues requests over the limit in order and lets them go as others finish; sleeps the pause on the injected clock', async () => {
    let now = 0;
    const slept: number[] = [];
    const pacer = createPacer({ initialInflight: 1, maxInflight: 1 }, { now: () => now, sleep: async (ms) => { slept.push(ms); now += ms; } });
    const first = await pacer.take('GET one');
    const order: string[] = [];
    const second = pacer.take('GET one').then((t) => (order.push('second'), t));
    const third = pacer.take('GET one').then((t) => (order.push('third'), t));
    await Promise.resolve();
    expect(order).toEqual([]);
    now = 10;
    pacer.done(first, { status: 429, retryAfterSeconds: 1 });
    const t2 = await second;
    expect(slept).toEqual([1000]);
    expect(t2.waitedMs).toBe(1000);
    pacer.done(t2, ok);
    await third;
    expect(order).toEqual(['second', 'third']);
  });

  it('a ticket returned without an outcome only frees its slot', async () => {
    const pacer = createPacer({ initialInflight: 1, maxInflight: 1 }, { now: () => 0, sleep: async () => {} });
    pacer.done(await pacer.take('watch'));
    expect(pacer.controller.inflight).toBe(0);
    expect(pacer.controller.limit).toBe(1);
  });
});
