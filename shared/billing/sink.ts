// Where billing rows go: one small interface, two sinks (SQLite, the default; BigQuery in the
// cloud), chosen by one setting, FURNISH_BILLING: `sqlite:<file>` or `bigquery:<project>.<dataset>.<table>`.
import { ConfigError, readSetting } from '../config/settings.ts';
import type { OpenNamespace, SnapshotListing } from './snapshot.ts';
import type { BillingRow, SnapshotEndMessage } from './types.ts';

/**
 * The sink's storage is not set up yet (a BigQuery table terraform has not created): the error
 * names what is missing and the fix; the delivery is redelivered until it is there.
 */
export class SinkNotReady extends Error {
  override name = 'SinkNotReady';
}

export interface FailedRow {
  row: BillingRow;
  reason: string;
  /** True when another delivery may succeed (transient, retries exhausted); false when the row is refused for good. */
  retryable: boolean;
}

export interface InsertOutcome {
  /** Rows accepted by the sink (BigQuery cannot tell a duplicate insertId: it counts them here). */
  inserted: number;
  /** Rows whose event id was already stored (SQLite only). */
  duplicates: number;
  /** Rows refused for good, or still failing after their retries. */
  failed: FailedRow[];
}

export interface BillingSink {
  readonly kind: 'sqlite' | 'bigquery';
  insert(rows: readonly BillingRow[]): Promise<InsertOutcome>;
  /**
   * Namespaces of one cluster that have rows and no deletion row, one at a time: a snapshot's
   * check holds only the deletions it finds, never every namespace of the cluster at once.
   */
  openNamespaces(cluster: string): AsyncIterable<OpenNamespace>;
  /** Keeps a complete snapshot (when it was taken, which uids it listed); one older than the latest kept changes nothing. */
  saveSnapshot(end: SnapshotEndMessage, recordedAt: Date): Promise<void>;
  /** The cluster's latest complete snapshot, when taken after `after`, and whether it listed `uid`. */
  latestSnapshot(cluster: string, uid: string, after: string): Promise<SnapshotListing | undefined>;
  /** De-duplicated rows that can bill a day of [from, to] (UTC days): up to `to`, namespaces deleted before `from` left out. */
  reportRows(from: string, to: string): Promise<BillingRow[]>;
  close(): Promise<void>;
}

export type SinkSpec = { kind: 'sqlite'; path: string } | { kind: 'bigquery'; projectId: string; dataset: string; table: string };

export const DEFAULT_SQLITE_PATH = '.furnish/billing.sqlite';

/** Parses FURNISH_BILLING (or `--sink`); `setting` names where the value came from, for the error. */
export function parseSinkSpec(spec: string | undefined, setting = 'FURNISH_BILLING'): SinkSpec {
  if (spec === undefined || spec === '') return { kind: 'sqlite', path: DEFAULT_SQLITE_PATH };
  const colon = spec.indexOf(':');
  const scheme = colon < 0 ? '' : spec.slice(0, colon);
  const rest = spec.slice(colon + 1);
  if (scheme === 'sqlite') {
    if (rest === '') throw new ConfigError(setting, `sqlite needs a file, e.g. sqlite:${DEFAULT_SQLITE_PATH}`);
    return { kind: 'sqlite', path: rest };
  }
  if (scheme === 'bigquery') {
    const parts = rest.split('.');
    if (parts.length !== 3 || parts.some((p) => p === '')) throw new ConfigError(setting, `bigquery needs <project>.<dataset>.<table>, got ${JSON.stringify(rest)}`);
    const [projectId, dataset, table] = parts as [string, string, string];
    if (!/^[A-Za-z0-9_]+$/.test(dataset) || !/^[A-Za-z0-9_]+$/.test(table)) throw new ConfigError(setting, `dataset and table may hold only letters, digits and _, got ${JSON.stringify(rest)}`);
    return { kind: 'bigquery', projectId, dataset, table };
  }
  throw new ConfigError(setting, `expected sqlite:<file> or bigquery:<project>.<dataset>.<table>, got ${JSON.stringify(spec)}`);
}

/** The de-duplicating view next to a table (Terraform creates it under this name). */
export function viewName(table: string): string {
  return `${table}_dedup`;
}

/** The table of complete snapshots next to a table (Terraform creates it under this name). */
export function snapshotsTableName(table: string): string {
  return `${table}_snapshots`;
}

export interface SinkOptions {
  /** BigQuery client options (apiEndpoint, authClient); tests and emulators. */
  bigquery?: Record<string, unknown>;
  /** FURNISH_BIGQUERY_ENDPOINT: a BigQuery-compatible endpoint (an emulator) instead of Google's. */
  env?: Record<string, string | undefined>;
}

export async function openSink(spec: SinkSpec, opts: SinkOptions = {}): Promise<BillingSink> {
  if (spec.kind === 'sqlite') return (await import('./sqlite.ts')).openSqliteSink(spec.path);
  const { createBigQuerySink, emulatorOptions } = await import('./bigquery.ts');
  const endpoint = readSetting(opts.env ?? {}, 'bigqueryEndpoint');
  return createBigQuerySink({ ...spec, clientOptions: { ...(endpoint ? emulatorOptions(endpoint) : {}), ...opts.bigquery } });
}
