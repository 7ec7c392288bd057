// The BigQuery sink through the real @google-cloud/bigquery client, pointed by its apiEndpoint
// option at a local server speaking tabledata.insertAll and jobs.query (test/support/bigquery-fake.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createBigQuerySink, emulatorOptions, snapshotRaw } from '../../../shared/billing/bigquery.ts';
import { handleBillingEnvelope } from '../../../shared/billing/function.ts';
import type { RecordDeps } from '../../../shared/billing/record.ts';
import { namespaceDays } from '../../../shared/billing/report.ts';
import type { BillingSink } from '../../../shared/billing/sink.ts';
import type { BillingRow } from '../../../shared/billing/types.ts';
import { collectingLogger } from '../../../shared/log.ts';
import { startFakeBigQuery, type FakeBigQuery, type Field } from '../../support/bigquery-fake.ts';
import { collect, row } from './helpers.ts';

const schema = (file: string) => JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'terraform', file), 'utf8')) as Field[];
const SCHEMA = schema('billing-schema.json');
const SNAPSHOTS = schema('billing-snapshots-schema.json');
const ROWS: BillingRow[] = [
  row('created', 'a', '2026-03-01T10:00:00Z', { billing: { costCenter: '1' } }),
  row('created', 'b', '2026-03-02T10:00:00Z'),
  row('updated', 'a', '2026-03-03T10:00:00Z', { org: 'globex', rv: '9' }),
];

let fake: FakeBigQuery;
let sink: BillingSink;
const slept: number[] = [];

beforeAll(async () => {
  fake = await startFakeBigQuery(SCHEMA, { namespace_events_snapshots: SNAPSHOTS });
});
afterAll(async () => {
  await fake.stop();
});
beforeEach(() => {
  fake.reset();
  slept.length = 0;
  sink = createBigQuerySink({ projectId: 'proj', dataset: 'furnish', table: 'namespace_events', backoffMs: 10, sleep: async (ms) => void slept.push(ms), clientOptions: { ...emulatorOptions(fake.url), retryOptions: { maxRetries: 1, totalTimeout: 5, maxRetryDelay: 0.01 } } });
});

describe('BigQuery sink: streaming insert', () => {
  it('the terraform schema has exactly the row\'s columns', () => {
    expect(SCHEMA.map((f) => f.name).sort()).toEqual(Object.keys(ROWS[0]!).sort());
  });

  it('sends one insertAll with the event id as insertId, skipInvalidRows, JSON as a string', async () => {
    expect(await sink.insert(ROWS)).toEqual({ inserted: 3, duplicates: 0, failed: [] });
    expect(fake.requests).toHaveLength(1);
    const req = fake.requests[0]!;
    expect(req.path).toBe('/bigquery/v2/projects/proj/datasets/furnish/tables/namespace_events/insertAll');
    expect(req.authorization).toBe('Bearer emulator');
    expect(req.body.skipInvalidRows).toBe(true);
    expect(req.body.rows.map((r) => r.insertId)).toEqual(ROWS.map((r) => r.event_id));
    expect(req.body.rows[0]!.json).toEqual({ ...ROWS[0], billing: '{"costCenter":"1"}' });
    expect(fake.stored).toHaveLength(3);
  });

  it('retries only the rows that failed transiently, alone, with backoff', async () => {
    fake.failTransiently.set(ROWS[1]!.event_id, { reason: 'backendError', times: 2 });
    expect(await sink.insert(ROWS)).toEqual({ inserted: 3, duplicates: 0, failed: [] });
    expect(fake.requests.map((r) => r.body.rows.map((x) => x.insertId))).toEqual([ROWS.map((r) => r.event_id), [ROWS[1]!.event_id], [ROWS[1]!.event_id]]);
    expect(slept).toEqual([10, 20]);
    expect(fake.stored.map((r) => r.insertId).sort()).toEqual(ROWS.map((r) => r.event_id).sort());
  });

  it('an invalid row is refused for good, never retried, and the valid rows of its batch are stored', async () => {
    const bad = { ...ROWS[0]!, event_id: 'bad', event_time: 'not a time' };
    const outcome = await sink.insert([bad, ROWS[1]!, ROWS[2]!]);
    expect(outcome.inserted).toBe(2);
    expect(outcome.failed).toEqual([{ row: bad, reason: "invalid: Could not parse 'not a time' as a timestamp.", retryable: false }]);
    expect(fake.requests).toHaveLength(1);
    expect(fake.stored.map((r) => r.insertId)).toEqual([ROWS[1]!.event_id, ROWS[2]!.event_id]);
  });

  it('a row still failing after its attempts is reported retryable (the delivery is then redelivered)', async () => {
    fake.failTransiently.set(ROWS[0]!.event_id, { reason: 'timeout', times: 99 });
    const outcome = await sink.insert(ROWS);
    expect(outcome.inserted).toBe(2);
    expect(outcome.failed).toEqual([{ row: ROWS[0], reason: 'timeout: injected transient failure (after 4 attempts)', retryable: true }]);
    expect(fake.requests).toHaveLength(4);
  });

  it('a whole request failing (HTTP 500 after the client\'s own retries) throws, for the caller to retry', async () => {
    fake.failRequests = { status: 500, times: 10 };
    await expect(sink.insert(ROWS)).rejects.toThrow(/injected/);
    expect(fake.stored).toEqual([]);
  });
});

