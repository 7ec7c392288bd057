// A strict reader of the Prometheus text exposition format 0.0.4 (what every /metrics of Furnish
// serves): the problems a scraper would trip on or silently mis-read, each named with its line.
// Checked: every family has one `# HELP` and one `# TYPE` before its samples and its samples are
// together; names and label names are valid, label values escaped, values numbers; no series
// twice; a histogram's buckets are cumulative, end at le="+Inf" and agree with `_count`.

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

interface Sample { name: string; labels: Record<string, string>; value: number; line: number }

export interface ParsedFamily { name: string; help: string; type: string; samples: Sample[] }

/** `name{a="x",b="y"} value [timestamp]`, or a problem. */
function parseSample(text: string, line: number): Sample | string {
  const m = /^([^\s{]+)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$/.exec(text);
  if (!m) return `line ${line}: not a sample: ${text}`;
  const [, name, , body = '', value] = m;
  if (!NAME.test(name!)) return `line ${line}: invalid metric name ${JSON.stringify(name)}`;
  const labels: Record<string, string> = {};
  let rest = body;
  while (rest !== '') {
    const l = /^([^=]+)="((?:[^"\\\n]|\\["\\n])*)"(,|$)/.exec(rest);
    if (!l) return `line ${line}: malformed labels {${body}}`;
    if (!LABEL.test(l[1]!)) return `line ${line}: invalid label name ${JSON.stringify(l[1])}`;
    if (l[1]! in labels) return `line ${line}: label ${l[1]} twice`;
    labels[l[1]!] = l[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(l[0].length);
  }
  const number = value === '+Inf' ? Infinity : value === '-Inf' ? -Infinity : value === 'NaN' ? NaN : Number(value);
  if (value !== 'NaN' && Number.isNaN(number)) return `line ${line}: value ${JSON.stringify(value)} is not a number`;
  return { name: name!, labels, value: number, line };
}

/** The family a sample belongs to: its own name, or a histogram's/summary's without the suffix. */
function familyOf(name: string, declared: ReadonlyMap<string, ParsedFamily>): ParsedFamily | undefined {
  const own = declared.get(name);
  if (own) return own;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  const base = m ? declared.get(m[1]!) : undefined;
  if (!base) return undefined;
  if (m![2] === 'bucket' ? base.type === 'histogram' : base.type === 'histogram' || base.type === 'summary') return base;
  return undefined;
}

function histogramProblems(f: ParsedFamily): string[] {
  const problems: string[] = [];
  const groups = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
  const keyOf = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).filter(([k]) => k !== 'le').sort());
  for (const s of f.samples) {
    const g = groups.get(keyOf(s.labels)) ?? { buckets: [] };
    groups.set(keyOf(s.labels), g);
    if (s.name === `${f.name}_bucket`) {
      if (s.labels.le === undefined) problems.push(`line ${s.line}: ${f.name}_bucket without le`);
      else g.buckets.push([s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), s.value]);
    } else if (s.name === `${f.name}_count`) g.count = s.value;
  }
  for (const [labels, g] of groups) {
    const sorted = [...g.buckets].sort((a, b) => a[0] - b[0]);
    if (sorted.at(-1)?.[0] !== Infinity) problems.push(`${f.name}${labels}: no le="+Inf" bucket`);
    if (sorted.some(([, v], i) => i > 0 && v < sorted[i - 1]![1])) problems.push(`${f.name}${labels}: buckets are not cumulative`);
    if (g.count !== undefined && sorted.at(-1)?.[0] === Infinity && sorted.at(-1)![1] !== g.count) problems.push(`${f.name}${labels}: _count ${g.count} differs from the +Inf bucket`);
  }
  return problems;
}

/** Parses the text; `problems` is empty when a scraper reads it as intended. */
export function parsePrometheus(text: string): { families: ParsedFamily[]; problems: string[] } {
  const problems: string[] = [];
  const declared = new Map<string, ParsedFamily>();
  const closed = new Set<string>();
  const seen = new Set<string>();
  let current: ParsedFamily | undefined;
  if (!text.endsWith('\n')) problems.push('the text does not end with a newline');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    const meta = /^#\s+(HELP|TYPE)\s+(\S+)\s*(.*)$/.exec(raw);
    if (raw.startsWith('#') && !meta) return;
    if (meta) {
      const [, kind, name, rest] = meta;
      if (!NAME.test(name!)) problems.push(`line ${line}: invalid metric name ${JSON.stringify(name)}`);
      if (closed.has(name!)) problems.push(`line ${line}: ${kind} of ${name} after its samples ended`);
      let family = declared.get(name!);
      if (!family) declared.set(name!, (family = { name: name!, help: '', type: '', samples: [] }));
      if (current && current !== family) closed.add(current.name);
      current = family;
      if (family.samples.length > 0) problems.push(`line ${line}: ${kind} of ${name} after its samples`);
      if (kind === 'HELP') {
        if (family.help !== '') problems.push(`line ${line}: second HELP for ${name}`);
        family.help = rest!.trim() || ' ';
      } else {
        if (family.type !== '') problems.push(`line ${line}: second TYPE for ${name}`);
        if (!TYPES.has(rest!.trim())) problems.push(`line ${line}: unknown type ${JSON.stringify(rest)}`);
        family.type = rest!.trim();
      }
      return;
    }
    const sample = parseSample(raw, line);
    if (typeof sample === 'string') return void problems.push(sample);
    const family = familyOf(sample.name, declared);
    if (!family) return void problems.push(`line ${line}: ${sample.name} has no # HELP and # TYPE before it`);
    if (family !== current || closed.has(family.name)) problems.push(`line ${line}: ${sample.name} is apart from the rest of family ${family.name}`);
    const series = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(series)) problems.push(`line ${line}: series ${sample.name} ${JSON.stringify(sample.labels)} twice`);
    seen.add(series);
    family.samples.push(sample);
  });
  for (const f of declared.values()) {
    if (f.help === '') problems.push(`${f.name}: no # HELP`);
    if (f.type === '') problems.push(`${f.name}: no # TYPE`);
    if (f.type === 'histogram') problems.push(...histogramProblems(f));
  }
  return { families: [...declared.values()], problems };
}
