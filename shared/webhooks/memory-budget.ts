// How much memory the reviews in progress may hold at once. A review's cost is known, within the
// body limits (admission/scan.ts), from its size before its body is read: each request takes that
// much of the budget before reading its body and gives it back once answered, so peak memory is
// the budget, not the number of requests times the worst shape. Requests wait their turn in order
// (a large one is never overtaken for ever by small ones); one that cannot start within its wait
// is refused with 429 and Retry-After (kube-apiserver retries it), before its body is read.
import { AdmissionError } from '../admission/errors.ts';
import { MAX_BODY_VALUES } from '../admission/scan.ts';

/**
 * Memory a review of `bytes` bytes may cost, at most, in the serving process: the bytes read, the
 * text decoded from them and the strings parsed out of it, with transient copies (BYTE_COST per
 * byte), and every value JSON.parse makes (VALUE_COST each, at most one per two bytes and
 * MAX_BODY_VALUES). Measured worst cases by shape: test/bench/webhooks-memory.bench.ts.
 */
export const BYTE_COST = 5;
export const VALUE_COST = 160;

/**
 * As deployed (terraform/variables.tf webhook): the memory of one instance, and how many requests
 * it takes at once: 32 reviews of kube-apiserver's largest size, in the costliest shapes, peak under
 * 75 % of it (test/bench/webhooks-memory.bench.ts; test/terraform/webhook-sizing.test.ts).
 */
export const WEBHOOK_MEMORY_MIB = 256;
export const WEBHOOK_CONCURRENCY = 32;

/**
 * Node flags of the webhook functions (terraform/main.tf NODE_OPTIONS): a heap of fixed shape
 * whatever the host, as shared/functions/memory-flags.ts does for the reconcilers. The budget
 * bounds what reviews keep alive; these bound the garbage they leave before a GC (young
 * generation, and how far the old one grows past what is live).
 */
export const WEBHOOK_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2', '--max-old-space-size=160'];

/** The cost of a review of `bytes` bytes with `values` values (at most what one of its size can hold, by default). */
export function reviewCost(bytes: number, values = Math.min(Math.ceil(bytes / 2), MAX_BODY_VALUES)): number {
  return bytes * BYTE_COST + values * VALUE_COST;
}

export interface Permit {
  /** Gives back what the review turned out not to need (once its values are counted); never takes more. */
  shrink(weight: number): void;
  /** Gives the memory back; a second call does nothing. */
  release(): void;
}

interface Waiter {
  weight: number;
  grant(permit: Permit): void;
  timer: NodeJS.Timeout;
}

export class MemoryBudget {
  private used = 0;
  private readonly queue: Waiter[] = [];

  /** Bytes of estimated cost that may be in progress at once. */
  readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** Bytes of cost in progress. */
  get inUse(): number {
    return this.used;
  }

  /** Requests waiting for their turn. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * A permit for `weight` (a request costlier than the whole budget runs alone), at once when
   * nothing waits and it fits, else in turn; refused with a 429 AdmissionError after `waitMs`.
   */
  acquire(weight: number, waitMs: number): Permit | Promise<Permit> {
    const w = Math.min(weight, this.capacity);
    if (this.queue.length === 0 && this.used + w <= this.capacity) return this.take(w);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        weight: w,
        grant: resolve,
        timer: setTimeout(() => {
          this.queue.splice(this.queue.indexOf(waiter), 1);
          const refusal = this.busy(w);
          // The head may fit now that it no longer waits behind this one.
          this.grantWaiting();
          reject(refusal);
        }, waitMs),
      };
      this.queue.push(waiter);
    });
  }

  private busy(weight: number): AdmissionError {
    const mib = (n: number) => `${Math.ceil(n / 1048576)} MiB`;
    return new AdmissionError(
      'busy',
      `webhook busy: reviews in progress hold ${mib(this.used)} of its ${mib(this.capacity)} memory budget, ${this.queue.length} more wait, and this one needs ${mib(weight)}; retry`,
    );
  }

  private take(weight: number): Permit {
    this.used += weight;
    let held = weight;
    const giveBack = (amount: number) => {
      this.used -= amount;
      held -= amount;
      this.grantWaiting();
    };
    return {
      shrink: (to) => {
        if (to < held) giveBack(held - Math.max(0, to));
      },
      release: () => {
        if (held > 0) giveBack(held);
      },
    };
  }

  private grantWaiting(): void {
    while (this.queue.length > 0 && this.used + this.queue[0]!.weight <= this.capacity) {
      const next = this.queue.shift()!;
      clearTimeout(next.timer);
      next.grant(this.take(next.weight));
    }
  }
}
