// Which delivery an API call serves. The push runtime runs each message inside its cause
// (push.ts handleEnvelope) and the client stamps it on every request it sends (KubeRequest.cause):
// on a cluster where other work goes on, a hook at the seam can tell this message's calls from
// the rest. AsyncLocalStorage follows the awaits, timers and callbacks a reconcile starts. Work
// that deliveries share (a list in flight others join, discovery, a coalesced recount) carries
// the cause of the delivery that started it: a count by cause is a lower bound for the others,
// and such work stops at that delivery's deadline (the others then retry).
import { AsyncLocalStorage } from 'node:async_hooks';

export interface Cause {
  /** The message's kind and the object it names (a batch: its label). */
  kind: string;
  name: string;
  /** What the message says started it: a fan-out's `template/<name>@<resourceVersion>`. */
  by?: string;
  /**
   * `performance.now()` after which the delivery sends no call (config.ts callWindowMs): the
   * client answers them unsent, as transient failures, and the delivery is retried.
   */
  callsUntil?: number;
}

const causes = new AsyncLocalStorage<Cause>();

/** Runs `fn` with `cause` as the cause of every call made from it. */
export function withCause<T>(cause: Cause, fn: () => T): T {
  return causes.run(cause, fn);
}

/** The cause of the code running now; undefined outside a delivery (the relay, a watch, start-up). */
export function currentCause(): Cause | undefined {
  return causes.getStore();
}
