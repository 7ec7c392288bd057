// Group commit of the SQLite sink: concurrent inserts share one transaction (one fsync), yet each
// caller gets its own outcome, only after the COMMIT that holds its rows, and a refused row fails
// its caller alone. COMMITs are counted on node:sqlite's own DatabaseSync.exec (the sink's only way
// to commit), so a sink that commits per caller is seen doing so.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { handleBillingEnvelope } from '../../../shared/billing/function.ts';
import type { BillingSink, InsertOutcome } from '../../../shared/billing/sink.ts';
import { loadSqlite, openSqliteSink } from '../../../shared/billing/sqlite.ts';
import type { BillingRow } from '../../../shared/billing/types.ts';
import { collectingLogger } from '../../../shared/log.ts';
import { message, row } from './helpers.ts';

const { DatabaseSync } = await loadSqlite();
/** The real exec, taken before any spy replaces it. */
const realExec = DatabaseSync.prototype.exec;

/** Rows of caller `c`: `n` namespaces of its own, created the same minute. */
function callerRows(c: number, n = 2): BillingRow[] {
  return Array.from({ length: n }, (_, i) => row('created', `ns-${c}-${i}`, `2026-03-01T10:${String(c).padStart(2, '0')}:00Z`));
}

/** A row the CHECK constraint refuses (an event SQLite's table does not know). */
function refused(r: BillingRow): BillingRow {
  return { ...r, event: 'renamed' as 'created' };
}

describe('SQLite sink: group commit', () => {
  let dir: string;
  let path: string;
  let sink: BillingSink;
  let commits: () => number;
  let exec: jest.Spied<InstanceType<typeof DatabaseSync>['exec']>;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'furnish-billing-group-'));
    path = join(dir, 'billing.sqlite');
    sink = await openSqliteSink(path);
    exec = jest.spyOn(DatabaseSync.prototype, 'exec');
    commits = () => exec.mock.calls.filter(([sql]) => /^\s*COMMIT\b/i.test(sql)).length;
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await sink.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Event ids in the file, in insertion order, read through a connection of its own. */
  function storedIds(): string[] {
    const other = new DatabaseSync(path, { readOnly: true });
    try {
      return (other.prepare('SELECT event_id FROM billing_events ORDER BY rowid').all() as Array<{ event_id: string }>).map((r) => r.event_id);
    } finally {
      other.close();
    }
  }

  it('inserts that arrive together share one COMMIT, each caller told its own inserted and duplicates, rows in call order', async () => {
    const rows = Array.from({ length: 16 }, (_, c) => callerRows(c));
    // Caller 16 repeats caller 0's first row (a redelivery in the same group): a duplicate, for it alone.
    const outcomes = await Promise.all([...rows, [rows[0]![0]!, ...callerRows(16, 1)]].map((r) => sink.insert(r)));
    expect({ commits: commits(), outcomes }).toEqual({
      commits: 1,
      outcomes: [...rows.map(() => ({ inserted: 2, duplicates: 0, failed: [] })), { inserted: 1, duplicates: 1, failed: [] }],
    });
    expect(storedIds()).toEqual([...rows.flat(), ...callerRows(16, 1)].map((r) => r.event_id));
  });

  it('a refused row fails only its caller (none of its rows stored) and nothing of the others is lost', async () => {
    const good = Array.from({ length: 8 }, (_, c) => callerRows(c));
    const bad = [...callerRows(8), refused(callerRows(9, 1)[0]!)];
    const settled = await Promise.allSettled([...good.slice(0, 4), bad, ...good.slice(4)].map((r) => sink.insert(r)));
    expect(settled[4]).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: expect.stringMatching(/CHECK constraint/) }) });
    expect({ commits: commits(), others: settled.filter((_, i) => i !== 4) }).toEqual({
      commits: 1,
      others: good.map(() => ({ status: 'fulfilled', value: { inserted: 2, duplicates: 0, failed: [] } })),
    });
    expect(storedIds()).toEqual(good.flat().map((r) => r.event_id));
  });

  it("each caller's rows are readable from a second connection when its promise resolves", async () => {
    const rows = Array.from({ length: 8 }, (_, c) => callerRows(c, 3));
    const seenAtResolve = await Promise.all(
      rows.map(async (r) => {
        await sink.insert(r);
        const stored = new Set(storedIds());
        return r.every((x) => stored.has(x.event_id));
      }),
    );
    expect({ commits: commits(), seenAtResolve }).toEqual({ commits: 1, seenAtResolve: rows.map(() => true) });
  });

  it('pushes record-billing handles together (a burst) share one COMMIT, each acknowledged with its own outcome', async () => {
    const deps = { sink, log: collectingLogger(), now: () => new Date('2026-03-02T12:00:00Z'), organizationBilling: async () => ({}) };
    const push = (ns: string) => ({ message: { data: Buffer.from(JSON.stringify(message('created', ns, '2026-03-01T10:00:00.000Z'))).toString('base64'), messageId: ns } });
    // 'ns-0' twice: Pub/Sub redelivered it before the first delivery was acknowledged.
    const answers = await Promise.all(['ns-0', 'ns-1', 'ns-2', 'ns-0'].map((ns) => handleBillingEnvelope(deps, push(ns))));
    expect({ commits: commits(), answers: answers.map((a) => [a.status, a.body.inserted, a.body.duplicates]) }).toEqual({
      commits: 1,
      answers: [[200, 1, 0], [200, 1, 0], [200, 1, 0], [200, 0, 1]],
    });
  });

  it('inserts awaited one after another still commit each on its own (a lone push waits for no one)', async () => {
    const outcomes: InsertOutcome[] = [];
    for (let c = 0; c < 3; c++) outcomes.push(await sink.insert(callerRows(c)));
    expect({ commits: commits(), outcomes }).toEqual({ commits: 3, outcomes: outcomes.map(() => ({ inserted: 2, duplicates: 0, failed: [] })) });
  });

  it("a COMMIT that fails is every caller's failure: all are rejected, nothing is stored", async () => {
    exec.mockImplementation(function (this: InstanceType<typeof DatabaseSync>, sql: string) {
      if (sql === 'COMMIT') throw new Error('disk I/O error');
      return realExec.call(this, sql);
    });
    const settled = await Promise.allSettled([0, 1, 2].map((c) => sink.insert(callerRows(c))));
    expect(settled.map((s) => (s.status === 'rejected' ? (s.reason as Error).message : s.status))).toEqual(['disk I/O error', 'disk I/O error', 'disk I/O error']);
    exec.mockRestore();
    expect(storedIds()).toEqual([]);
    expect(await sink.insert(callerRows(3))).toEqual({ inserted: 2, duplicates: 0, failed: [] });
  });

  it('close() commits what is still queued', async () => {
    const pending = sink.insert(callerRows(0));
    await sink.close();
    expect(await pending).toEqual({ inserted: 2, duplicates: 0, failed: [] });
    expect(storedIds()).toEqual(callerRows(0).map((r) => r.event_id));
    sink = await openSqliteSink(path);
  });
});
