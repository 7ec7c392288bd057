// A billing event delivered after a complete snapshot that lacked its namespace (a `created` in
// the half a killed relay never delivered, Pub/Sub redelivery, another ordering key than the
// snapshot's): record-billing records it together with the namespace's deletion at the
// snapshot's time, on both sinks alike. The BigQuery sink runs through the real client against
// test/support/bigquery-fake.ts, whose answers to the sink's three queries are computed here from
// the rows the sink streamed, as the SQL says.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createBigQuerySink, emulatorOptions } from '../../../shared/billing/bigquery.ts';
import { eventId, impliedDeletionId } from '../../../shared/billing/event.ts';
import { recordBilling, type RecordDeps } from '../../../shared/billing/record.ts';
import { SNAPSHOT_GRACE_MS } from '../../../shared/billing/snapshot.ts';
import { createBillingTap } from '../../../shared/billing/tap.ts';
import { namespaceDays } from '../../../shared/billing/report.ts';
import type { BillingSink } from '../../../shared/billing/sink.ts';
import { openSqliteSink } from '../../../shared/billing/sqlite.ts';
import type { BillingMessage, BillingRow, SnapshotEndMessage } from '../../../shared/billing/types.ts';
import { collectingLogger, silentLogger } from '../../../shared/log.ts';
import { memoryApi } from '../reconcile/memory-api.ts';
import { startFakeBigQuery, type FakeBigQuery, type Field, type QueryRequest } from '../../support/bigquery-fake.ts';
import { capturingBus, message, namespace } from './helpers.ts';

const NOW = new Date('2026-03-02T12:00:00.000Z');
const TAKEN_AT = '2026-03-02T11:00:00.000Z';
const terraformSchema = (file: string) => JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'terraform', file), 'utf8')) as Field[];
const ROWS = terraformSchema('billing-schema.json');
const SNAPSHOTS = terraformSchema('billing-snapshots-schema.json');
const end = (uids: string[], takenAt = TAKEN_AT): SnapshotEndMessage => ({ v: 1, type: 'snapshot-end', cluster: 'c1', takenAt, uids });

let fake: FakeBigQuery;
beforeAll(async () => {
  fake = await startFakeBigQuery(ROWS, { namespace_events_snapshots: SNAPSHOTS });
});
afterAll(async () => {
  await fake.stop();
});

const param = (q: QueryRequest, name: string) => q.queryParameters?.find((p) => p.name === name)?.parameterValue.value ?? '';
const time = (v: unknown) => Date.parse(String(v));

/** What BigQuery would answer to the sink's queries, over the rows it streamed into the fake. */
function answer(q: QueryRequest): { schema: Field[]; rows: Array<Record<string, unknown>> } {
  const stored = (table: string) => fake.stored.filter((s) => s.table === table).map((s) => s.json);
  if (q.query.includes('_snapshots')) {
    const [latest] = stored('namespace_events_snapshots')
      .filter((s) => s.cluster === param(q, 'cluster') && time(s.taken_at) > time(param(q, 'after')))
      .sort((a, b) => time(b.taken_at) - time(a.taken_at));
    return { schema: [SNAPSHOTS[1]!, { name: 'listed', type: 'BOOLEAN', mode: 'NULLABLE' }], rows: latest ? [{ taken_at: latest.taken_at, listed: (latest.uids as string[]).includes(param(q, 'uid')) }] : [] };
  }
  const rows = stored('namespace_events');
  if (q.query.includes('first_time')) {
    const open = [...new Set(rows.map((r) => r.namespace_uid))].map((uid) => rows.filter((r) => r.namespace_uid === uid && r.cluster === param(q, 'cluster'))).filter((list) => list.length > 0 && list.every((r) => r.event !== 'deleted'));
    const extra: Field[] = [{ name: 'first_time', type: 'TIMESTAMP', mode: 'NULLABLE' }];
    return { schema: [...ROWS, ...extra], rows: open.map((list) => ({ ...list.sort((a, b) => time(b.event_time) - time(a.event_time))[0], first_time: list.at(-1)!.event_time })) };
  }
  return { schema: ROWS, rows };
}

const sinks: Record<string, () => Promise<{ sink: BillingSink; done(): void }>> = {
  sqlite: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'furnish-late-'));
    return { sink: await openSqliteSink(join(dir, 'b.sqlite')), done: () => rmSync(dir, { recursive: true, force: true }) };
  },
  bigquery: async () => {
    fake.reset();
    fake.onQuery = answer;
    return { sink: createBigQuerySink({ projectId: 'proj', dataset: 'furnish', table: 'namespace_events', clientOptions: emulatorOptions(fake.url) }), done: () => {} };
  },
};

