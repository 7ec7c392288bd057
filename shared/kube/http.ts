// The one seam every webhook-side API call passes: never throws, always `{ ok, status, data }`,
// bounded by a timeout. node:https rather than fetch so that a cluster's own CA needs no extra
// dependency, loaded with process.getBuiltinModule when first needed: an ES `import` of
// node:http builds its whole namespace, whose lazy getters load Node's bundled undici, http2 and
// worker_threads (~40 ms of every cold start).

export interface KubeHttpOptions {
  /** API server URL, e.g. https://10.0.0.1:6443 */
  server: string;
  /** PEM bundle the API server's certificate must chain to (default: the system roots). */
  caPem?: string;
  /** Bearer token sent on every call. */
  token?: string;
  timeoutMs?: number;
}

export interface KubeCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
}

export interface KubeResult<T = unknown> {
  ok: boolean;
  /** HTTP status; 0 when no answer arrived (network error, timeout). */
  status: number;
  data: T | undefined;
  /** Why the call failed, for messages. */
  error?: string;
}

export type KubeHttp = <T = unknown>(call: KubeCall) => Promise<KubeResult<T>>;

export const DEFAULT_KUBE_TIMEOUT_MS = 2000;

export function createKubeHttp(options: KubeHttpOptions): KubeHttp {
  const base = new URL(options.server);
  const secure = base.protocol === 'https:';
  const http = process.getBuiltinModule('node:http');
  const https = process.getBuiltinModule('node:https');
  const agent = secure ? new https.Agent({ keepAlive: true, maxSockets: 16, ca: options.caPem }) : new http.Agent({ keepAlive: true, maxSockets: 16 });
  const send = secure ? https.request : http.request;
  const timeoutMs = options.timeoutMs ?? DEFAULT_KUBE_TIMEOUT_MS;
  const prefix = base.pathname.replace(/\/$/, '');

  return <T>(call: KubeCall) =>
    new Promise<KubeResult<T>>((resolve) => {
      const payload = call.body === undefined ? undefined : Buffer.from(JSON.stringify(call.body));
      const headers: Record<string, string> = { accept: 'application/json' };
      if (payload) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = String(payload.length);
      }
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      const done = (r: KubeResult<T>) => resolve(r);
      const req = send(
        { protocol: base.protocol, hostname: base.hostname, port: base.port, path: prefix + call.path, method: call.method, headers, agent, timeout: timeoutMs },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (e) => done({ ok: false, status: 0, data: undefined, error: e.message }));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString('utf8');
            let data: T | undefined;
            try {
              data = text ? (JSON.parse(text) as T) : undefined;
            } catch {
              data = undefined;
            }
            const ok = status >= 200 && status < 300;
            const message = (data as { message?: unknown } | undefined)?.message;
            done(ok ? { ok, status, data } : { ok, status, data, error: typeof message === 'string' ? message : `HTTP ${status}` });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer from ${base.host} within ${timeoutMs} ms`)));
      req.on('error', (e) => done({ ok: false, status: 0, data: undefined, error: e.message }));
      req.end(payload);
    });
}
