// The client's adaptive pacing against a server that says "too many requests" the way API Priority
// and Fairness does: 429 with Retry-After once a priority level's seats are taken (kube-sim's
// `maxInflight` fault of three seats). The client backs off (limit cut, paused for the
// Retry-After, every request answered in the end) and recovers once the server has room again.
// On a real server the seats are the client's own fault hook (the seam's test hook, answering
// before the request leaves): a PriorityLevelConfiguration of one share that rejects (three seats)
// was tried, but self-subject access reviews are answered in under a millisecond there, so its
// 429s come by chance, and a test must not. The hook lets `SEATS` requests through per window of
// `WINDOW_MS` and answers the rest as APF does, 429 with Retry-After.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, createKubeClient, type KubeClient, type KubeRequest, type KubeResponse } from '../../shared/kube/client.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';

const SEATS = 3;
const WINDOW_MS = 20;

let cluster: TestCluster;
let admin: KubeClient;
let alice: KubeClient;
let lift: () => Promise<void>;

/** APF's answer for a real server: `SEATS` reviews per `WINDOW_MS`, the rest 429 + Retry-After (off until constrained). */
const seats = {
  on: false,
  admitted: [] as number[],
  hook(req: KubeRequest): Partial<KubeResponse> | undefined {
    if (!seats.on || !req.path.endsWith('/selfsubjectaccessreviews')) return undefined;
    const now = performance.now();
    while (seats.admitted.length > 0 && now - seats.admitted[0]! > WINDOW_MS) seats.admitted.shift();
    if (seats.admitted.length >= SEATS) return { status: 429, reason: 'TooManyRequests', retryAfterSeconds: 1, error: 'Too many requests, please try again later.' };
    seats.admitted.push(now);
    return undefined;
  },
};

/** Makes alice's requests meet only `SEATS` seats, rejecting the rest (kube-sim's fault, or the hook on a real server); returns how to lift it. */
function constrain(): () => Promise<void> {
  if (cluster.faults) {
    const remove = cluster.faults.inject({ verb: 'create', resource: 'selfsubjectaccessreviews', maxInflight: SEATS, retryAfterSeconds: 1 });
    return async () => remove();
  }
  seats.on = true;
  return async () => void (seats.on = false);
}

/** `n` self-subject access reviews at once (every user may create one): answered statuses. */
async function burst(kube: KubeClient, n: number): Promise<number[]> {
  const body = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'namespaces' } } };
  const answers = await Promise.all(Array.from({ length: n }, () => kube.call({ method: 'POST', path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', body })));
  return answers.map((a) => a.status);
}

beforeAll(async () => {
  cluster = await useTestCluster();
  // kube-sim shares this process's one thread, so more requests in flight only queue longer: a
  // fixed latency (a timer, not work) gives it room for concurrency, as a real server has.
  cluster.faults?.inject({ verb: 'create', resource: 'selfsubjectaccessreviews', latencyMs: 20 });
  admin = createKubeClient(await connect({ kubeconfigPath: cluster.kubeconfigPath, context: cluster.users.admin!.context }));
  // Default pacing; retries enough to outlast a few Retry-After pauses.
  alice = createKubeClient(await connect({ kubeconfigPath: cluster.kubeconfigPath, context: cluster.users.alice!.context }), { retry: { attempts: 30, baseMs: 50, maxMs: 2000, factor: 2, jitter: 0.5 }, faults: (req) => seats.hook(req) });
}, 30_000);

afterAll(async () => {
  await lift?.();
  alice?.close();
  admin?.close();
  await cluster?.stop();
});

describe('adaptive pacing against a server that rejects with 429 + Retry-After', () => {
  it('grows the in-flight limit while the server has room', async () => {
    const start = alice.pacing.limit;
    expect((await burst(alice, 400)).every((s) => s === 201)).toBe(true);
    expect(alice.pacing.limit).toBeGreaterThan(start);
    expect(alice.metrics.byStatus['429'] ?? 0).toBe(0);
  }, 60_000);

  it('backs off when seats run out: limit cut, paused for Retry-After, every request answered in the end', async () => {
    const before = alice.pacing.limit;
    lift = constrain();
    const statuses = await burst(alice, 300);
    expect(statuses.every((s) => s === 201)).toBe(true);
    const throttled = alice.metrics.byStatus['429'] ?? 0;
    expect(throttled).toBeGreaterThan(0);
    expect(alice.pacing.counters.throttled).toBe(throttled);
    expect(alice.pacing.counters.cuts).toBeGreaterThan(0);
    expect(alice.pacing.limit).toBeLessThan(before);
    // It did not hammer the server: most requests got through the first time.
    expect(throttled).toBeLessThan(300);
    expect(alice.metrics.throttledMs).toBeGreaterThan(0);
  }, 240_000);

  it('recovers once the server has room again: no 429, the limit grows back', async () => {
    await lift();
    const throttledBefore = alice.metrics.byStatus['429'] ?? 0;
    const cut = alice.pacing.limit;
    // The pacing probes above the level it was refused at once a second: give it a few probes
    // (a fast real server answers three bursts well within one).
    const probes = performance.now() + 3_000;
    for (let i = 0; i < 3 || performance.now() < probes; i += 1) expect((await burst(alice, 300)).every((s) => s === 201)).toBe(true);
    expect(alice.metrics.byStatus['429'] ?? 0).toBe(throttledBefore);
    expect(alice.pacing.limit).toBeGreaterThan(cut);
  }, 120_000);
});