describe('BigQuery sink: reads through the de-duplicating view', () => {
  const serve = (rows: Array<Record<string, unknown>>, extra: Field[] = []) => {
    fake.onQuery = () => ({ schema: [...SCHEMA, ...extra], rows });
  };
  const asJson = (r: BillingRow) => ({ ...r, billing: JSON.stringify(r.billing) });

  it('reportRows queries the view with DATE parameters and returns rows the report can count', async () => {
    serve(ROWS.map(asJson));
    const rows = await sink.reportRows('2026-03-01', '2026-03-05');
    expect(rows).toEqual(ROWS);
    const q = fake.queries[0]!;
    expect(q.query).toContain('`proj.furnish.namespace_events_dedup`');
    expect(q.useLegacySql).toBe(false);
    expect(q.queryParameters).toEqual(expect.arrayContaining([{ name: 'from', parameterType: { type: 'DATE' }, parameterValue: { value: '2026-03-01' } }, { name: 'to', parameterType: { type: 'DATE' }, parameterValue: { value: '2026-03-05' } }]));
    expect(namespaceDays(rows, '2026-03-01', '2026-03-05')).toEqual([
      { organization: 'acme', namespaceDays: 2 + 4, namespaces: 2 },
      { organization: 'globex', namespaceDays: 3, namespaces: 1 },
    ]);
  });

  it('openNamespaces asks for the cluster\'s undeleted namespaces and reads their first time', async () => {
    serve([{ ...asJson(ROWS[2]!), first_time: '2026-03-01T10:00:00.000Z', deletions: '0', latest: '1' }], [{ name: 'first_time', type: 'TIMESTAMP', mode: 'NULLABLE' }, { name: 'deletions', type: 'INTEGER', mode: 'NULLABLE' }, { name: 'latest', type: 'INTEGER', mode: 'NULLABLE' }]);
    expect(await collect(sink.openNamespaces('c1'))).toEqual([{ last: ROWS[2], firstEventTime: '2026-03-01T10:00:00.000Z' }]);
    expect(fake.queries[0]!.queryParameters).toEqual([{ name: 'cluster', parameterType: { type: 'STRING' }, parameterValue: { value: 'c1' } }]);
  });

  it('duplicates that slipped past insertId (best-effort) are counted once by the report', async () => {
    fake.forgetInsertIds = true;
    await sink.insert(ROWS);
    await sink.insert(ROWS);
    expect(fake.stored).toHaveLength(6);
    serve(fake.stored.map((r) => r.json));
    expect(namespaceDays(await sink.reportRows('2026-03-01', '2026-03-05'), '2026-03-01', '2026-03-05')).toEqual([
      { organization: 'acme', namespaceDays: 6, namespaces: 2 },
      { organization: 'globex', namespaceDays: 3, namespaces: 1 },
    ]);
  });
});

