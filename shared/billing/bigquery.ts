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
import { BigQuery, type BigQueryOptions } from '@google-cloud/bigquery';
import { OAuth2Client } from 'google-auth-library';
import type { BillingSink, FailedRow, InsertOutcome } from './sink.ts';
import { viewName } from './sink.ts';
import type { OpenNamespace } from './snapshot.ts';
import type { BillingEventType, BillingRow } from './types.ts';

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

function describe(f: PartialFailure): string {
  return f.errors.map((x) => `${x.reason ?? 'unknown'}: ${x.message ?? ''}`).join('; ');
}

/** BigQuery answers TIMESTAMP as BigQueryTimestamp ({ value }), JSON as a string. */
function fromResult(r: Record<string, unknown>): BillingRow {
  const text = (v: unknown): string => (v && typeof v === 'object' && 'value' in v ? String((v as { value: unknown }).value) : v == null ? '' : String(v));
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
  const view = `\`${opts.projectId}.${opts.dataset}.${viewName(opts.table)}\``;
  const attempts = opts.attempts ?? 4;
  const backoffMs = opts.backoffMs ?? 500;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));

  async function query(sql: string, params: Record<string, unknown>): Promise<Array<Record<string, unknown>>> {
    const [rows] = await client.query({ query: sql, params });
    return rows as Array<Record<string, unknown>>;
  }

  return {
    kind: 'bigquery',
    async insert(rows) {
      const outcome: InsertOutcome = { inserted: 0, duplicates: 0, failed: [] };
      const byId = new Map(rows.map((r) => [r.event_id, r]));
      let pending = rows.map(toRaw);
      for (let attempt = 1; pending.length > 0; attempt += 1) {
        let failures: PartialFailure[] = [];
        try {
          await table.insert(pending, { raw: true, skipInvalidRows: true, partialRetries: 0 });
        } catch (e) {
          const partial = partialFailures(e);
          // The whole request failed (network, 5xx after the client's own retries): the caller retries it.
          if (!partial) throw e;
          failures = partial;
        }
        outcome.inserted += pending.length - failures.length;
        const retry = failures.filter(isRetryable);
        const final: FailedRow[] = failures.filter((f) => !isRetryable(f)).map((f) => ({ row: byId.get(f.row.insertId)!, reason: describe(f), retryable: false }));
        outcome.failed.push(...final);
        if (retry.length > 0 && attempt >= attempts) {
          outcome.failed.push(...retry.map((f) => ({ row: byId.get(f.row.insertId)!, reason: `${describe(f)} (after ${attempt} attempts)`, retryable: true })));
          break;
        }
        pending = retry.map((f) => f.row);
        if (pending.length > 0) await sleep(backoffMs * 2 ** (attempt - 1));
      }
      return outcome;
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
      for await (const r of rows) yield { last: fromResult(r), firstEventTime: new Date(String((r.first_time as { value?: unknown })?.value ?? r.first_time)).toISOString() };
    },
    async reportRows(from, to) {
      const rows = await query(
        `SELECT e.* FROM ${view} e
         WHERE DATE(e.event_time) <= @to
           AND NOT EXISTS (SELECT 1 FROM ${view} d WHERE d.cluster = e.cluster AND d.namespace_uid = e.namespace_uid AND d.event = 'deleted' AND DATE(d.event_time) < @from)`,
        { from: BigQuery.date(from), to: BigQuery.date(to) },
      );
      return rows.map(fromResult);
    },
    async close() {},
  };
}
