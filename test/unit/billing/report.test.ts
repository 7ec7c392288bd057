import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { daysBetween, formatCsv, formatTable, namespaceDays } from '../../../shared/billing/report.ts';
import type { BillingSink } from '../../../shared/billing/sink.ts';
import { openSqliteSink } from '../../../shared/billing/sqlite.ts';
import type { BillingRow } from '../../../shared/billing/types.ts';
import { collect, row } from './helpers.ts';

// a: acme from Mar 1, moved to globex on Mar 3 at noon, deleted Mar 4.
// b: acme (cost center 7), created Mar 2, still alive.
// c: globex, created and deleted before the range.
const LIFE: BillingRow[] = [
  row('created', 'a', '2026-03-01T10:00:00Z', { org: 'acme', billing: { costCenter: '1' } }),
  row('snapshot', 'a', '2026-03-02T00:05:00Z', { org: 'acme', billing: { costCenter: '1' } }),
  row('updated', 'a', '2026-03-03T12:00:00Z', { org: 'globex', rv: '50', billing: { costCenter: '2' } }),
  row('deleted', 'a', '2026-03-04T09:00:00Z', { org: 'globex' }),
  row('created', 'b', '2026-03-02T23:00:00Z', { org: 'acme', billing: { costCenter: '7' } }),
  row('created', 'c', '2026-02-01T00:00:00Z', { org: 'globex' }),
  row('deleted', 'c', '2026-02-02T00:00:00Z', { org: 'globex' }),
];

const EXPECTED = [
  { organization: 'acme', namespaceDays: 2 + 5, namespaces: 2 },
  { organization: 'globex', namespaceDays: 2, namespaces: 1 },
];

