// Every /metrics of Furnish in the Prometheus text format with HELP and TYPE (issue 28, item 8):
// the reader the endpoint tests use refuses what a scraper would mis-read, and the relay's
// /metrics, served by its HTTP server, passes it (it had no HELP or TYPE lines). The webhooks' and
// the reconcilers' endpoints: test/functions/observability.test.ts; all three live on `npm start`'s
// stack: test/integration/local-metrics.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { metricsText, relayServer } from '../../../functions/watch-relay/lib/relay-http.ts';
import type { Relay, RelayCounters } from '../../../functions/watch-relay/lib/relay.ts';
import { MetricsRegistry } from '../../../shared/metrics.ts';
import { parsePrometheus } from '../../support/prometheus.ts';

describe('the Prometheus text reader', () => {
  const problems = (text: string) => parsePrometheus(text).problems;

  it('accepts HELP, TYPE and samples, escaped label values included', () => {
    const registry = new MetricsRegistry();
    registry.counter('c_total', 'a counter').inc({ webhook: 'a"b\\c\nd' }, 2);
    registry.histogram('h_seconds', 'a histogram', [0.1, 1]).observe({ w: 'x' }, 0.5);
    registry.collected('g', 'a gauge', 'gauge', () => [{ labels: {}, value: 3 }]);
    const parsed = parsePrometheus(registry.text());
    expect(parsed.problems).toEqual([]);
    expect(parsed.families.map((f) => [f.name, f.type, f.samples.length])).toEqual([['c_total', 'counter', 1], ['h_seconds', 'histogram', 5], ['g', 'gauge', 1]]);
    expect(parsed.families[0]!.samples[0]!.labels).toEqual({ webhook: 'a"b\\c\nd' });
  });

  it('refuses samples without HELP and TYPE (the relay\'s former /metrics), and each missing line', () => {
    expect(problems('furnish_relay_published_total 4\n')).toEqual(['line 1: furnish_relay_published_total has no # HELP and # TYPE before it']);
    expect(problems('# TYPE a counter\na 1\n')).toEqual(['a: no # HELP']);
    expect(problems('# HELP a x\na 1\n')).toEqual(['a: no # TYPE']);
    expect(problems('# HELP a x\n# TYPE a counter\na 1')).toEqual(['the text does not end with a newline']);
  });

  it('refuses a family split in two, a series twice, bad names, values and escapes', () => {
    const head = (n: string) => `# HELP ${n} x\n# TYPE ${n} gauge\n`;
    expect(problems(`${head('a')}a{k="1"} 1\n${head('b')}b 1\na{k="2"} 1\n`)).toEqual(['line 7: a is apart from the rest of family a']);
    expect(problems(`${head('a')}a 1\na 2\n`)).toEqual(['line 4: series a {} twice']);
    expect(problems(`${head('a')}a{1k="v"} 1\n`)).toEqual(['line 3: invalid label name "1k"']);
    expect(problems(`${head('a')}a{k="v\\x"} 1\n`)).toEqual(['line 3: malformed labels {k="v\\x"}']);
    expect(problems(`${head('a')}a one\n`)).toEqual(['line 3: value "one" is not a number']);
    expect(problems('# HELP a-b x\n# TYPE a-b gauge\n')).toContain('line 1: invalid metric name "a-b"');
  });

  it('refuses a histogram without its +Inf bucket, with buckets that shrink, or a count that disagrees', () => {
    const h = (lines: string[]) => problems(['# HELP h x', '# TYPE h histogram', ...lines, ''].join('\n'));
    expect(h(['h_bucket{le="1"} 1', 'h_sum 1', 'h_count 1'])).toEqual(['h[]: no le="+Inf" bucket']);
    expect(h(['h_bucket{le="1"} 2', 'h_bucket{le="+Inf"} 1', 'h_sum 1', 'h_count 1'])).toEqual(['h[]: buckets are not cumulative']);
    expect(h(['h_bucket{le="+Inf"} 2', 'h_sum 1', 'h_count 1'])).toEqual(['h[]: _count 1 differs from the +Inf bucket']);
  });
});

describe('the relay\'s /metrics', () => {
  const relay = {
    counters: { eventsSeen: 9, bookmarks: 1, published: 4, publishFailed: 0, suppressed: 2, relists: 1, gone: 0, watches: 3, reconnects: 0, resyncs: 1, silentRelists: 0, silentDriftWatches: 0, driftGaps: 0, redriven: 0, drift: 0, parents: 5 } satisfies RelayCounters, // a counter added to the relay and not here fails the type check
    sizes: () => ({ Namespace: 2, NamespaceTemplate: 1, LNamespace: 0 }),
    pending: () => 1,
    ready: () => true,
  } as unknown as Relay;
  const bus = { published: 4, failed: 0, delivered: 4, redelivered: 0, deadLettered: 0 };
  let server: Server;

  beforeAll(async () => {
    server = relayServer(relay, () => bus);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is Prometheus text with HELP and TYPE for every family, served as such', async () => {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const parsed = parsePrometheus(await res.text());
    expect(parsed.problems).toEqual([]);
    const byName = new Map(parsed.families.map((f) => [f.name, f]));
    expect(byName.get('furnish_relay_published_total')).toMatchObject({ type: 'counter', samples: [expect.objectContaining({ value: 4 })] });
    expect(byName.get('furnish_relay_known_objects')).toMatchObject({ type: 'gauge' });
    expect(byName.get('furnish_relay_known_objects')!.samples.map((s) => [s.labels.kind, s.value])).toEqual([['Namespace', 2], ['NamespaceTemplate', 1], ['LNamespace', 0]]);
    expect(byName.get('furnish_relay_ready')).toMatchObject({ type: 'gauge', samples: [expect.objectContaining({ value: 1 })] });
    // Every counter the relay keeps is served.
    expect(parsed.families.filter((f) => f.type === 'counter')).toHaveLength(Object.keys(relay.counters).length + 2);
  });

  it('is the same text metricsText gives', () => {
    expect(parsePrometheus(metricsText(relay, bus)).problems).toEqual([]);
  });
});
