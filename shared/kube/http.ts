// The webhooks' door to the API server: the one transport (transport.ts) used bare, with a short
// timeout, a static bearer token (on GKE the function's Google access token) and no retries (an
// admission decision has seconds, not minutes), but for a read answered "storage is
// (re)initializing" (errors.ts), repeated a few times within a second.
// Never throws, always `{ ok, status, data }`.
import { storageInitializing } from './errors.ts';
import { googleHeaders, metadataTokens } from './google.ts';
import { createTransport, type Verb } from './transport.ts';

export interface KubeHttpOptions {
  /** API server URL, e.g. https://10.0.0.1:6443 */
  server: string;
  /** PEM bundle the API server's certificate must chain to (default: the system roots). */
  caPem?: string;
  /** Bearer token sent on every call. */
  token?: string;
  /** `google`: the function's own Google access token from its metadata server instead (GKE). */
  credential?: 'google';
  timeoutMs?: number;
  /** Waits before repeating a read (tests stand in for the clock). */
  sleep?: (ms: number) => Promise<void>;
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
/**
 * The waits before each repeat of a GET answered "storage is (re)initializing": 0.7 s in all, well
 * inside every webhook's timeoutSeconds; the server's Retry-After (1 s) is longer than the cache
 * takes to fill.
 */
export const INITIALIZING_RETRY_MS = [100, 200, 400];

export function createKubeHttp(options: KubeHttpOptions): KubeHttp {
  const fixed: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  const headers = options.credential === 'google' ? googleHeaders(metadataTokens()) : () => fixed;
  const transport = createTransport({ server: options.server, tls: { ca: options.caPem }, headers, timeoutMs: options.timeoutMs ?? DEFAULT_KUBE_TIMEOUT_MS, maxSockets: 16 });
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  return async <T>(call: KubeCall) => {
    let a = await transport.send<T>(call);
    // Only reads: a write the server refused changed nothing, but its caller decides about repeating it.
    for (const ms of call.method === 'GET' ? INITIALIZING_RETRY_MS : []) {
      if (a.ok || !storageInitializing({ status: a.status, message: a.error })) break;
      await sleep(ms);
      a = await transport.send<T>(call);
    }
    return a.ok ? { ok: true, status: a.status, data: a.data } : { ok: false, status: a.status, data: a.data, error: a.error };
  };
}