describe('namespaceDays', () => {
  it('counts every day from creation through deletion, for the organization at the end of each day', () => {
    // a: Mar 1, 2 acme; Mar 3, 4 globex. b: Mar 2..6 acme.
    expect(namespaceDays(LIFE, '2026-03-01', '2026-03-06')).toEqual(EXPECTED);
  });

  it('per cost center', () => {
    expect(namespaceDays(LIFE, '2026-03-01', '2026-03-06', 'cost-center')).toEqual([
      { organization: 'acme', costCenter: '1', namespaceDays: 2, namespaces: 1 },
      { organization: 'acme', costCenter: '7', namespaceDays: 5, namespaces: 1 },
      { organization: 'globex', costCenter: '2', namespaceDays: 2, namespaces: 1 },
    ]);
  });

  it('clips to the range', () => {
    expect(namespaceDays(LIFE, '2026-03-04', '2026-03-04')).toEqual([
      { organization: 'acme', namespaceDays: 1, namespaces: 1 },
      { organization: 'globex', namespaceDays: 1, namespaces: 1 },
    ]);
    expect(namespaceDays(LIFE, '2026-02-01', '2026-02-28')).toEqual([{ organization: 'globex', namespaceDays: 2, namespaces: 1 }]);
  });

  it('the same figures from duplicated, reordered rows and a deletion recorded twice (watch and snapshot)', () => {
    const noisy = [...LIFE].reverse().concat(LIFE.map((r) => ({ ...r, recorded_time: '2026-03-09T00:00:00.000Z' })));
    expect(namespaceDays(noisy, '2026-03-01', '2026-03-06')).toEqual(EXPECTED);
  });

  it('a namespace seen only as deleted bills nothing', () => {
    expect(namespaceDays([row('deleted', 'z', '2026-03-02T00:00:00Z')], '2026-03-01', '2026-03-06')).toEqual([]);
  });

  it('daysBetween includes both ends and crosses months', () => {
    expect(daysBetween('2026-02-27', '2026-03-02')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
  });
});

describe('report formats', () => {
  it('CSV, quoted where needed', () => {
    expect(formatCsv([{ organization: 'a,b "x"', costCenter: '1', namespaceDays: 3, namespaces: 1 }], 'cost-center')).toBe('organization,cost_center,namespaces,namespace_days\n"a,b ""x""",1,1,3\n');
  });

  it('a table with a total', () => {
    expect(formatTable(EXPECTED, 'organization')).toBe('ORGANIZATION  NAMESPACES  NAMESPACE_DAYS\nacme                   2               7\nglobex                 1               2\ntotal namespace-days: 9\n');
  });
});

setFlagsFromString('--expose-gc');

describe('SQLite sink', () => {
  let dir: string;
  let path: string;
  let sink: BillingSink;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'furnish-billing-'));
    path = join(dir, 'sub', 'billing.sqlite');
    sink = await openSqliteSink(path);
  });
  afterEach(async () => {
    await sink.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores each event id once: duplicates are ignored and counted, across a reopen (restart)', async () => {
    expect(await sink.insert(LIFE)).toEqual({ inserted: LIFE.length, duplicates: 0, failed: [] });
    expect(await sink.insert([LIFE[0]!, { ...LIFE[1]!, recorded_time: '2026-03-09T00:00:00.000Z' }])).toEqual({ inserted: 0, duplicates: 2, failed: [] });
    await sink.close();
    sink = await openSqliteSink(path);
    expect(await sink.insert(LIFE.slice(0, 3))).toMatchObject({ inserted: 0, duplicates: 3 });
    const stored = await sink.reportRows('2026-02-01', '2026-03-06');
    expect(stored.map((r) => r.event_id).sort()).toEqual(LIFE.map((r) => r.event_id).sort());
    expect(stored.find((r) => r.event === 'updated')).toEqual(LIFE[2]);
  });

  it('reportRows leaves out rows after the range and namespaces deleted before it', async () => {
    await sink.insert(LIFE);
    const rows = await sink.reportRows('2026-03-03', '2026-03-03');
    expect(rows.map((r) => `${r.namespace}:${r.event}`).sort()).toEqual(['a:created', 'a:snapshot', 'a:updated', 'b:created']);
    expect(namespaceDays(rows, '2026-03-03', '2026-03-03')).toEqual(namespaceDays(LIFE, '2026-03-03', '2026-03-03'));
  });

  it('openNamespaces: the latest row of each namespace of the cluster without a deletion', async () => {
    await sink.insert([...LIFE.slice(0, 3), LIFE[4]!, row('created', 'd', '2026-03-01T00:00:00Z', { cluster: 'c2' })]);
    const open = await collect(sink.openNamespaces('c1'));
    expect(open.map((o) => [o.last.namespace, o.last.event, o.firstEventTime]).sort()).toEqual([
      ['a', 'updated', '2026-03-01T10:00:00.000Z'],
      ['b', 'created', '2026-03-02T23:00:00.000Z'],
    ]);
    await sink.insert([LIFE[3]!]);
    expect((await collect(sink.openNamespaces('c1'))).map((o) => o.last.namespace)).toEqual(['b']);
  });

  it("openNamespaces streams: reading the cluster's namespaces holds one at a time, not all of them (record-billing's memory at 10,000)", async () => {
    const N = 10_000;
    await sink.insert(Array.from({ length: N }, (_, i) => row('created', `ns-${String(i).padStart(5, '0')}`, '2026-03-01T10:00:00Z', { org: 'acme', billing: { costCenter: String(i) } })));
    const gc = runInNewContext('gc') as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    const it = sink.openNamespaces('c1')[Symbol.asyncIterator]();
    const first = await it.next();
    gc();
    // All N held at once (rows, objects, a Map of them) is 10+ MB; one at a time, a few hundred bytes.
    const held = process.memoryUsage().heapUsed - before;
    let seen = first.done ? 0 : 1;
    while (!(await it.next()).done) seen += 1;
    expect({ seen, heldUnder2Mb: held < 2 * 1024 * 1024 }).toEqual({ seen: N, heldUnder2Mb: true });
  });

  it('refuses a row with an unknown event (CHECK constraint), inserting nothing of the batch', async () => {
    await expect(sink.insert([LIFE[0]!, { ...LIFE[1]!, event: 'renamed' as 'created' }])).rejects.toThrow(/CHECK constraint/);
    expect(await sink.reportRows('2026-03-01', '2026-03-06')).toEqual([]);
  });
});
