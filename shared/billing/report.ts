// `furnish billing report`: namespace-days per organization (or cost center) over a range of UTC
// days, computed from de-duplicated rows. A namespace counts on every day from the day of its
// first row through the day of its earliest deletion, both included; each day goes to the organization
// (and billing fields) of its latest non-deletion row on or before that day. README "Billing"
// has the same rule in BigQuery SQL.
import { dayOf } from './event.ts';
import type { BillingEventType, BillingRow } from './types.ts';

export type ReportGrouping = 'organization' | 'cost-center';
export const REPORT_GROUPINGS: readonly ReportGrouping[] = ['organization', 'cost-center'];

export interface ReportLine {
  organization: string;
  /** Present when grouped by cost center. */
  costCenter?: string;
  namespaceDays: number;
  namespaces: number;
}

/** Same-time rows: the later event in a namespace's life wins. */
const EVENT_ORDER: Record<BillingEventType, number> = { created: 0, updated: 1, snapshot: 2, deleted: 3 };

function byTime(a: BillingRow, b: BillingRow): number {
  return a.event_time < b.event_time ? -1 : a.event_time > b.event_time ? 1 : EVENT_ORDER[a.event] - EVENT_ORDER[b.event];
}

/** `YYYY-MM-DD` days from `from` through `to`, both included. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/** Rows may repeat (one event id more than once, as BigQuery's best-effort insertId allows): each id counts once. */
export function dedupe(rows: readonly BillingRow[]): BillingRow[] {
  const seen = new Map<string, BillingRow>();
  for (const r of rows) {
    const had = seen.get(r.event_id);
    if (!had || r.recorded_time < had.recorded_time) seen.set(r.event_id, r);
  }
  return [...seen.values()];
}

/** Per namespace and day in the range: the row whose state bills that day. */
export function billedDays(rows: readonly BillingRow[], from: string, to: string): Array<{ day: string; row: BillingRow }> {
  const byNamespace = new Map<string, BillingRow[]>();
  for (const r of dedupe(rows)) {
    const key = `${r.cluster}\u0000${r.namespace_uid}`;
    const list = byNamespace.get(key);
    if (list) list.push(r);
    else byNamespace.set(key, [r]);
  }
  const out: Array<{ day: string; row: BillingRow }> = [];
  for (const list of byNamespace.values()) {
    list.sort(byTime);
    const states = list.filter((r) => r.event !== 'deleted');
    const deletion = list.find((r) => r.event === 'deleted');
    if (states.length === 0) continue;
    const first = dayOf(states[0]!.event_time);
    const last = deletion ? dayOf(deletion.event_time) : to;
    let i = 0;
    for (const day of daysBetween(first > from ? first : from, last < to ? last : to)) {
      while (i + 1 < states.length && dayOf(states[i + 1]!.event_time) <= day) i += 1;
      out.push({ day, row: states[i]! });
    }
  }
  return out;
}

export function costCenterOf(row: BillingRow): string {
  return row.billing.costCenter ?? '';
}

export function namespaceDays(rows: readonly BillingRow[], from: string, to: string, by: ReportGrouping = 'organization'): ReportLine[] {
  const lines = new Map<string, { line: ReportLine; namespaces: Set<string> }>();
  for (const { row } of billedDays(rows, from, to)) {
    const costCenter = by === 'cost-center' ? costCenterOf(row) : undefined;
    const key = JSON.stringify([row.organization, costCenter ?? null]);
    let entry = lines.get(key);
    if (!entry) {
      entry = { line: { organization: row.organization, ...(costCenter === undefined ? {} : { costCenter }), namespaceDays: 0, namespaces: 0 }, namespaces: new Set() };
      lines.set(key, entry);
    }
    entry.line.namespaceDays += 1;
    entry.namespaces.add(`${row.cluster}/${row.namespace_uid}`);
  }
  return [...lines.values()]
    .map(({ line, namespaces }) => ({ ...line, namespaces: namespaces.size }))
    .sort((a, b) => (a.organization === b.organization ? (a.costCenter ?? '').localeCompare(b.costCenter ?? '') : a.organization < b.organization ? -1 : 1));
}

function csvField(v: string): string {
  return /[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

function columns(lines: readonly ReportLine[], by: ReportGrouping): { header: string[]; cells: string[][] } {
  const header = by === 'cost-center' ? ['organization', 'cost_center', 'namespaces', 'namespace_days'] : ['organization', 'namespaces', 'namespace_days'];
  const cells = lines.map((l) => (by === 'cost-center' ? [l.organization, l.costCenter ?? '', String(l.namespaces), String(l.namespaceDays)] : [l.organization, String(l.namespaces), String(l.namespaceDays)]));
  return { header, cells };
}

export function formatCsv(lines: readonly ReportLine[], by: ReportGrouping): string {
  const { header, cells } = columns(lines, by);
  return [header, ...cells].map((r) => r.map(csvField).join(',')).join('\n') + '\n';
}

export function formatTable(lines: readonly ReportLine[], by: ReportGrouping): string {
  const { header, cells } = columns(lines, by);
  const shown = cells.map((r) => r.map((c, i) => (i === 0 && c === '' ? '(none)' : c)));
  const widths = header.map((h, i) => Math.max(h.length, ...shown.map((r) => r[i]!.length)));
  const numeric = (i: number) => i >= header.length - 2;
  const fmt = (r: string[]) => r.map((c, i) => (numeric(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  const total = lines.reduce((s, l) => s + l.namespaceDays, 0);
  return [fmt(header.map((h) => h.toUpperCase())), ...shown.map(fmt), `total namespace-days: ${total}`].join('\n') + '\n';
}
