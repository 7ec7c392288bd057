// The reconcilers' and the relay's one door to the Kubernetes API. Credentials come from
// @kubernetes/client-node's KubeConfig (kubeconfig file, in-cluster service account, exec and
// OIDC plugins), imported lazily so that webhook functions never pay for it; the requests
// themselves go through one seam, `call`, that never throws and returns `{ ok, status, data }`.
// Retries with backoff, adaptive pacing (pacing.ts: the server's answers set the pace), metrics and test fault
// injection live there and nowhere else. `watch` streams through the same connection.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { classifyApiError, statusMessage, statusReason } from './errors.ts';
import { API_RETRY, backoffDelay, hasAttemptsLeft, parseRetryAfter, type RetryPolicy } from './retry.ts';
import type { KubeCall, KubeResult } from './http.ts';
import { createPacer, requestKind, type PacingController, type PacingSettings } from './pacing.ts';

export type Verb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface KubeRequest {
  method: Verb;
  /** Path without query, e.g. /api/v1/namespaces/team-a */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Default application/json; SSA uses application/apply-patch+yaml, merge patches application/merge-patch+json. */
  contentType?: string;
  timeoutMs?: number;
  /** Override the client's retry policy for this call (e.g. attempts: 1). */
  retry?: RetryPolicy;
}

export interface KubeResponse<T = unknown> {
  ok: boolean;
  /** HTTP status; 0 when no answer arrived. */
  status: number;
  data: T | undefined;
  /** metav1.Status reason on failure (`Invalid`, `Forbidden`, `AlreadyExists`, ...). */
  reason?: string;
  error?: string;
  retryAfterSeconds?: number;
  attempts: number;
}

/**
 * Test hook: answer a request instead of the API server (undefined lets it through). For a watch,
 * `closeWatchAfterMs` lets it through and ends the stream that long after it opens, as a server does.
 */
export type FaultHook = (req: KubeRequest, attempt: number) => (Partial<KubeResponse> & { closeWatchAfterMs?: number }) | undefined;

export interface KubeMetrics {
  requests: number;
  /** Requests that changed something (POST/PUT/PATCH/DELETE), including failed ones. */
  writes: number;
  retries: number;
  failures: number;
  throttledMs: number;
  byStatus: Record<string, number>;
  byVerb: Record<string, number>;
  /** Write requests per resource (`configmaps`, `namespaces/status`, ...), dry runs excluded. */
  writesByResource: Record<string, number>;
}

export interface WatchHandle {
  /** Resolves when the stream ends (server closed it, error, or `stop`). */
  done: Promise<KubeResponse<void>>;
  stop(): void;
}

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

/** How to reach one API server: URL, TLS agent, and headers (refreshed per request for exec/OIDC tokens). */
export interface Connection {
  server: string;
  agent: HttpAgent | HttpsAgent;
  headers(): Promise<Record<string, string>>;
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

/** Where credentials come from: a kubeconfig (path, inline YAML, or the default chain), with an optional context. */
export interface Credentials {
  kubeconfigPath?: string;
  kubeconfigYaml?: string;
  context?: string;
}

/** A kubeconfig loaded by @kubernetes/client-node, which is imported here and only here (lazily). */
async function loadKubeConfig(creds: Credentials) {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  if (creds.kubeconfigYaml) kc.loadFromString(creds.kubeconfigYaml);
  else if (creds.kubeconfigPath) kc.loadFromFile(creds.kubeconfigPath);
  else kc.loadFromDefault();
  if (creds.context) kc.setCurrentContext(creds.context);
  return kc;
}

/** Server, CA and bearer token of a kubeconfig, for components configured with those (the local webhooks). */
export async function bearerCredentials(creds: Credentials = {}): Promise<{ server: string; caPem?: string; token?: string }> {
  const kc = await loadKubeConfig(creds);
  const opts: RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const auth = (opts.headers as Record<string, string> | undefined)?.Authorization ?? (opts.headers as Record<string, string> | undefined)?.authorization;
  return { server: kc.getCurrentCluster()?.server ?? '', caPem: opts.ca ? String(opts.ca) : undefined, token: auth?.startsWith('Bearer ') ? auth.slice(7) : undefined };
}

/** A keep-alive connection to the cluster the credentials name. */
export async function connect(creds: Credentials = {}, maxSockets = 64): Promise<Connection> {
  const kc = await loadKubeConfig(creds);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig names no current cluster');
  const probe: RequestOptions = {};
  await kc.applyToHTTPSOptions(probe);
  const secure = cluster.server.startsWith('https:');
  // Our own keep-alive agent with the credentials client-node resolved (client-node's own agent
  // does not keep connections alive); a proxied cluster keeps client-node's agent.
  const agent = cluster.proxyUrl
    ? (probe.agent as HttpsAgent)
    : secure
      ? new HttpsAgent({ keepAlive: true, maxSockets, ca: probe.ca, cert: probe.cert, key: probe.key, pfx: probe.pfx, passphrase: probe.passphrase, rejectUnauthorized: probe.rejectUnauthorized ?? true, servername: probe.servername })
      : new HttpAgent({ keepAlive: true, maxSockets });
  return {
    server: cluster.server.replace(/\/$/, ''),
    agent,
    async headers() {
      const opts: RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      const h: Record<string, string> = {};
      for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === 'string') h[k.toLowerCase()] = v;
      if (opts.auth && !h.authorization) h.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
      return h;
    },
  };
}

