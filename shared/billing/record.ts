// record-billing's work, one message at a time: an event becomes one row (billing fields from the
// namespace, else from its Organization), plus its namespace's deletion when a later complete
// snapshot already lacked it; a snapshot's end is kept, then becomes the deletion rows of the
// namespaces it no longer lists. Idempotent: a redelivered message writes the same event ids.
import type { KubeClient } from '../kube/client.ts';
import { classifyApiError, statusMessage, TransientError } from '../kube/errors.ts';
import type { Logger } from '../log.ts';
import { buildRow } from './event.ts';
import type { BillingSink, InsertOutcome } from './sink.ts';
import { contradictableAfter, deletionContradicting, deletionsMissingFromSnapshot } from './snapshot.ts';
import type { BillingEventMessage, BillingMessage, BillingRow, SnapshotEndMessage } from './types.ts';

export interface RecordDeps {
  sink: BillingSink;
  /** An Organization's spec.billing ({} when it has none, or does not exist). Throws TransientError to retry. */
  organizationBilling(cluster: string, organization: string): Promise<Record<string, string>>;
  now(): Date;
  log: Logger;
  /** See SNAPSHOT_GRACE_MS. */
  snapshotGraceMs?: number;
}

export interface RecordResult {
  rows: number;
  inserted: number;
  duplicates: number;
  refused: number;
  eventId?: string;
}

/** Rows the sink refused for good are logged and acknowledged; rows still failing make the delivery fail. */
async function write(deps: RecordDeps, rows: BillingRow[]): Promise<InsertOutcome> {
  const outcome = rows.length === 0 ? { inserted: 0, duplicates: 0, failed: [] } : await deps.sink.insert(rows);
  for (const f of outcome.failed) deps.log.log('ERROR', f.retryable ? 'billing row not stored yet' : 'billing row refused by the sink', { eventId: f.row.event_id, namespace: f.row.namespace, reason: f.reason });
  const retry = outcome.failed.filter((f) => f.retryable);
  if (retry.length > 0) throw new TransientError(`${retry.length} billing row(s) not stored: ${retry[0]!.reason}`, { status: 503 });
  return outcome;
}

/**
 * The event's row, written before the latest snapshot is read: a snapshot kept after that write
 * diffs against the row itself (it is kept before its diff reads), one kept before it is read
 * here, so a concurrent snapshot and late event cannot both miss each other. Whether to read is
 * decided by the clock after the write, not before: a snapshot kept while the row was being
 * written (retries, the Organization's read) is then not skipped as "too recent".
 */
async function recordEvent(deps: RecordDeps, msg: BillingEventMessage, recordedAt: Date): Promise<{ rows: BillingRow[]; outcome: InsertOutcome }> {
  const orgBilling = msg.billing === undefined && msg.organization !== '' ? await deps.organizationBilling(msg.cluster, msg.organization) : {};
  const row = buildRow(msg, orgBilling, recordedAt);
  const outcome = await write(deps, [row]);
  const after = contradictableAfter(row, deps.now(), deps.snapshotGraceMs, msg.observedAt);
  const deletion = after === null ? null : deletionContradicting(row, await deps.sink.latestSnapshot(msg.cluster, msg.uid, after), recordedAt, deps.snapshotGraceMs);
  if (!deletion) return { rows: [row], outcome };
  deps.log.log('INFO', 'late event: a later snapshot already lacked its namespace, deletion recorded', { cluster: msg.cluster, namespace: msg.namespace, event: msg.event, eventTime: row.event_time, deletedAt: deletion.event_time });
  return { rows: [row, deletion], outcome: sum(outcome, await write(deps, [deletion])) };
}

/** The snapshot is kept before its diff reads the open namespaces (see recordEvent). */
async function recordSnapshotEnd(deps: RecordDeps, msg: SnapshotEndMessage, recordedAt: Date): Promise<{ rows: BillingRow[]; outcome: InsertOutcome }> {
  await deps.sink.saveSnapshot(msg, recordedAt);
  const rows = await deletionsMissingFromSnapshot(deps.sink.openNamespaces(msg.cluster), msg, recordedAt, deps.snapshotGraceMs);
  if (rows.length > 0) deps.log.log('INFO', 'snapshot: namespaces deleted while unwatched', { cluster: msg.cluster, takenAt: msg.takenAt, namespaces: rows.map((r) => r.namespace) });
  return { rows, outcome: await write(deps, rows) };
}

function sum(a: InsertOutcome, b: InsertOutcome): InsertOutcome {
  return { inserted: a.inserted + b.inserted, duplicates: a.duplicates + b.duplicates, failed: [...a.failed, ...b.failed] };
}

export async function recordBilling(deps: RecordDeps, msg: BillingMessage): Promise<RecordResult> {
  const recordedAt = deps.now();
  const { rows, outcome } = msg.type === 'event' ? await recordEvent(deps, msg, recordedAt) : await recordSnapshotEnd(deps, msg, recordedAt);
  return { rows: rows.length, inserted: outcome.inserted, duplicates: outcome.duplicates, refused: outcome.failed.length, ...(msg.type === 'event' ? { eventId: rows[0]!.event_id } : {}) };
}

function stringMap(v: unknown): Record<string, string> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/**
 * Reads spec.billing of an Organization (furnish.dev/v1alpha1), briefly cached: a snapshot asks
 * for the same few organizations thousands of times. Absent (404, or the kind not installed): {}.
 */
export function organizationBillingReader(kubeFor: (cluster: string) => Promise<KubeClient>, log: Logger, ttlMs = 30_000, now = () => Date.now()): RecordDeps['organizationBilling'] {
  const cache = new Map<string, { at: number; billing: Record<string, string> }>();
  return async (cluster, organization) => {
    const key = `${cluster}/${organization}`;
    const hit = cache.get(key);
    if (hit && now() - hit.at < ttlMs) return hit.billing;
    const kube = await kubeFor(cluster);
    const res = await kube.call<{ spec?: { billing?: unknown } }>({ method: 'GET', path: `/apis/furnish.dev/v1alpha1/organizations/${encodeURIComponent(organization)}` });
    let billing: Record<string, string> = {};
    if (res.ok) billing = stringMap(res.data?.spec?.billing);
    else if (classifyApiError({ status: res.status, reason: res.reason, message: res.error }).class === 'transient') {
      throw new TransientError(`reading organization ${organization}: ${statusMessage(res.data, res.error ?? `HTTP ${res.status}`)}`, { status: res.status, reason: res.reason });
    } else if (res.status !== 404) log.log('WARNING', 'organization not readable: row without its billing fields', { cluster, organization, status: res.status, error: res.error });
    cache.set(key, { at: now(), billing });
    return billing;
  };
}
