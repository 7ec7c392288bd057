// What the next true-up of each organization must read at least (see kube/revisions.ts for how
// revisions compare).
import { isRevision, newerRevision } from '../kube/revisions.ts';

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
