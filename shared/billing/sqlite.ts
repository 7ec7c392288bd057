// The embedded sink (node:sqlite, built into Node 22.5+): UNIQUE event id, insert-or-ignore
// (ON CONFLICT DO NOTHING), so a duplicate delivery never adds a row. WAL lets `furnish billing report` read while
// record-billing writes. Inserts are group-committed (see commitGroup).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { BillingSink, InsertOutcome } from './sink.ts';
import { isoTime } from './event.ts';
import type { OpenNamespace, SnapshotListing } from './snapshot.ts';
import type { BillingEventType, BillingRow, SnapshotEndMessage } from './types.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS billing_events (
  event_id TEXT NOT NULL UNIQUE,
  event TEXT NOT NULL CHECK (event IN ('created', 'updated', 'deleted', 'snapshot')),
  event_time TEXT NOT NULL,
  recorded_time TEXT NOT NULL,
  cluster TEXT NOT NULL,
  namespace TEXT NOT NULL,
  namespace_uid TEXT NOT NULL,
  organization TEXT NOT NULL,
  creator TEXT NOT NULL,
  billing TEXT NOT NULL,
  resource_version TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS billing_events_namespace ON billing_events (cluster, namespace_uid, event_time);
CREATE INDEX IF NOT EXISTS billing_events_time ON billing_events (event_time);
-- The latest complete snapshot of each cluster: when it was taken, and the uids it listed.
CREATE TABLE IF NOT EXISTS billing_snapshots (
  cluster TEXT PRIMARY KEY,
  taken_at TEXT NOT NULL,
  recorded_time TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS billing_snapshot_uids (
  cluster TEXT NOT NULL,
  uid TEXT NOT NULL,
  PRIMARY KEY (cluster, uid)
) WITHOUT ROWID;
`;

const COLUMNS = ['event_id', 'event', 'event_time', 'recorded_time', 'cluster', 'namespace', 'namespace_uid', 'organization', 'creator', 'billing', 'resource_version'] as const;

type StoredRow = Record<(typeof COLUMNS)[number], string>;

function fromStored(r: StoredRow): BillingRow {
  return { ...r, event: r.event as BillingEventType, billing: JSON.parse(r.billing) as Record<string, string> };
}

/**
 * node:sqlite, without its one-line ExperimentalWarning on stderr (Node 24 still prints it): the
 * CLI's output and the functions' logs stay clean. Any other warning passes.
 */
export async function loadSqlite(): Promise<typeof import('node:sqlite')> {
  const emit = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (String(warning).includes('SQLite is an experimental feature')) return;
    (emit as (...a: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return await import('node:sqlite');
  } finally {
    process.emitWarning = emit;
  }
}

/** One caller's rows, in a transaction or savepoint the caller opened; throws what SQLite refuses. */
function insertRows(insert: StatementSync, rows: readonly BillingRow[]): InsertOutcome {
  const outcome: InsertOutcome = { inserted: 0, duplicates: 0, failed: [] };
  for (const row of rows) {
    const changes = Number(insert.run({ ...row, billing: JSON.stringify(row.billing) }).changes);
    if (changes > 0) outcome.inserted += 1;
    else outcome.duplicates += 1;
  }
  return outcome;
}

interface PendingInsert {
  rows: readonly BillingRow[];
  resolve(outcome: InsertOutcome): void;
  reject(error: unknown): void;
}

/**
 * One caller's rows inside the group's transaction, under a savepoint: a row a constraint refuses
 * (CHECK, NOT NULL) rolls back this caller's rows alone, as its own transaction did before. An error
 * that ended the whole transaction (I/O, disk full) is rethrown: it is the group's.
 */
function insertAlone(db: DatabaseSync, insert: StatementSync, rows: readonly BillingRow[]): InsertOutcome | { error: unknown } {
  db.exec('SAVEPOINT caller');
  try {
    const outcome = insertRows(insert, rows);
    db.exec('RELEASE caller');
    return outcome;
  } catch (error) {
    if (!db.isTransaction) throw error;
    db.exec('ROLLBACK TO caller; RELEASE caller');
    return { error };
  }
}

/**
 * `fn` in one IMMEDIATE transaction (a busy lock fails at BEGIN, before any work), rolled back when
 * it or the COMMIT throws; a ROLLBACK that throws too does not hide the first error.
 */
function inTransaction<T>(db: DatabaseSync, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = fn();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    try {
      if (db.isTransaction) db.exec('ROLLBACK');
    } catch {
      // The first error is the one to report.
    }
    throw error;
  }
}

/**
 * Group commit: every insert queued since the last flush, in arrival order, in one transaction,
 * so one fsync (synchronous=FULL) covers them all instead of one each. Callers settle only after
 * the COMMIT: a row is on disk before its push is acknowledged. IMMEDIATE: a busy lock fails the
 * group at BEGIN rather than whichever caller came first.
 */
function commitGroup(db: DatabaseSync, insert: StatementSync, group: readonly PendingInsert[]): void {
  let results: Array<InsertOutcome | { error: unknown }>;
  try {
    results = inTransaction(db, () => group.map((p) => insertAlone(db, insert, p.rows)));
  } catch (error) {
    for (const p of group) p.reject(error);
    return;
  }
  group.forEach((p, i) => {
    const result = results[i]!;
    if ('error' in result) p.reject(result.error);
    else p.resolve(result);
  });
}

/**
 * Queues inserts and commits them together on the next turn of the event loop (setImmediate, after
 * the pushes that arrived in this one): DatabaseSync commits synchronously, so what coalesces is
 * what arrived while the loop was busy. `drain` waits for a queued flush (before close).
 */
function groupCommitter(db: DatabaseSync, insert: StatementSync) {
  let queue: PendingInsert[] = [];
  let flushed: Promise<void> | undefined;
  const flush = (): void => {
    const group = queue;
    queue = [];
    flushed = undefined;
    commitGroup(db, insert, group);
  };
  return {
    insert: (rows: readonly BillingRow[]) =>
      new Promise<InsertOutcome>((resolve, reject) => {
        queue.push({ rows, resolve, reject });
        flushed ??= new Promise((done) =>
          setImmediate(() => {
            try {
              flush();
            } finally {
              done();
            }
          }),
        );
      }),
    drain: async () => {
      await flushed;
    },
  };
}

/**
 * Replaces the cluster's kept snapshot by `end` unless the kept one is as recent (a redelivered or
 * older snapshot-end). One synchronous transaction: no group commit is open meanwhile (those run
 * whole inside one turn of the event loop).
 */
function keepLatestSnapshot(db: DatabaseSync, end: SnapshotEndMessage, recordedAt: Date): void {
  const takenAt = isoTime(end.takenAt);
  inTransaction(db, () => {
    const kept = db.prepare('SELECT taken_at FROM billing_snapshots WHERE cluster = ?').get(end.cluster) as { taken_at: string } | undefined;
    if (kept && kept.taken_at >= takenAt) return;
    db.prepare('INSERT INTO billing_snapshots (cluster, taken_at, recorded_time) VALUES (?, ?, ?) ON CONFLICT (cluster) DO UPDATE SET taken_at = excluded.taken_at, recorded_time = excluded.recorded_time').run(end.cluster, takenAt, isoTime(recordedAt));
    db.prepare('DELETE FROM billing_snapshot_uids WHERE cluster = ?').run(end.cluster);
    const listed = db.prepare('INSERT OR IGNORE INTO billing_snapshot_uids (cluster, uid) VALUES (?, ?)');
    for (const uid of end.uids) listed.run(end.cluster, uid);
  });
}

export async function openSqliteSink(path: string): Promise<BillingSink> {
  const { DatabaseSync } = await loadSqlite();
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000;');
  db.exec(SCHEMA);
  // Not INSERT OR IGNORE: that would also swallow a CHECK or NOT NULL violation as if it were a duplicate.
  const insert = db.prepare(`INSERT INTO billing_events (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => `:${c}`).join(', ')}) ON CONFLICT (event_id) DO NOTHING`);
  const committer = groupCommitter(db, insert);
  const open = db.prepare(`
    SELECT e.*, f.first_time FROM billing_events e
    JOIN (SELECT namespace_uid, MIN(event_time) AS first_time, MAX(event_time) AS last_time FROM billing_events
          WHERE cluster = :cluster GROUP BY namespace_uid HAVING SUM(event = 'deleted') = 0) f
      ON e.namespace_uid = f.namespace_uid AND e.event_time = f.last_time
    WHERE e.cluster = :cluster ORDER BY e.namespace_uid`);
  const report = db.prepare(`
    SELECT * FROM billing_events e WHERE event_time < :end
      AND NOT EXISTS (SELECT 1 FROM billing_events d WHERE d.cluster = e.cluster AND d.namespace_uid = e.namespace_uid AND d.event = 'deleted' AND d.event_time < :start)`);
  const latest = db.prepare(`
    SELECT s.taken_at, EXISTS (SELECT 1 FROM billing_snapshot_uids u WHERE u.cluster = s.cluster AND u.uid = :uid) AS listed
    FROM billing_snapshots s WHERE s.cluster = :cluster AND s.taken_at > :after`);
  return {
    kind: 'sqlite',
    insert: committer.insert,
    async saveSnapshot(end, recordedAt) {
      keepLatestSnapshot(db, end, recordedAt);
    },
    async latestSnapshot(cluster, uid, after): Promise<SnapshotListing | undefined> {
      const r = latest.get({ cluster, uid, after: isoTime(after) }) as { taken_at: string; listed: number } | undefined;
      return r && { takenAt: r.taken_at, listed: r.listed === 1 };
    },
    async *openNamespaces(cluster): AsyncGenerator<OpenNamespace> {
      // Row by row (iterate, not all): 10,000 namespaces read at once were a burst of ~30 MB of
      // heap that stayed in RSS. Same-time rows of one namespace, adjacent (ordered by uid): any
      // carries its state; keep one.
      let previous: string | undefined;
      for (const r of open.iterate({ cluster }) as Iterable<StoredRow & { first_time: string }>) {
        if (r.namespace_uid === previous) continue;
        previous = r.namespace_uid;
        const { first_time: firstEventTime, ...stored } = r;
        yield { last: fromStored(stored), firstEventTime };
      }
    },
    async reportRows(from, to) {
      const end = new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString();
      return (report.all({ start: `${from}T00:00:00.000Z`, end }) as StoredRow[]).map(fromStored);
    },
    async close() {
      await committer.drain();
      db.close();
    },
  };
}
