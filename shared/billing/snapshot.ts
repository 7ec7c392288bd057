// The snapshot diff: a namespace the sink believes alive, absent from a complete list of the
// cluster, was deleted while nobody watched (the relay was down, or its message was lost).
import { eventId, isoTime } from './event.ts';
import type { BillingRow, SnapshotEndMessage } from './types.ts';

/** A namespace with rows and no deletion: its latest row and the time of its first. */
export interface OpenNamespace {
  last: BillingRow;
  firstEventTime: string;
}

/**
 * Namespaces whose first row is older than this before the snapshot are judged by it; younger
 * ones may have been created after the relay read its clock and missed the list (creationTimestamp
 * has whole seconds, and the API server's clock is not the relay's). They are judged by the next
 * snapshot.
 */
export const SNAPSHOT_GRACE_MS = 2 * 60 * 1000;

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
    deleted.push({
      ...o.last,
      event: 'deleted',
      event_id: eventId({ cluster: o.last.cluster, uid: o.last.namespace_uid, event: 'deleted', eventTime: end.takenAt }),
      event_time: isoTime(end.takenAt),
      recorded_time: isoTime(recordedAt),
    });
  }
  return deleted;
}
