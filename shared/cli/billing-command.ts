// `furnish billing report`: namespace-days per organization (or cost center) over a range of UTC
// days, from the SQLite file record-billing writes or from BigQuery's de-duplicating view.
import { formatCsv, formatTable, namespaceDays, REPORT_GROUPINGS, type ReportGrouping } from '../billing/report.ts';
import { openSink, parseSinkSpec } from '../billing/sink.ts';
import { ConfigError, readSetting } from '../config/settings.ts';
import { type CliIo, type Command, EXIT, type OptionValues, stringOption, UsageError } from './command.ts';

const FORMATS = ['table', 'csv', 'json'] as const;
type Format = (typeof FORMATS)[number];

/** `YYYY-MM-DD` that is a real calendar day. */
export function parseDay(value: string, option: string): string {
  const ok = /^\d{4}-\d{2}-\d{2}$/.test(value) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);
  if (!ok) throw new UsageError(`--${option}: expected a day as YYYY-MM-DD, got "${value}"`);
  return value;
}

function choice<T extends string>(values: OptionValues, option: string, allowed: readonly T[], fallback: T): T {
  const v = stringOption(values, option) ?? fallback;
  if (!(allowed as readonly string[]).includes(v)) throw new UsageError(`--${option}: "${v}" is not one of ${allowed.join(', ')}`);
  return v as T;
}

/**
 * The days to report. Default: the current month so far (UTC). A range reaching past today stops at
 * today (`note` says so): days not yet lived would bill namespaces for time they have not had.
 */
export function reportRange(values: OptionValues, today: Date): { from: string; to: string; note?: string } {
  const todayDay = today.toISOString().slice(0, 10);
  const from = parseDay(stringOption(values, 'from') ?? `${todayDay.slice(0, 8)}01`, 'from');
  const asked = parseDay(stringOption(values, 'to') ?? todayDay, 'to');
  if (from > todayDay) throw new UsageError(`--from ${from} is after today (${todayDay}, UTC): there is nothing to report yet`);
  if (asked < from) throw new UsageError(`--to ${asked} is before --from ${from}`);
  if (asked <= todayDay) return { from, to: asked };
  return { from, to: todayDay, note: `--to ${asked} is after today: the report stops at today (${todayDay}, UTC)` };
}

function sinkOption(sink: string): ReturnType<typeof parseSinkSpec> {
  try {
    return parseSinkSpec(sink, '--sink');
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message);
    throw e;
  }
}

async function run(values: OptionValues, io: CliIo): Promise<number> {
  const { from, to, note } = reportRange(values, new Date());
  const by = choice<ReportGrouping>(values, 'by', REPORT_GROUPINGS, 'organization');
  const format = choice<Format>(values, 'output', FORMATS, 'table');
  if (note) io.stderr(`note: ${note}\n`);
  // A bad FURNISH_BILLING is a ConfigError naming it (exit 1); a bad --sink, the command line's (exit 2).
  const sink = stringOption(values, 'sink');
  const spec = sink === undefined ? parseSinkSpec(readSetting(io.env, 'billing')) : sinkOption(sink);
  const source = spec.kind === 'sqlite' ? spec.path : `${spec.projectId}.${spec.dataset}`;
  const opened = await openSink(spec, { env: io.env });
  try {
    const lines = namespaceDays(await opened.reportRows(from, to), from, to, by);
    if (format === 'json') io.stdout(`${JSON.stringify({ from, to, by, source, lines }, null, 2)}\n`);
    else io.stdout(format === 'csv' ? formatCsv(lines, by) : `namespace-days ${from} to ${to} (UTC), ${source}\n${formatTable(lines, by)}`);
  } finally {
    await opened.close();
  }
  return EXIT.ok;
}

export const billingReportCommand: Command = {
  name: 'billing report',
  summary: 'namespace-days per organization or cost center, from the billing rows',
  description:
    'Counts namespace-days per organization (or per organization and cost center) for a range of UTC days:\n' +
    'a namespace counts on every day from its creation through its deletion, both included, for the\n' +
    'organization it had at the end of that day. Rows come from the SQLite file record-billing writes\n' +
    '(default .furnish/billing.sqlite, or FURNISH_BILLING) or from BigQuery\'s de-duplicating view.',
  options: {
    from: { type: 'string', value: 'YYYY-MM-DD', description: 'first day (default: the 1st of this month, UTC)' },
    to: { type: 'string', value: 'YYYY-MM-DD', description: 'last day, included (default: today, UTC; a later day stops at today)' },
    by: { type: 'string', value: REPORT_GROUPINGS.join('|'), description: 'group by organization (default) or by organization and cost center' },
    output: { type: 'string', short: 'o', value: FORMATS.join('|'), description: 'table (default), csv or json' },
    sink: { type: 'string', value: 'sqlite:<file>|bigquery:<project>.<dataset>.<table>', description: 'where the rows are (default: FURNISH_BILLING, else sqlite:.furnish/billing.sqlite)' },
  },
  run,
};
