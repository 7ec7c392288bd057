// The reconcilers' and the relay's one door to the Kubernetes API: thin wrappers around the one
// transport (transport.ts), which builds every request and parses every answer. Here and nowhere
// else: retries with backoff, the client-side rate limit, metrics and test fault injection. The
// connection (kubeconfig, credentials) is connection.ts's, watches are watch.ts's, counters metrics.ts's.
import { currentCause, type Cause } from './cause.ts';
import { classifyApiError } from './errors.ts';
import { API_RETRY, backoffDelay, hasAttemptsLeft, type RetryPolicy } from './retry.ts';
import type { KubeCall, KubeResult } from './http.ts';
import { emptyMetrics, recordRequest, type KubeMetrics } from './metrics.ts';
import { createPacer, requestKind, type PacingController, type PacingSettings, type Ticket } from './pacing.ts';
import { answerOfData, createTransport, noAnswer, type TransportAnswer, type TransportRequest, type Verb } from './transport.ts';
import { openWatch, type WatchHandle as StreamHandle } from './watch.ts';
import type { Connection } from './connection.ts';

export { bearerCredentials, connect, type Connection, type Credentials } from './connection.ts';
export { resourceOfPath, type KubeMetrics } from './metrics.ts';
export type { Verb };

export interface KubeRequest extends TransportRequest {
  /** Override the client's retry policy for this call (e.g. attempts: 1). */
  retry?: RetryPolicy;
  /** Pacing's latency class (default requestKind): a watch-cache list is not compared with etcd's. */
  latencyKind?: string;
  /**
   * Failures that answer the caller (a watch-cache list's 504: read etcd instead): returned at
   * once, never retried, and their time not taken as the server queueing.
   */
  expected?: (answer: TransportAnswer) => boolean;
  /** The delivery the call serves: stamped by the client from where it is called (cause.ts). */
  cause?: Cause;
}

/** The transport's answer, and how many attempts it took. */
export interface KubeResponse<T = unknown> extends TransportAnswer<T> {
  attempts: number;
  /** Never sent: the delivery it serves was past its time for calls (Cause.callsUntil). */
  unsent?: true;
}

/**
 * Test hook: answer a request instead of the API server (undefined lets it through). For a watch,
 * `closeWatchAfterMs` lets it through and ends the stream that long after it opens, as a server does.
 */
export type FaultHook = (req: KubeRequest, attempt: number) => (Partial<KubeResponse> & { closeWatchAfterMs?: number }) | undefined;

export type WatchHandle = StreamHandle<KubeResponse<void>>;

export interface KubeClient {
  /** The seam: every API call passes here. Never throws. */
  call<T = unknown>(req: KubeRequest): Promise<KubeResponse<T>>;
  /** Streams newline-delimited JSON (watch); one attempt, the caller reconnects. */
  watch(req: KubeRequest, onObject: (obj: unknown) => void): WatchHandle;
  /** Adapter to the webhook side's `KubeHttp` shape (shared/kube/sar.ts runs on it). */
  http<T = unknown>(call: KubeCall): Promise<KubeResult<T>>;
  readonly metrics: KubeMetrics;
  /** The adaptive pacing's state: in-flight limit, rate, throttles seen. */
  readonly pacing: PacingController;
  readonly server: string;
  close(): void;
}

