// The webhooks' door to the API server: the one transport (transport.ts) used bare, with a short
// timeout, a static bearer token and no retries (an admission decision has seconds, not minutes).
// Never throws, always `{ ok, status, data }`.
import { createTransport, type Verb } from './transport.ts';

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
  method: Verb;
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
  const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  const transport = createTransport({ server: options.server, tls: { ca: options.caPem }, headers: () => headers, timeoutMs: options.timeoutMs ?? DEFAULT_KUBE_TIMEOUT_MS, maxSockets: 16 });
  return async <T>(call: KubeCall) => {
    const a = await transport.send<T>(call);
    return a.ok ? { ok: true, status: a.status, data: a.data } : { ok: false, status: a.status, data: a.data, error: a.error };
  };
}
