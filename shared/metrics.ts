// Counters and histograms in the Prometheus text format (version 0.0.4), written by hand: a few
// dozen lines instead of a client library, so that a webhook's cold start pays nothing for them
// (prom-client in the validate-namespace bundle: +22-27 % import CPU, +3 MB, +60 % code;
// docs/operate/metrics.md). The webhooks, the reconcilers and the relay all write through it;
// test/support/prometheus.ts reads what they serve strictly.
// Label values are bounded by their callers (webhook, operation, resource, status code): never a
// user or object name.

export type Labels = Readonly<Record<string, string>>;

/** `a="x",b="y"` with Prometheus' escaping (backslash, double quote, newline). */
function labelText(labels: Labels): string {
  return Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`).join(',');
}

const series = (name: string, labels: Labels) => {
  const text = labelText(labels);
  return text === '' ? name : `${name}{${text}}`;
};

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'histogram' | 'gauge';
  lines(): string[];
}

export interface Counter {
  inc(labels?: Labels, by?: number): void;
}

export interface Histogram {
  observe(labels: Labels, value: number): void;
}

/** Latency buckets in seconds: admission answers in milliseconds, a cold start or a look-up takes up to seconds. */
export const SECONDS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class MetricsRegistry {
  private readonly families: Family[] = [];

  counter(name: string, help: string): Counter {
    const values = new Map<string, { labels: Labels; value: number }>();
    this.families.push({ name, help, type: 'counter', lines: () => [...values.values()].map((v) => `${series(name, v.labels)} ${v.value}`) });
    return {
      inc(labels = {}, by = 1) {
        const key = labelText(labels);
        const entry = values.get(key);
        if (entry) entry.value += by;
        else values.set(key, { labels, value: by });
      },
    };
  }

  histogram(name: string, help: string, buckets: readonly number[] = SECONDS_BUCKETS): Histogram {
    const values = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
    this.families.push({
      name, help, type: 'histogram',
      lines: () => [...values.values()].flatMap((v) => [
        ...buckets.map((le, i) => `${series(`${name}_bucket`, { ...v.labels, le: String(le) })} ${v.counts[i]}`),
        `${series(`${name}_bucket`, { ...v.labels, le: '+Inf' })} ${v.count}`,
        `${series(`${name}_sum`, v.labels)} ${v.sum}`,
        `${series(`${name}_count`, v.labels)} ${v.count}`,
      ]),
    });
    return {
      observe(labels, value) {
        const key = labelText(labels);
        let entry = values.get(key);
        if (!entry) values.set(key, (entry = { labels, counts: buckets.map(() => 0), sum: 0, count: 0 }));
        buckets.forEach((le, i) => { if (value <= le) entry.counts[i]! += 1; });
        entry.sum += value;
        entry.count += 1;
      },
    };
  }

  /** A value read when scraped (e.g. a client's cumulative counters): one line per labels. */
  collected(name: string, help: string, type: 'counter' | 'gauge', read: () => { labels: Labels; value: number }[]): void {
    this.families.push({ name, help, type, lines: () => read().map((v) => `${series(name, v.labels)} ${v.value}`) });
  }

  text(): string {
    return this.families.map((f) => [`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`, ...f.lines()].join('\n')).join('\n') + '\n';
  }
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
