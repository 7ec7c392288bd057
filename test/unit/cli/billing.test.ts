// `furnish billing report`, spawned as a user runs it, on a SQLite file written by the real sink.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { openSqliteSink } from '../../../shared/billing/sqlite.ts';
import { row } from '../billing/helpers.ts';
import { reportRange } from '../../../shared/cli/billing-command.ts';
import { expectUserError, runFurnish } from './spawn.ts';

let dir: string;
let db: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'furnish-cli-billing-'));
  db = join(dir, 'billing.sqlite');
  const sink = await openSqliteSink(db);
  await sink.insert([
    row('created', 'a', '2026-03-01T10:00:00Z', { org: 'acme', billing: { costCenter: '1' } }),
    row('created', 'b', '2026-03-02T10:00:00Z', { org: 'globex', billing: { costCenter: '2' } }),
    row('deleted', 'b', '2026-03-03T10:00:00Z', { org: 'globex' }),
    row('created', 'c', '2026-03-02T10:00:00Z', { org: '' }),
  ]);
  await sink.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('furnish billing report', () => {
  it('prints namespace-days per organization as a table', async () => {
    const run = await runFurnish(['billing', 'report', '--from', '2026-03-01', '--to', '2026-03-04', '--sink', `sqlite:${db}`]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(
      `namespace-days 2026-03-01 to 2026-03-04 (UTC), ${db}\n` +
        'ORGANIZATION  NAMESPACES  NAMESPACE_DAYS\n(none)                 1               3\nacme                   1               4\nglobex                 1               2\ntotal namespace-days: 9\n',
    );
  });

  it('as CSV per cost center, reading FURNISH_BILLING', async () => {
    const run = await runFurnish(['billing', 'report', '--from', '2026-03-02', '--to', '2026-03-02', '-o', 'csv', '--by', 'cost-center'], undefined, { FURNISH_BILLING: `sqlite:${db}` });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('organization,cost_center,namespaces,namespace_days\n,,1,1\nacme,1,1,1\nglobex,2,1,1\n');
  });

  it('is listed in furnish --help and has its own help', async () => {
    expect((await runFurnish(['--help'])).stdout).toMatch(/billing report\s+namespace-days per organization/);
    expect((await runFurnish(['billing', 'report', '--help'])).stdout).toMatch(/^Usage: furnish billing report \[options\]/);
  });

  it('prints the lines as JSON with -o json', async () => {
    const run = await runFurnish(['billing', 'report', '--from', '2026-03-01', '--to', '2026-03-04', '--sink', `sqlite:${db}`, '-o', 'json']);
    expect(run.status).toBe(0);
    const printed = JSON.parse(run.stdout) as { from: string; to: string; by: string; source: string; lines: { organization: string; namespaceDays: number }[] };
    expect(printed).toMatchObject({ from: '2026-03-01', to: '2026-03-04', by: 'organization', source: db });
    expect(printed.lines.map((l) => [l.organization, l.namespaceDays])).toEqual([['', 3], ['acme', 4], ['globex', 2]]);
  });

  it('stops a range that reaches past today at today, and says so', () => {
    const today = new Date('2026-03-10T12:00:00Z');
    expect(reportRange({ from: '2026-03-01', to: '2026-03-31' }, today)).toEqual({ from: '2026-03-01', to: '2026-03-10', note: '--to 2026-03-31 is after today: the report stops at today (2026-03-10, UTC)' });
    expect(reportRange({ from: '2026-03-01', to: '2026-03-10' }, today)).toEqual({ from: '2026-03-01', to: '2026-03-10' });
    expect(reportRange({}, today)).toEqual({ from: '2026-03-01', to: '2026-03-10' });
    expect(() => reportRange({ from: '2026-03-11' }, today)).toThrow('--from 2026-03-11 is after today (2026-03-10, UTC): there is nothing to report yet');
  });

  it('says so on stderr when it stops at today', async () => {
    const run = await runFurnish(['billing', 'report', '--from', '2026-03-01', '--to', '2999-12-31', '--sink', `sqlite:${db}`]);
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(/^note: --to 2999-12-31 is after today: the report stops at today \(\d{4}-\d{2}-\d{2}, UTC\)\n$/);
  });

  it.each([
    [['--from', '2026-02-30'], /--from: expected a day as YYYY-MM-DD, got "2026-02-30"/],
    [['--from', '2026-03-05', '--to', '2026-03-01'], /--to 2026-03-01 is before --from 2026-03-05/],
    [['--by', 'team'], /--by: "team" is not one of organization, cost-center/],
    [['--sink', 'mysql:x'], /--sink: expected sqlite:<file> or bigquery:<project>.<dataset>.<table>, got "mysql:x"/],
    [['--sink', 'bigquery:p.d'], /--sink: bigquery needs <project>.<dataset>.<table>, got "p.d"/],
    [['report'], /Unexpected argument 'report'/],
  ])('refuses %j', async (args, message) => {
    expectUserError(await runFurnish(['billing', 'report', '--sink', `sqlite:${db}`, ...args]), message, 2);
  });
});