describe('BigQuery sink: complete snapshots', () => {
  const end = { v: 1 as const, type: 'snapshot-end' as const, cluster: 'c1', takenAt: '2026-03-02T11:00:00Z', uids: ['uid-a', 'uid-b'] };

  it('saveSnapshot streams one row into <table>_snapshots (the terraform schema), its insertId the cluster and time', async () => {
    const recordedAt = new Date('2026-03-02T12:00:00Z');
    await sink.saveSnapshot(end, recordedAt);
    await sink.saveSnapshot({ ...end, takenAt: '2026-03-02T11:00:00.000Z' }, recordedAt);
    expect(SNAPSHOTS.map((f) => f.name).sort()).toEqual(Object.keys(snapshotRaw(end, recordedAt).json).sort());
    expect(fake.requests.map((r) => r.path)).toEqual(Array(2).fill('/bigquery/v2/projects/proj/datasets/furnish/tables/namespace_events_snapshots/insertAll'));
    expect(fake.stored).toEqual([{ table: 'namespace_events_snapshots', insertId: snapshotRaw(end, recordedAt).insertId, json: { cluster: 'c1', taken_at: '2026-03-02T11:00:00.000Z', recorded_time: '2026-03-02T12:00:00.000Z', uids: ['uid-a', 'uid-b'] } }]);
  });

  it('a snapshot refused for good is an error; one still failing after its attempts is transient (redelivered)', async () => {
    fake.failTransiently.set(snapshotRaw(end, new Date(0)).insertId, { reason: 'backendError', times: 99 });
    await expect(sink.saveSnapshot(end, new Date(0))).rejects.toMatchObject({ name: 'TransientError' });
    await expect(sink.saveSnapshot({ ...end, uids: [1 as unknown as string] }, new Date(0))).rejects.toThrow(/snapshot refused by namespace_events_snapshots: invalid/);
  });

  it('a table terraform has not created yet: the error names it and the fix (terraform apply), for snapshots, rows and reads alike', async () => {
    fake.missingTables.add('namespace_events_snapshots');
    const fix = (table: string) => new RegExp(`^BigQuery table proj\\.furnish\\.${table} not found \\(.*Not found: Table proj:furnish\\.${table}.*\\): run terraform apply \\(terraform/billing\\.tf creates it\\) before deploying record-billing`);
    await expect(sink.saveSnapshot(end, new Date(0))).rejects.toThrow(fix('namespace_events_snapshots'));
    await expect(sink.latestSnapshot('c1', 'uid-z', '2026-03-01T10:02:00.000Z')).rejects.toThrow(fix('namespace_events_snapshots'));
    fake.missingTables.add('namespace_events');
    await expect(sink.insert(ROWS)).rejects.toThrow(fix('namespace_events'));
    fake.missingTables.add('namespace_events_dedup');
    await expect(sink.reportRows('2026-03-01', '2026-03-05')).rejects.toThrow(fix('namespace_events_dedup'));
    await expect(collect(sink.openNamespaces('c1'))).rejects.toThrow(fix('namespace_events_dedup'));
    // Another failure keeps its own error.
    fake.missingTables.clear();
    fake.failRequests = { status: 500, times: 10 };
    await expect(sink.saveSnapshot(end, new Date(0))).rejects.toThrow(/^injected/);
  });

  it('record-billing deployed before terraform apply: a snapshot-end answers 503 (redelivered) with that error, logged as the sink not set up, not as a crash', async () => {
    fake.missingTables.add('namespace_events_snapshots');
    const log = collectingLogger();
    const deps: RecordDeps = { sink, log, now: () => new Date('2026-03-02T12:00:00Z'), organizationBilling: async () => ({}) };
    const answer = await handleBillingEnvelope(deps, { message: { data: Buffer.from(JSON.stringify(end)).toString('base64'), messageId: '7', attributes: {} } });
    expect(answer).toMatchObject({ status: 503, body: { error: expect.stringMatching(/BigQuery table proj\.furnish\.namespace_events_snapshots not found .*run terraform apply/) } });
    const logged = log.lines.find((l) => l.severity === 'ERROR');
    expect(logged).toMatchObject({ message: 'billing: sink not set up, delivery will be retried', fields: { error: answer.body.error } });
    // A crash keeps its stack (500).
    const crash = await handleBillingEnvelope({ ...deps, sink: { ...sink, saveSnapshot: () => Promise.reject(new TypeError('boom')) } }, { message: { data: Buffer.from(JSON.stringify(end)).toString('base64'), messageId: '8', attributes: {} } });
    expect(crash.status).toBe(500);
    expect(log.lines.at(-1)).toMatchObject({ severity: 'ERROR', message: 'billing: crashed, delivery will be retried', fields: { error: expect.stringContaining('TypeError: boom\n    at ') } });
  });

  it('latestSnapshot asks the newest snapshot after a TIMESTAMP, and whether it listed the uid', async () => {
    fake.onQuery = () => ({ schema: [SNAPSHOTS[1]!, { name: 'listed', type: 'BOOLEAN', mode: 'NULLABLE' }], rows: [{ taken_at: '2026-03-02T11:00:00.000Z', listed: false }] });
    expect(await sink.latestSnapshot('c1', 'uid-z', '2026-03-01T10:02:00.000Z')).toEqual({ takenAt: '2026-03-02T11:00:00.000Z', listed: false });
    const q = fake.queries[0]!;
    expect(q.query).toContain('`proj.furnish.namespace_events_snapshots`');
    expect(q.query).toMatch(/ORDER BY taken_at DESC LIMIT 1/);
    expect(q.queryParameters).toEqual(expect.arrayContaining([
      { name: 'cluster', parameterType: { type: 'STRING' }, parameterValue: { value: 'c1' } },
      { name: 'uid', parameterType: { type: 'STRING' }, parameterValue: { value: 'uid-z' } },
      expect.objectContaining({ name: 'after', parameterType: { type: 'TIMESTAMP' } }),
    ]));
    fake.onQuery = () => ({ schema: [], rows: [] });
    expect(await sink.latestSnapshot('c1', 'uid-z', '2026-03-01T10:02:00.000Z')).toBeUndefined();
  });
});
