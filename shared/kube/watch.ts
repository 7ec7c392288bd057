// A watch on the transport's stream: one attempt (the caller reconnects), a handle to stop it, and
// the fault hook's `closeWatchAfterMs` to end it as a server would. Whatever ends it (the server,
// an error, `stop`), `done` resolves with the seam's `{ ok, status }`, never rejects.
import type { TransportAnswer, TransportRequest, Transport } from './transport.ts';

export interface WatchHandle<R> {
  /** Resolves when the stream ends (server closed it, error, or `stop`). */
  done: Promise<R>;
  stop(): void;
}

export interface WatchSeam<R> {
  transport: Transport;
  /** Waits for the rate limit. */
  throttle(): Promise<unknown>;
  /** The fault hook's answer for this watch: `cutAfterMs` lets it through and ends it that long after it opens. */
  fault(): { cutAfterMs: number } | { answer: R } | undefined;
  /** Open streams, so that closing the client ends them. */
  streams: Set<() => void>;
  /** What the caller sees of how the stream ended (`stopped`: by `stop` or a cut, which is no failure). */
  settle(answer: TransportAnswer<undefined>, stopped: boolean): R;
}

export function openWatch<R>(seam: WatchSeam<R>, req: TransportRequest, onObject: (obj: unknown) => void): WatchHandle<R> {
  let abort: (() => void) | undefined;
  let stopped = false;
  let cutTimer: NodeJS.Timeout | undefined;
  const done = (async (): Promise<R> => {
    await seam.throttle();
    const fault = seam.fault();
    if (fault && 'answer' in fault) return fault.answer;
    if (fault) {
      cutTimer = setTimeout(() => {
        stopped = true;
        abort?.();
      }, fault.cutAfterMs);
    }
    const raw = await seam.transport.stream({ ...req, timeoutMs: req.timeoutMs ?? 0 }, onObject, (a) => {
      abort = a;
      seam.streams.add(a);
      if (stopped) a();
    });
    if (abort) seam.streams.delete(abort);
    clearTimeout(cutTimer);
    return seam.settle(raw, stopped);
  })();
  return {
    done,
    stop() {
      stopped = true;
      abort?.();
    },
  };
}
