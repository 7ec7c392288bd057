// The BigQuery sink: streaming insert (tabledata.insertAll) with the event id as insertId, and
// reads from the de-duplicating view (insertId de-duplication is best-effort only).
//
// How @google-cloud/bigquery 9 behaves, read from its source (build/src/table.js):
//   - without `raw: true`, insert() wraps every row with a random insertId; only `raw: true`
//     sends rows as given ({ insertId, json });
//   - insertErrors in the response become a PartialFailureError whose `errors` are
//     [{ row, errors: [{ reason, message }] }], row being the raw row we passed;
//   - `partialRetries` (default 3) re-sends failed rows at once, whatever the reason: we set it
//     to 0 and retry ourselves, with backoff, only rows whose reasons are transient.
// `skipInvalidRows: true` makes BigQuery store the valid rows of a request that also has invalid
// ones (otherwise the whole request is refused and every valid row comes back as `stopped`).
import { BigQuery, type BigQueryOptions, type Table } from '@google-cloud/bigquery';
import { OAuth2Client } from 'google-auth-library';
import { TransientError } from '../kube/errors.ts';
import { hashId, isoTime } from './event.ts';
import type { BillingSink } from './sink.ts';
import { SinkNotReady, snapshotsTableName, viewName } from './sink.ts';
import type { OpenNamespace } from './snapshot.ts';
import type { BillingEventType, BillingRow, SnapshotEndMessage } from './types.ts';

/** insertErrors reasons worth another try; anything else (invalid, accessDenied, ...) is final. */
export const RETRYABLE_REASONS: ReadonlySet<string> = new Set(['backendError', 'internalError', 'timeout', 'rateLimitExceeded', 'stopped']);

export interface BigQuerySinkOptions {
  projectId: string;
  dataset: string;
  table: string;
  /** Tries per row, the first included. */
  attempts?: number;
  backoffMs?: number;
  sleep?: (ms: number) => Promise<void>;
  clientOptions?: BigQueryOptions | Record<string, unknown>;
}

interface RawRow {
  insertId: string;
  json: Record<string, unknown>;
}

interface PartialFailure {
  row: RawRow;
  errors: Array<{ reason?: string; message?: string }>;
}

export function toRaw(row: BillingRow): RawRow {
  return { insertId: row.event_id, json: { ...row, billing: JSON.stringify(row.billing) } };
}

/** A PartialFailureError from insert(): the failed rows, with their reasons. */
function partialFailures(e: unknown): PartialFailure[] | undefined {
  const err = e as { name?: string; errors?: unknown };
  return err?.name === 'PartialFailureError' && Array.isArray(err.errors) ? (err.errors as PartialFailure[]) : undefined;
}

export function isRetryable(f: Pick<PartialFailure, 'errors'>): boolean {
  return f.errors.length > 0 && f.errors.every((x) => RETRYABLE_REASONS.has(x.reason ?? ''));
}

interface StreamFailure {
  insertId: string;
  reason: string;
  retryable: boolean;
}

/** A snapshot's row: its insertId is the cluster and time, so a redelivered snapshot-end is one row. */
export function snapshotRaw(end: SnapshotEndMessage, recordedAt: Date): RawRow {
  const takenAt = isoTime(end.takenAt);
  return { insertId: hashId([end.cluster, takenAt]), json: { cluster: end.cluster, taken_at: takenAt, recorded_time: isoTime(recordedAt), uids: end.uids } };
}

function describe(f: PartialFailure): string {
  return f.errors.map((x) => `${x.reason ?? 'unknown'}: ${x.message ?? ''}`).join('; ');
}

/**
 * A request that failed because a table is missing (HTTP 404 notFound: insertAll into it, or a
 * query reading it), as an error that names it and the fix; undefined for any other failure.
 * Terraform creates the tables: record-billing deployed before `terraform apply` meets this.
 */
export function missingTableError(e: unknown, table: string): SinkNotReady | undefined {
  const err = e as { code?: unknown; errors?: Array<{ reason?: string }>; message?: string } | undefined;
  if (err?.code !== 404 && !err?.errors?.some((x) => x.reason === 'notFound')) return undefined;
  return new SinkNotReady(`BigQuery table ${table} not found (${err.message ?? 'HTTP 404'}): run terraform apply (terraform/billing.tf creates it) before deploying record-billing; Pub/Sub redelivers the message until then`);
}

/** BigQuery answers TIMESTAMP as BigQueryTimestamp ({ value }). */
function text(v: unknown): string {
  return v && typeof v === 'object' && 'value' in v ? String((v as { value: unknown }).value) : v == null ? '' : String(v);
}

/** BigQuery answers JSON as a string. */
function fromResult(r: Record<string, unknown>): BillingRow {
  const billing = r.billing;
  return {
    event_id: text(r.event_id),
    event: text(r.event) as BillingEventType,
    event_time: new Date(text(r.event_time)).toISOString(),
    recorded_time: new Date(text(r.recorded_time)).toISOString(),
    cluster: text(r.cluster),
    namespace: text(r.namespace),
    namespace_uid: text(r.namespace_uid),
    organization: text(r.organization),
    creator: text(r.creator),
    billing: typeof billing === 'string' ? (JSON.parse(billing) as Record<string, string>) : ((billing as Record<string, string> | null) ?? {}),
    resource_version: text(r.resource_version),
  };
}

/**
 * Client options for a local BigQuery-compatible endpoint (an emulator, a test server): its URL,
 * and a fixed token instead of Google credentials, like PUBSUB_EMULATOR_HOST for Pub/Sub.
 */