export interface KubeClientOptions {
  retry?: RetryPolicy;
  /** Adaptive pacing: its ceilings (requests per second, in flight) and tuning; the server's answers set the pace below them. */
  pacing?: Partial<PacingSettings>;
  timeoutMs?: number;
  faults?: FaultHook;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Sent as User-Agent: an API server's audit log names Furnish's requests by it. Default USER_AGENT. */
  userAgent?: string;
  /** Replaces the network for plain calls (unit tests run the real seam over an in-memory API). */
  transport?: (req: KubeRequest) => Promise<{ status: number; data: unknown; retryAfterSeconds?: number }>;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const USER_AGENT = 'furnish';

const sleepReal = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The request with the cause of the code calling (none outside a delivery). */
function stamped(req: KubeRequest): KubeRequest {
  const cause = req.cause ?? currentCause();
  return cause === req.cause ? req : { ...req, cause };
}

/** The seam's answer to one attempt. */
function responseOf<T>(a: TransportAnswer<unknown>, attempts: number): KubeResponse<T> {
  if (a.ok) return { ok: true, status: a.status, data: a.data as T, headers: a.headers, attempts };
  return { ok: false, status: a.status, data: a.data as T, reason: a.reason, error: a.error ?? `HTTP ${a.status}`, retryAfterSeconds: a.retryAfterSeconds, headers: a.headers, attempts };
}

export function createKubeClient(conn: Connection, options: KubeClientOptions = {}): KubeClient {
  const policy = options.retry ?? API_RETRY;
  const sleep = options.sleep ?? sleepReal;
  const pacer = createPacer(options.pacing, { now: () => performance.now(), sleep });
  const random = options.random ?? Math.random;
  const metrics = emptyMetrics();
  const streams = new Set<() => void>();
  const transport = createTransport({ server: conn.server, tls: conn.tls, agent: conn.agent, headers: () => conn.headers(), userAgent: options.userAgent ?? USER_AGENT, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, maxSockets: conn.maxSockets });
  const replaced = options.transport;

  /** The one pacing point: every request and every watch waits here first (pacing.ts). */
  async function turn(kind: string): Promise<Ticket> {
    const ticket = await pacer.take(kind);
    metrics.throttledMs += ticket.waitedMs;
    return ticket;
  }

  async function attemptOnce<T>(req: KubeRequest, attempt: number): Promise<KubeResponse<T>> {
    const ticket = await turn(req.latencyKind ?? requestKind(req.method, req.path));
    // Checked after the turn, which may have waited: nothing is sent once the delivery's time is up.
    const until = req.cause?.callsUntil;
    if (until !== undefined && performance.now() >= until) {
      pacer.done(ticket);
      return { ...responseOf<T>(noAnswer(`not sent: ${req.cause?.kind}/${req.cause?.name}'s delivery is past its time for calls, and is retried`), attempt), unsent: true };
    }
    const injected = options.faults?.(req, attempt);
    // An injected fault or a replaced network answers as the transport would have.
    const raw = injected ? { status: injected.status ?? 500, data: injected.data, retryAfterSeconds: injected.retryAfterSeconds, error: injected.error } : replaced ? await replaced(req) : undefined;
    const answer = raw ? answerOfData(raw.status, raw.data, raw) : await transport.send(req);
    const expected = !answer.ok && req.expected?.(answer) === true;
    pacer.done(ticket, expected ? undefined : answer);
    recordRequest(metrics, req, answer.status);
    return responseOf<T>(answer, attempt);
  }

  async function call<T>(asked: KubeRequest): Promise<KubeResponse<T>> {
    const req = stamped(asked);
    const p = req.retry ?? policy;
    for (let attempt = 1; ; attempt += 1) {
      const res = await attemptOnce<T>(req, attempt);
      if (res.unsent) {
        metrics.failures += 1;
        return res;
      }
      if (res.ok || req.expected?.(res)) return res;
      const transient = classifyApiError({ status: res.status, reason: res.reason, message: res.error }).class === 'transient';
      if (!transient || !hasAttemptsLeft(p, attempt)) {
        metrics.failures += 1;
        return res;
      }
      metrics.retries += 1;
      await sleep(backoffDelay(p, attempt, random, res.retryAfterSeconds));
    }
  }

  function watch(asked: KubeRequest, onObject: (obj: unknown) => void): WatchHandle {
    const req = stamped(asked);
    return openWatch<KubeResponse<void>>(
      {
        transport,
        // A watch waits its turn but holds none: it stays open for minutes.
        throttle: async () => pacer.done(await turn('watch')),
        streams,
        fault() {
          const injected = options.faults?.(req, 1);
          if (injected?.closeWatchAfterMs !== undefined) return { cutAfterMs: injected.closeWatchAfterMs };
          if (!injected) return undefined;
          recordRequest(metrics, req, injected.status ?? 500);
          return { answer: { ok: false, status: injected.status ?? 500, data: undefined, error: injected.error ?? 'injected fault', attempts: 1 } };
        },
        settle(raw, stopped) {
          recordRequest(metrics, req, stopped ? 200 : raw.status);
          if (stopped) return { ok: true, status: 200, data: undefined, attempts: 1 };
          return { ...responseOf<undefined>(raw, 1), data: undefined };
        },
      },
      req,
      onObject,
    );
  }

  return {
    call,
    watch,
    async http<T>(c: KubeCall): Promise<KubeResult<T>> {
      const r = await call<T>({ method: c.method, path: c.path, body: c.body });
      return r.ok ? { ok: true, status: r.status, data: r.data } : { ok: false, status: r.status, data: r.data, error: r.error ?? `HTTP ${r.status}` };
    },
    metrics,
    pacing: pacer.controller,
    server: conn.server,
    close() {
      for (const s of streams) s();
      transport.close();
    },
  };
}

/** One client per cluster, created on first use: functions keep it across invocations. */
export function clientCache<T>(factory: (cluster: string) => Promise<T>): (cluster: string) => Promise<T> {
  const clients = new Map<string, Promise<T>>();
  return (cluster) => {
    let c = clients.get(cluster);
    if (!c) {
      c = factory(cluster);
      c.catch(() => clients.delete(cluster));
      clients.set(cluster, c);
    }
    return c;
  };
}
