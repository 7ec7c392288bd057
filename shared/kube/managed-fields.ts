// Who wrote an object last, as its managedFields say: the relay's drift watches ask it of every
// change they see (a change by the writer itself is not drift).
import { FIELD_MANAGER } from '../keys.ts';
import type { KubeObject } from './types.ts';

interface ManagedEntry {
  manager?: string;
  time?: string;
  subresource?: string;
}

/**
 * Whether the last write recorded on the object was the reconciler's own: every newest managedFields
 * entry is a manager `ours` accepts (by default the namespace reconciler's FIELD_MANAGER). Writes
 * of the status subresource do not count: templates never set status (it is not compared), and a
 * controller keeping it (the quota controller filling a ResourceQuota's `used`) is not drift.
 */
export function lastWrittenByFurnish(obj: KubeObject, ours: (manager: string) => boolean = (m) => m === FIELD_MANAGER): boolean {
  const entries = ((obj.metadata.managedFields ?? []) as ManagedEntry[]).filter((e) => e.subresource !== 'status');
  if (entries.length === 0) return false;
  const newest = entries.reduce((a, b) => ((b.time ?? '') > (a.time ?? '') ? b : a));
  const newestTime = newest.time ?? '';
  // Same-second entries cannot be ordered: count it as someone else's, a reconcile costs reads only.
  return entries.filter((e) => (e.time ?? '') === newestTime).every((e) => ours(e.manager ?? ''));
}