export function emulatorOptions(apiEndpoint: string): BigQueryOptions {
  const authClient = new OAuth2Client();
  authClient.setCredentials({ access_token: 'emulator', expiry_date: Date.now() + 365 * 86_400_000 });
  return { apiEndpoint, authClient } as BigQueryOptions;
}

export function createBigQuerySink(opts: BigQuerySinkOptions): BillingSink {
  const client = new BigQuery({ projectId: opts.projectId, ...opts.clientOptions } as BigQueryOptions);
  const table = client.dataset(opts.dataset).table(opts.table);
  const snapshots = client.dataset(opts.dataset).table(snapshotsTableName(opts.table));
  const qualified = (name: string) => `${opts.projectId}.${opts.dataset}.${name}`;
  const snapshotsTable = qualified(snapshotsTableName(opts.table));
  const view = `\`${qualified(viewName(opts.table))}\``;
  const attempts = opts.attempts ?? 4;
  const backoffMs = opts.backoffMs ?? 500;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));

  /** `reads`: the table or view the query reads, named when it is missing. */
  async function query(sql: string, params: Record<string, unknown>, reads: string): Promise<Array<Record<string, unknown>>> {
    try {
      const [rows] = await client.query({ query: sql, params });
      return rows as Array<Record<string, unknown>>;
    } catch (e) {
      throw missingTableError(e, reads) ?? e;
    }
  }

  /** Streams rows; retries alone, with backoff, those that failed for a transient reason. */
  async function stream(target: Table, raws: RawRow[]): Promise<{ inserted: number; failed: StreamFailure[] }> {
    let inserted = 0;
    const failed: StreamFailure[] = [];
    let pending = raws;
    for (let attempt = 1; pending.length > 0; attempt += 1) {
      let failures: PartialFailure[] = [];
      try {
        await target.insert(pending, { raw: true, skipInvalidRows: true, partialRetries: 0 });
      } catch (e) {
        const partial = partialFailures(e);
        // The whole request failed (network, 5xx after the client's own retries): the caller retries it.
        if (!partial) throw missingTableError(e, qualified(target.id ?? '')) ?? e;
        failures = partial;
      }
      inserted += pending.length - failures.length;
      const retry = failures.filter(isRetryable);
      failed.push(...failures.filter((f) => !isRetryable(f)).map((f) => ({ insertId: f.row.insertId, reason: describe(f), retryable: false })));
      if (retry.length > 0 && attempt >= attempts) {
        failed.push(...retry.map((f) => ({ insertId: f.row.insertId, reason: `${describe(f)} (after ${attempt} attempts)`, retryable: true })));
        break;
      }
      pending = retry.map((f) => f.row);
      if (pending.length > 0) await sleep(backoffMs * 2 ** (attempt - 1));
    }
    return { inserted, failed };
  }

  return {
    kind: 'bigquery',
    async insert(rows) {
      const byId = new Map(rows.map((r) => [r.event_id, r]));
      const { inserted, failed } = await stream(table, rows.map(toRaw));
      return { inserted, duplicates: 0, failed: failed.map(({ insertId, reason, retryable }) => ({ row: byId.get(insertId)!, reason, retryable })) };
    },
    async saveSnapshot(end, recordedAt) {
      // Every snapshot is appended (a streamed row cannot be updated); latestSnapshot reads the newest.
      const [failed] = (await stream(snapshots, [snapshotRaw(end, recordedAt)])).failed;
      if (!failed) return;
      if (failed.retryable) throw new TransientError(`snapshot not stored: ${failed.reason}`, { status: 503 });
      throw new Error(`snapshot refused by ${snapshotsTableName(opts.table)}: ${failed.reason}`);
    },
    async latestSnapshot(cluster, uid, after) {
      // Partitioned by day of taken_at: only the days after the event are read.
      const [r] = await query(
        `SELECT taken_at, @uid IN UNNEST(uids) AS listed FROM \`${snapshotsTable}\`
         WHERE cluster = @cluster AND taken_at > @after ORDER BY taken_at DESC LIMIT 1`,
        { cluster, uid, after: BigQuery.timestamp(after) },
        snapshotsTable,
      );
      return r && { takenAt: new Date(text(r.taken_at)).toISOString(), listed: r.listed === true };
    },
    async *openNamespaces(cluster): AsyncGenerator<OpenNamespace> {
      // The result's pages as a stream (createQueryStream), not every namespace of the cluster at once.
      const rows = client.createQueryStream({
        query: `SELECT * FROM (
           SELECT v.*, MIN(event_time) OVER (PARTITION BY namespace_uid) AS first_time,
             COUNTIF(event = 'deleted') OVER (PARTITION BY namespace_uid) AS deletions,
             ROW_NUMBER() OVER (PARTITION BY namespace_uid ORDER BY event_time DESC) AS latest
           FROM ${view} v WHERE cluster = @cluster)
         WHERE deletions = 0 AND latest = 1`,
        params: { cluster },
      }) as AsyncIterable<Record<string, unknown>>;
      try {
        for await (const r of rows) yield { last: fromResult(r), firstEventTime: new Date(String((r.first_time as { value?: unknown })?.value ?? r.first_time)).toISOString() };
      } catch (e) {
        throw missingTableError(e, qualified(viewName(opts.table))) ?? e;
      }
    },
    async reportRows(from, to) {
      const rows = await query(
        `SELECT e.* FROM ${view} e
         WHERE DATE(e.event_time) <= @to
           AND NOT EXISTS (SELECT 1 FROM ${view} d WHERE d.cluster = e.cluster AND d.namespace_uid = e.namespace_uid AND d.event = 'deleted' AND DATE(d.event_time) < @from)`,
        { from: BigQuery.date(from), to: BigQuery.date(to) },
        qualified(viewName(opts.table)),
      );
      return rows.map(fromResult);
    },
    async close() {},
  };
}
