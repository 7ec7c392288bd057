// A token bucket (sustained rate per second, burst): the fan-out paces its messages with it. API
// requests are paced adaptively instead (pacing.ts).
// The clock is injectable so that the arithmetic tests without waiting.

export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly rate: number;
  private readonly burst: number;
  private readonly now: () => number;

  constructor(ratePerSecond: number, burst: number, now: () => number = () => performance.now()) {
    this.rate = ratePerSecond;
    this.burst = Math.max(1, burst);
    this.tokens = this.burst;
    this.now = now;
    this.last = now();
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.rate);
    this.last = t;
  }

  /** Milliseconds to wait before a token is available (0 when one is there now); takes it. */
  reserve(): number {
    if (!Number.isFinite(this.rate) || this.rate <= 0) return 0;
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.rate) * 1000);
  }

  /** Waits for a token; returns how long it waited. */
  async take(sleep: (ms: number) => Promise<void>): Promise<number> {
    const wait = this.reserve();
    if (wait > 0) await sleep(wait);
    return wait;
  }
}