export function queryString(query: KubeRequest['query']): string {
  if (!query) return '';
  const parts = Object.entries(query).filter(([, v]) => v !== undefined).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

/** `configmaps` for /api/v1/namespaces/x/configmaps/y, `namespacetemplates/status` for a status write. */
export function resourceOfPath(path: string): string {
  const segs = path.split('?')[0]!.split('/').filter(Boolean);
  const rest = segs[0] === 'api' ? segs.slice(2) : segs.slice(3);
  // namespaces/NAME/status and /finalize are the namespace's own subresources, not a namespaced resource.
  const r = rest[0] === 'namespaces' && rest.length >= 3 && !(segs[0] === 'api' && rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize')) ? rest.slice(2) : rest;
  return r[2] ? `${r[0]}/${r[2]}` : (r[0] ?? '');
}

function emptyMetrics(): KubeMetrics {
  return { requests: 0, writes: 0, retries: 0, failures: 0, throttledMs: 0, byStatus: {}, byVerb: {}, writesByResource: {} };
}

interface RawAnswer {
  status: number;
  data: unknown;
  retryAfterSeconds?: number;
  error?: string;
}

export function createKubeClient(conn: Connection, options: KubeClientOptions = {}): KubeClient {
  const policy = options.retry ?? API_RETRY;
  const sleep = options.sleep ?? sleepReal;
  const pacer = createPacer(options.pacing, { now: () => performance.now(), sleep });
  const random = options.random ?? Math.random;
  const base = new URL(conn.server);
  const send = base.protocol === 'https:' ? httpsRequest : httpRequest;
  const prefix = base.pathname.replace(/\/$/, '');
  const metrics = emptyMetrics();
  const streams = new Set<() => void>();

  async function open(req: KubeRequest, onResponse: (res: IncomingMessage, finish: (a: RawAnswer) => void) => void, register?: (abort: () => void) => void): Promise<RawAnswer> {
    let headers: Record<string, string>;
    try {
      headers = { accept: 'application/json', 'user-agent': options.userAgent ?? USER_AGENT, ...(await conn.headers()) };
    } catch (e) {
      return { status: 0, data: undefined, error: `credentials: ${(e as Error).message}` };
    }
    const payload = req.body === undefined ? undefined : Buffer.from(typeof req.body === 'string' ? req.body : JSON.stringify(req.body));
    if (payload) {
      headers['content-type'] = req.contentType ?? 'application/json';
      headers['content-length'] = String(payload.length);
    }
    return new Promise<RawAnswer>((resolve) => {
      let settled = false;
      const finish = (a: RawAnswer) => {
        if (!settled) {
          settled = true;
          resolve(a);
        }
      };
      const r = send({ protocol: base.protocol, hostname: base.hostname, port: base.port, path: prefix + req.path + queryString(req.query), method: req.method, headers, agent: conn.agent, timeout: req.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS }, (res) => onResponse(res, finish));
      r.on('timeout', () => r.destroy(new Error(`no answer within ${req.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms`)));
      r.on('error', (e) => finish({ status: 0, data: undefined, error: e.message }));
      register?.(() => r.destroy());
      r.end(payload);
    });
  }

  function readAll(res: IncomingMessage, finish: (a: RawAnswer) => void): void {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('error', (e) => finish({ status: 0, data: undefined, error: e.message }));
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let data: unknown;
      try {
        data = text ? JSON.parse(text) : undefined;
      } catch {
        data = text;
      }
      finish({ status: res.statusCode ?? 0, data, retryAfterSeconds: parseRetryAfter(res.headers['retry-after']) });
    });
  }

  function record(req: KubeRequest, status: number): void {
    metrics.requests += 1;
    // A dry run stores nothing: it is a read of what the server would make of a write.
    if (req.method !== 'GET' && req.query?.dryRun === undefined) {
      metrics.writes += 1;
      const resource = resourceOfPath(req.path);
      metrics.writesByResource[resource] = (metrics.writesByResource[resource] ?? 0) + 1;
    }
    metrics.byStatus[String(status)] = (metrics.byStatus[String(status)] ?? 0) + 1;
    metrics.byVerb[req.method] = (metrics.byVerb[req.method] ?? 0) + 1;
  }

  async function attemptOnce<T>(req: KubeRequest, attempt: number): Promise<KubeResponse<T>> {
    const ticket = await pacer.take(requestKind(req.method, req.path));
    metrics.throttledMs += ticket.waitedMs;
    const injected = options.faults?.(req, attempt);
    const raw: RawAnswer = injected
      ? { status: injected.status ?? 500, data: injected.data, retryAfterSeconds: injected.retryAfterSeconds, error: injected.error }
      : options.transport
        ? await options.transport(req)
        : await open(req, readAll);
    pacer.done(ticket, raw);
    record(req, raw.status);
    const ok = raw.status >= 200 && raw.status < 300;
    if (ok) return { ok, status: raw.status, data: raw.data as T, attempts: attempt };
    return { ok, status: raw.status, data: raw.data as T, reason: statusReason(raw.data), error: raw.error ?? statusMessage(raw.data, `HTTP ${raw.status}`), retryAfterSeconds: raw.retryAfterSeconds, attempts: attempt };
  }

  async function call<T>(req: KubeRequest): Promise<KubeResponse<T>> {
    const p = req.retry ?? policy;
    for (let attempt = 1; ; attempt += 1) {
      const res = await attemptOnce<T>(req, attempt);
      if (res.ok) return res;
      const transient = classifyApiError({ status: res.status, reason: res.reason }).class === 'transient';
      if (!transient || !hasAttemptsLeft(p, attempt)) {
        metrics.failures += 1;
        return res;
      }
      metrics.retries += 1;
      await sleep(backoffDelay(p, attempt, random, res.retryAfterSeconds));
    }
  }

  function watch(req: KubeRequest, onObject: (obj: unknown) => void): WatchHandle {
    let abort: (() => void) | undefined;
    let stopped = false;
    /** Ended by a `closeWatchAfterMs` fault: reported as the server ending the stream. */
    let cut = false;
    let cutTimer: NodeJS.Timeout | undefined;
    const done = (async (): Promise<KubeResponse<void>> => {
      // A watch waits its turn but holds no slot: it is open for minutes.
      pacer.done(await pacer.take('watch'));
      const injected = options.faults?.(req, 1);
      if (injected?.closeWatchAfterMs !== undefined) {
        cutTimer = setTimeout(() => {
          cut = true;
          abort?.();
        }, injected.closeWatchAfterMs);
      } else if (injected) {
        record(req, injected.status ?? 500);
        return { ok: false, status: injected.status ?? 500, data: undefined, error: injected.error ?? 'injected fault', attempts: 1 };
      }
      const raw = await open(
        { ...req, timeoutMs: req.timeoutMs ?? 0 },
        (res, finish) => {
          if ((res.statusCode ?? 0) >= 300) return readAll(res, finish);
          let buffer = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffer += chunk;
            let nl: number;
            while ((nl = buffer.indexOf('\n')) >= 0) {
              const line = buffer.slice(0, nl).trim();
              buffer = buffer.slice(nl + 1);
              if (line === '') continue;
              try {
                onObject(JSON.parse(line));
              } catch (e) {
                finish({ status: 0, data: undefined, error: `bad watch line: ${(e as Error).message}` });
                res.destroy();
                return;
              }
            }
          });
          res.on('error', (e) => finish({ status: stopped ? 200 : 0, data: undefined, error: e.message }));
          res.on('close', () => finish({ status: res.statusCode ?? 200, data: undefined }));
          res.on('end', () => finish({ status: res.statusCode ?? 200, data: undefined }));
        },
        (a) => {
          abort = a;
          streams.add(a);
          if (cut) a();
        },
      );
      if (abort) streams.delete(abort);
      clearTimeout(cutTimer);
      const ended = stopped || cut;
      record(req, cut ? 200 : raw.status);
      const ok = ended || (raw.status >= 200 && raw.status < 300 && !raw.error);
      return { ok, status: ended ? 200 : raw.status, data: undefined, reason: ended ? undefined : statusReason(raw.data), error: ended ? undefined : (raw.error ?? (ok ? undefined : statusMessage(raw.data, `HTTP ${raw.status}`))), attempts: 1 };
    })();
    return {
      done,
      stop() {
        stopped = true;
        abort?.();
      },
    };
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
      conn.agent.destroy();
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
