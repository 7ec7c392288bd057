// The snapshot diff: a namespace the sink believes alive, absent from a complete list of the
// cluster, was deleted while nobody watched (the relay was down, or its message was lost). And its
// mirror: an event that arrives after a complete list that lacked its namespace (a late `created`:
// Pub/Sub redelivery, or another ordering key than the snapshot's) opens nothing that list already
// closed.
import { impliedDeletionId, isoTime } from './event.ts';
import type { BillingRow, SnapshotEndMessage } from './types.ts';

/** A namespace with rows and no deletion: its latest row and the time of its first. */
export interface OpenNamespace {
  last: BillingRow;
  firstEventTime: string;
}

/** What the sink remembers of a cluster's latest complete snapshot, asked about one namespace uid. */
export interface SnapshotListing {
  takenAt: string;
  /** The snapshot listed the uid (the namespace was alive at takenAt). */
  listed: boolean;
}

/**
 * Namespaces whose first row is older than this before the snapshot are judged by it; younger
 * ones may have been created after the relay read its clock and missed the list (creationTimestamp
 * has whole seconds, and the API server's clock is not the relay's). They are judged by the next
 * snapshot.
 */
export const SNAPSHOT_GRACE_MS = 2 * 60 * 1000;

/** The deletion of the namespace of `last`, implied by the snapshot taken at `takenAt` (noticed then). */
function deletionAt(last: BillingRow, takenAt: string, recordedAt: Date): BillingRow {
  return {
    ...last,
    event: 'deleted',
    event_id: impliedDeletionId(last.cluster, last.namespace_uid, takenAt),
    event_time: isoTime(takenAt),
    recorded_time: isoTime(recordedAt),
  };
}

/**
 * The deletion rows a complete snapshot implies, noticed at the snapshot's time. `open` is read
 * one namespace at a time (the sink streams them): only the deletions are kept.
 */
export async function deletionsMissingFromSnapshot(open: AsyncIterable<OpenNamespace> | Iterable<OpenNamespace>, end: SnapshotEndMessage, recordedAt: Date, graceMs = SNAPSHOT_GRACE_MS): Promise<BillingRow[]> {
  const live = new Set(end.uids);
  const judgedBefore = Date.parse(end.takenAt) - graceMs;
  const deleted: BillingRow[] = [];
  for await (const o of open) {
    if (o.last.cluster !== end.cluster || live.has(o.last.namespace_uid) || Date.parse(o.firstEventTime) >= judgedBefore) continue;
    deleted.push(deletionAt(o.last, end.takenAt, recordedAt));
  }
  return deleted;
}

/** The time after which a complete snapshot lacking this row's namespace contradicts it (the diff's grace), or null for a deletion. */
function contradictedAfter(row: BillingRow, graceMs: number): number | null {
  return row.event === 'deleted' ? null : Date.parse(row.event_time) + graceMs;
}

/**
 * Whether the snapshots must be read for this row, checked once it is written (`checkedAt`): the
 * time after which a complete snapshot lacking its namespace contradicts it, or null when no
 * snapshot recorded by then can. A snapshot is recorded after it is taken, so it must be younger
 * than the event by the grace; and, when the relay said when it saw the namespace alive
 * (`observedAt`), a snapshot lacking it was taken after that (a complete list taken earlier, more
 * than the grace after the event, listed it). So an event delivered within the grace of that
 * observation reads nothing, even a `created` a restarted relay republished a year after the
 * creation: a relay restart costs no snapshot read. What that leaves to the next snapshot: a
 * namespace deleted within the grace after the observation, whose watched `deleted` was lost with
 * its relay, and whose event arrived after the snapshot that no longer listed it (the blind spot
 * events without observedAt already had, the grace after their eventTime). Clocks: the relay's
 * against record-billing's: a relay behind only costs reads; one ahead widens that window by at
 * most the delivery's latency, since an observedAt after `checkedAt` is not trusted (the event's
 * time counts: reads again).
 */
export function contradictableAfter(row: BillingRow, checkedAt: Date, graceMs = SNAPSHOT_GRACE_MS, observedAt?: string): string | null {
  const after = contradictedAfter(row, graceMs);
  if (after === null) return null;
  const seen = observedAt === undefined ? NaN : Date.parse(observedAt);
  const readAfter = seen <= checkedAt.getTime() ? Math.max(after, seen + graceMs) : after;
  return readAfter < checkedAt.getTime() ? isoTime(after) : null;
}

/**
 * The deletion a late event implies: its namespace was alive at the event, and the latest complete
 * snapshot, taken more than the grace after it, did not list it, so it was gone by then. The
 * event is billed, with its deletion at that snapshot's time, instead of reopening the namespace
 * until the next snapshot. Its id is the snapshot's (impliedDeletionId): a redelivery adds nothing,
 * and the namespace's own `deleted`, if it follows, is stored too (the report counts the earlier).
 */
export function deletionContradicting(row: BillingRow, latest: SnapshotListing | undefined, recordedAt: Date, graceMs = SNAPSHOT_GRACE_MS): BillingRow | null {
  const after = contradictedAfter(row, graceMs);
  if (after === null || !latest || latest.listed || Date.parse(latest.takenAt) <= after) return null;
  return deletionAt(row, latest.takenAt, recordedAt);
}