describe.each(Object.keys(sinks))('a late event after a snapshot that lacked its namespace (%s sink)', (kind) => {
  let sink: BillingSink;
  let done: () => void;
  let deps: RecordDeps;
  beforeEach(async () => {
    ({ sink, done } = await sinks[kind]!());
    deps = { sink, log: collectingLogger(), now: () => NOW, organizationBilling: async () => ({}) };
  });
  afterEach(async () => {
    await sink.close();
    done();
  });
  const all = async (): Promise<BillingRow[]> => sink.reportRows('2000-01-01', '2999-12-31');
  const deletions = async () => (await all()).filter((r) => r.event === 'deleted').map((r) => `${r.namespace}@${r.event_time}`);

  it('is recorded with its deletion at the snapshot\'s time: the days it existed are billed, nothing more; a redelivery adds nothing', async () => {
    await recordBilling(deps, message('created', 'kept', '2026-03-01T10:00:00.000Z'));
    expect(await recordBilling(deps, end(['uid-kept']))).toMatchObject({ rows: 0 });
    const late = message('created', 'gone', '2026-03-01T10:00:00.000Z', { billing: { costCenter: '300' } });
    expect(await recordBilling(deps, late)).toMatchObject({ rows: 2, inserted: 2, eventId: eventId(late) });
    expect(await deletions()).toEqual([`gone@${TAKEN_AT}`]);
    expect((await all()).find((r) => r.event === 'deleted')).toMatchObject({ event_id: impliedDeletionId('c1', 'uid-gone', TAKEN_AT), organization: 'acme', billing: { costCenter: '300' }, recorded_time: NOW.toISOString() });
    // Through the 3rd: `kept` three days, `gone` the two it lived (left open it would bill three).
    expect(namespaceDays(await all(), '2026-03-01', '2026-03-03')).toEqual([{ organization: 'acme', namespaceDays: 3 + 2, namespaces: 2 }]);

    // The same event again, and a later event of the same namespace, still late: no row more.
    const count = (await all()).length;
    expect(await recordBilling(deps, late)).toMatchObject({ rows: 2, refused: 0 });
    expect(await recordBilling(deps, message('updated', 'gone', '2026-03-01T12:00:00.000Z', { org: 'globex' }))).toMatchObject({ rows: 2 });
    expect(await deletions()).toEqual([`gone@${TAKEN_AT}`]);
    expect((await all()).length).toBe(count + 1);
  });

  it('its own deletion, should it follow (same ordering key, right behind), is stored too and the report counts the earlier', async () => {
    await recordBilling(deps, end([]));
    await recordBilling(deps, message('created', 'gone', '2026-03-01T10:00:00.000Z'));
    expect(await recordBilling(deps, message('deleted', 'gone', '2026-03-01T20:00:00.000Z'))).toMatchObject({ rows: 1, inserted: 1 });
    expect((await deletions()).sort()).toEqual(['gone@2026-03-01T20:00:00.000Z', `gone@${TAKEN_AT}`]);
    expect(namespaceDays(await all(), '2026-03-01', '2026-03-03')).toEqual([{ organization: 'acme', namespaceDays: 1, namespaces: 1 }]);
  });

  it('a late event of a namespace the snapshot listed, or one younger than the grace before it, opens it as before', async () => {
    await recordBilling(deps, end(['uid-listed']));
    expect(await recordBilling(deps, message('snapshot', 'listed', '2026-03-01T00:05:00.000Z'))).toMatchObject({ rows: 1 });
    expect(await recordBilling(deps, message('created', 'young', '2026-03-02T10:59:00.000Z'))).toMatchObject({ rows: 1 });
    expect(await deletions()).toEqual([]);
  });

  it('only the latest snapshot counts: an older snapshot-end redelivered does not replace it', async () => {
    await recordBilling(deps, end(['uid-gone']));
    await recordBilling(deps, end([], '2026-03-02T01:00:00.000Z'));
    expect(await sink.latestSnapshot('c1', 'uid-gone', '2026-03-01T10:02:00.000Z')).toEqual({ takenAt: TAKEN_AT, listed: true });
    expect(await sink.latestSnapshot('c1', 'uid-other', '2026-03-01T10:02:00.000Z')).toEqual({ takenAt: TAKEN_AT, listed: false });
    expect(await sink.latestSnapshot('c1', 'uid-gone', TAKEN_AT)).toBeUndefined();
    expect(await sink.latestSnapshot('c2', 'uid-gone', '2026-03-01T10:02:00.000Z')).toBeUndefined();
    await recordBilling(deps, message('created', 'gone', '2026-03-01T10:00:00.000Z'));
    expect(await deletions()).toEqual([]);
  });

  // Handled at the same time (two deliveries, two instances): whichever step of one falls between
  // the other's, the deletion is recorded, because each writes before it reads.
  it('a snapshot handled while the late event\'s row is being written: the event, reading after its write, finds it', async () => {
    const held = hold();
    const event = recordBilling({ ...deps, sink: { ...sink, insert: async (rows) => (await held.here(), sink.insert(rows)) } }, message('created', 'gone', '2026-03-01T10:00:00.000Z'));
    await held.reached;
    expect(await recordBilling(deps, end([]))).toMatchObject({ rows: 0 });
    held.release();
    expect(await event).toMatchObject({ rows: 2 });
    expect(await deletions()).toEqual([`gone@${TAKEN_AT}`]);
  });

  it('whether to read the snapshots is decided after the write: a snapshot taken and kept while the row was being written is read', async () => {
    let clock = NOW;
    deps.now = () => clock;
    const held = hold();
    // Within the grace when its delivery began, no longer once its row is written.
    const event = recordBilling({ ...deps, sink: { ...sink, insert: async (rows) => (await held.here(), sink.insert(rows)) } }, message('created', 'gone', new Date(NOW.getTime() - SNAPSHOT_GRACE_MS + 30_000).toISOString()));
    await held.reached;
    clock = new Date(NOW.getTime() + 60_000);
    const takenAt = new Date(NOW.getTime() + 31_000).toISOString();
    expect(await recordBilling(deps, end([], takenAt))).toMatchObject({ rows: 0 });
    held.release();
    expect(await event).toMatchObject({ rows: 2 });
    expect(await deletions()).toEqual([`gone@${takenAt}`]);
  });

  it('a late event handled while the snapshot is being kept: the snapshot\'s diff, reading after it is kept, finds its row', async () => {
    const held = hold();
    const snapshot = recordBilling({ ...deps, sink: { ...sink, saveSnapshot: async (e, at) => (await held.here(), sink.saveSnapshot(e, at)) } }, end([]));
    await held.reached;
    expect(await recordBilling(deps, message('created', 'gone', '2026-03-01T10:00:00.000Z'))).toMatchObject({ rows: 1 });
    held.release();
    expect(await snapshot).toMatchObject({ rows: 1 });
    expect(await deletions()).toEqual([`gone@${TAKEN_AT}`]);
  });

  describe('a relay restart', () => {
    const N = 300;
    const names = Array.from({ length: N }, (_, i) => `ns-${i}`);
    let clock: Date;
    const at = (ms: number) => new Date(NOW.getTime() + ms);
    const deliver = async (ms: BillingMessage[]) => {
      for (const m of ms) await recordBilling(deps, m);
    };
    /** Snapshot reads, and on BigQuery the query jobs, while `ms` are delivered. */
    const cost = async (ms: BillingMessage[]) => {
      const reads = countReads(sink);
      const jobs = kind === 'bigquery' ? fake.queries.length : 0;
      await deliver(ms);
      return { reads: reads(), jobs: kind === 'bigquery' ? fake.queries.length - jobs : 0 };
    };
    beforeEach(() => {
      clock = NOW;
      deps.now = () => clock;
    });

    it(`of ${N} namespaces, its messages delivered promptly, reads no snapshot (one per namespace without observedAt); nothing is judged deleted`, async () => {
      const c = cluster(names);
      clock = at(-86_400_000);
      await deliver(await c.relayStart(at(-86_400_000 - 2_000)));
      const restart = await c.relayStart(NOW);
      clock = at(3_000);
      const before = await cost(withoutObservedAt(restart));
      const after = await cost(restart);
      process.stdout.write(`relay restart, ${N} namespaces (${kind}): snapshot reads ${before.reads} before observedAt, ${after.reads} with it; BigQuery query jobs ${before.jobs} -> ${after.jobs}\n`);
      expect(before.reads).toBe(N);
      expect(after.reads).toBe(0);
      if (kind === 'bigquery') {
        expect(before.jobs).toBe(N + 1);
        // The one left: the snapshot-end's diff (openNamespaces), once per snapshot, not per namespace.
        expect(after.jobs).toBe(1);
      }
      expect(await deletions()).toEqual([]);
    }, 90_000); // 300 namespaces through the real BigQuery client: 3 s alone, past 30 s on a loaded 2-core machine

    /**
     * `new`, created while the relay was down, is first seen (and its created published) by the
     * restart at NOW; then deleted, the relay killed before its `deleted` left; the next relay,
     * started at `nextAt`, lists without it, and its messages reach record-billing 5 s later, before
     * that created (another ordering key). Returns the created, still to deliver, and the cluster.
     */
    async function deletedAfterRestart(nextAt: number) {
      const c = cluster(['kept', 'new']);
      const restart = await c.relayStart(NOW);
      const created = restart.find((m) => m.type === 'event' && m.event === 'created' && m.namespace === 'new')!;
      await c.api.client.call({ method: 'DELETE', path: '/api/v1/namespaces/new' });
      const next = await c.relayStart(at(nextAt));
      clock = at(nextAt + 5_000);
      await deliver(next);
      return { c, created };
    }

    it('a created it republished, delivered after a later snapshot that lacked the namespace and more than the grace after it saw it, gets its deletion at that snapshot\'s time', async () => {
      const { created } = await deletedAfterRestart(3_600_000);
      clock = at(3_600_000 + 10_000);
      expect(await cost([created])).toMatchObject({ reads: 1 });
      expect(await deletions()).toEqual([`new@${at(3_600_000).toISOString()}`]);
    });

    it('one delivered within the grace after it was seen reads nothing: a snapshot taken meanwhile that lacked it is left to the next snapshot, which closes it', async () => {
      const { c, created } = await deletedAfterRestart(30_000);
      clock = at(SNAPSHOT_GRACE_MS);
      expect(await cost([created])).toMatchObject({ reads: 0 });
      expect(await deletions()).toEqual([]);
      const third = await c.relayStart(at(86_400_000));
      clock = at(86_400_000 + 5_000);
      await deliver(third);
      expect(await deletions()).toEqual([`new@${at(86_400_000).toISOString()}`]);
    });
  });

  it('an event too recent for any snapshot to contradict it does not read the snapshots', async () => {
    await recordBilling(deps, end([]));
    const reads = countReads(sink);
    expect(await recordBilling(deps, message('created', 'fresh', '2026-03-02T11:59:00.000Z'))).toMatchObject({ rows: 1 });
    expect(reads()).toBe(0);
  });
});

