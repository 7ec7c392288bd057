// The Functions Framework runs every request inside a node:domain (its wrapHttpFunction, to turn
// an uncaught exception into a crash response). Once a domain is entered, node's domain async hook
// tags every promise, timer and socket created under it, and enters and leaves the domain around
// each of their callbacks: measured in a reconciler's CPU profile of a 1,000-namespace burst, a
// seventh of its busy time (test/bench/population.bench.ts, BENCH_CPU_PROFILE). Furnish's
// functions catch their own failures and answer them (a rejected promise still reaches the
// framework's catch), so they need no domain: each leaves it as it starts.
/** What node sets while a domain is entered (not in @types/node's Process). */
type WithDomain = { domain?: { exit(): void } | null };

/**
 * `fn`, run outside the request's domain. The wrapper is not async on purpose: the promise `fn`
 * returns, and everything it awaits, must be created after the domain is left.
 */
export function outsideDomain<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  return (...args: A): R => {
    // Exits every domain entered for this request (the framework's is the only one); a no-op outside one.
    (process as WithDomain).domain?.exit();
    return fn(...args);
  };
}
