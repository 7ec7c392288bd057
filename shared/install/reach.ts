// The I/O of reachability.ts: one GET per function's liveness URL from this machine, recording how
// far it got (resolved, connected, secured, answered) for the pure classifier to judge.
import { request } from 'node:https';
import { isIP } from 'node:net';
import type { Socket } from 'node:net';
import { reachabilityOf, type Attempt, type CalledFunction, type Reachability, type Stage } from './reachability.ts';

export interface AttemptOptions {
  /** PEM of the CA bundle the registrations carry; absent: the public CAs, as kube-apiserver then uses. */
  ca?: string;
  timeoutMs: number;
}

/** One GET of `url`, never rejecting: what it saw, for reachabilityOf. */
export function attemptGet(url: string, o: AttemptOptions): Promise<Attempt> {
  return new Promise((resolve) => {
    let stage: Stage = isIP(new URL(url).hostname.replace(/^\[|\]$/g, '')) ? 'resolved' : 'start';
    let settled = false;
    const req = request(url, { method: 'GET', agent: false, ca: o.ca, headers: { 'user-agent': 'furnish-install' } }, (res) => {
      res.resume();
      done({ status: res.statusCode });
    });
    function done(seen: Pick<Attempt, 'status' | 'error' | 'timedOutMs'>): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ url, stage, caBundle: o.ca !== undefined, ...seen });
    }
    req.on('socket', (socket: Socket) => {
      socket.on('lookup', (err: Error | null) => void (err ? undefined : (stage = 'resolved')));
      socket.on('connect', () => void (stage = 'connected'));
      socket.on('secureConnect', () => void (stage = 'secured'));
    });
    req.on('error', (e: NodeJS.ErrnoException) => done({ error: { code: e.code, message: e.message } }));
    const timer = setTimeout(() => done({ timedOutMs: o.timeoutMs }), o.timeoutMs);
    req.end();
  });
}

export interface FunctionReach extends CalledFunction {
  reach: Reachability;
}

/** Every function's liveness URL at once, each checked with its registration's CA bundle. */
export function reachFunctions(functions: readonly CalledFunction[], timeoutMs: number, attempt: typeof attemptGet = attemptGet): Promise<FunctionReach[]> {
  return Promise.all(functions.map(async (f) => ({ ...f, reach: reachabilityOf(await attempt(f.url, { ca: f.ca, timeoutMs })) })));
}
