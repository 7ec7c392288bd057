// Namespace resourceVersions, compared: how fresh a true-up's namespace list must be. Kubernetes
// calls them opaque, but every one it hands out is an etcd revision (a decimal that only grows);
// anything else is "not comparable" and the true-up reads etcd instead of trusting an order.

const REVISION = /^[1-9][0-9]{0,19}$/;

export function isRevision(v: string | undefined): v is string {
  return v !== undefined && REVISION.test(v);
}

/** The newer of two revisions (decimals of any length: longer is newer, then by digits). */
export function newerRevision(a: string, b: string): string {
  if (a.length !== b.length) return a.length > b.length ? a : b;
  return a >= b ? a : b;
}

/** The newest revision among `versions`, absent ones skipped; undefined when none is one. */
export function newestRevision(versions: Iterable<string | undefined>): string | undefined {
  let newest: string | undefined;
  for (const v of versions) if (isRevision(v)) newest = newest === undefined ? v : newerRevision(newest, v);
  return newest;
}

/**
 * What the next true-up of each organization must read at least: the newest revision of the
 * events it answers, or `null` once one of them had none (that true-up lists from etcd). Events
 * note before they ask for a pass, and a pass takes what was noted when it starts: a pass answers
 * only events that arrived before it started (reconcile/concurrency.ts coalescer), so it reads
 * at least as fresh as the newest of them.
 */
export class PendingRevisions {
  private readonly wanted = new Map<string, string | null>();

  note(organization: string, resourceVersion: string | undefined): void {
    const before = this.wanted.get(organization);
    if (!isRevision(resourceVersion) || before === null) this.wanted.set(organization, null);
    else this.wanted.set(organization, before === undefined ? resourceVersion : newerRevision(before, resourceVersion));
  }

  /** The revision a starting pass must reach (undefined: read etcd), forgotten once taken. */
  take(organization: string): string | undefined {
    const v = this.wanted.get(organization);
    this.wanted.delete(organization);
    return v ?? undefined;
  }
}