/** Builds a cluster of `names` (all created a year before NOW), then runs a relay's tap on it, for its (re)start. */
function cluster(names: string[]) {
  const api = memoryApi();
  for (const n of names) api.put(namespace(n, { org: 'acme', created: '2025-03-02T12:00:00Z' }));
  return {
    api,
    /** What a relay starting at `at` publishes: a `created` per namespace (it remembers nothing), a `snapshot` each, the end. */
    async relayStart(at: Date): Promise<BillingMessage[]> {
      const published: BillingMessage[] = [];
      const tap = createBillingTap({ kube: api.client, bus: capturingBus(published), config: { cluster: 'c1', topic: 'furnish-billing', snapshotSeconds: 0, pageSize: 100 }, log: silentLogger, now: () => at });
      await tap.snapshot();
      await tap.stop();
      return published;
    },
  };
}

/** As a relay published before observedAt existed. */
const withoutObservedAt = (ms: BillingMessage[]): BillingMessage[] => ms.map((m) => (m.type === 'event' ? (({ observedAt: _, ...old }) => old)(m) : m));

/** Counts latestSnapshot calls from now on. */
function countReads(sink: BillingSink): () => number {
  let calls = 0;
  const read = sink.latestSnapshot.bind(sink);
  sink.latestSnapshot = (...args) => ((calls += 1), read(...args));
  return () => calls;
}

/** Holds a step (`here`, awaited where the step runs) until `release`; `reached` once it got there. */
function hold(): { here(): Promise<void>; reached: Promise<void>; release(): void } {
  let arrive = () => {};
  let release = () => {};
  const reached = new Promise<void>((r) => (arrive = r));
  const released = new Promise<void>((r) => (release = r));
  return { here: () => (arrive(), released), reached, release: () => release() };
}
