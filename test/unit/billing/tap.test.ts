// The relay's billing tap: which namespace changes become billing messages, and snapshots.
import { describe, expect, it } from '@jest/globals';
import { billingTapConfig, createBillingTap } from '../../../shared/billing/tap.ts';
import type { BillingMessage } from '../../../shared/billing/types.ts';
import { silentLogger } from '../../../shared/log.ts';
import { memoryApi } from '../reconcile/memory-api.ts';
import { heldBus, settle } from '../../support/held-bus.ts';
import { capturingBus, namespace } from './helpers.ts';

const NOW = new Date('2026-03-02T12:00:00.000Z');

function setup(opts: { failList?: boolean; now?: () => Date } = {}) {
  const api = memoryApi(opts.failList ? (req) => (req.method === 'GET' ? { ok: false, status: 503, data: undefined } : undefined) : undefined);
  const published: BillingMessage[] = [];
  const bus = capturingBus(published);
  const tap = createBillingTap({ kube: api.client, bus, config: { cluster: 'c1', topic: 'furnish-billing', snapshotSeconds: 0, pageSize: 2 }, log: silentLogger, now: opts.now ?? (() => NOW) });
  return { api, tap, published };
}

const summary = (ms: BillingMessage[]) => ms.map((m) => (m.type === 'event' ? `${m.event} ${m.namespace} ${m.organization} ${m.eventTime}` : `end ${m.uids.join(',')}`));

describe('billing tap', () => {
  it('publishes created once, updated only when billed state changes, deleted with its time', async () => {
    const { tap, published } = setup();
    tap.observe('ADDED', namespace('a', { org: 'acme' }));
    const ready = namespace('a', { org: 'acme', rv: '101' });
    ready.metadata.labels!['furnish.dev/phase'] = 'ready';
    tap.observe('MODIFIED', ready);
    tap.observe('MODIFIED', namespace('a', { org: 'globex', rv: '102' }));
    tap.observe('LISTED', namespace('a', { org: 'globex', rv: '102' }));
    tap.observe('DELETED', namespace('a', { org: 'globex', rv: '103', deleted: '2026-03-02T11:00:00Z' }));
    await tap.stop();
    expect(summary(published)).toEqual([
      'created a acme 2026-03-01T10:00:00.000Z',
      'updated a globex 2026-03-02T12:00:00.000Z',
      'deleted a globex 2026-03-02T11:00:00.000Z',
    ]);
    expect(published[1]).toMatchObject({ resourceVersion: '102' });
    // When the relay saw it alive, on all but the deletion: a created republished by a restart is old by its time only.
    expect(published.map((m) => m.type === 'event' && m.observedAt)).toEqual([NOW.toISOString(), NOW.toISOString(), undefined]);
  });

  it('a deletion found by a relist carries the last billed state, timed when noticed', async () => {
    const { tap, published } = setup();
    tap.observe('LISTED', namespace('a', { org: 'acme', billing: { costCenter: '1' } }));
    tap.gone('a', 'uid-a');
    await tap.stop();
    expect(published[1]).toMatchObject({ event: 'deleted', namespace: 'a', organization: 'acme', billing: { costCenter: '1' }, eventTime: NOW.toISOString() });
  });

  it('a snapshot: created for namespaces not seen yet, a snapshot event per namespace (paged), then the list of uids', async () => {
    const { api, tap, published } = setup();
    for (const n of ['a', 'b', 'c']) api.put(namespace(n, { org: 'acme' }));
    tap.observe('ADDED', namespace('a', { org: 'acme' }));
    expect(await tap.snapshot()).toBe(true);
    await tap.stop();
    const lines = summary(published);
    expect(lines.filter((l) => l.startsWith('created')).sort()).toEqual(['created a acme 2026-03-01T10:00:00.000Z', 'created b acme 2026-03-01T10:00:00.000Z', 'created c acme 2026-03-01T10:00:00.000Z']);
    expect(lines.filter((l) => l.startsWith('snapshot')).sort()).toEqual(['snapshot a acme 2026-03-02T12:00:00.000Z', 'snapshot b acme 2026-03-02T12:00:00.000Z', 'snapshot c acme 2026-03-02T12:00:00.000Z']);
    expect(lines.at(-1)).toBe('end uid-a,uid-b,uid-c');
    // Seen alive by the snapshot's list: at its takenAt (the clock read before the list).
    expect(new Set(published.filter((m) => m.type === 'event').map((m) => m.observedAt))).toEqual(new Set([NOW.toISOString()]));
    expect(tap.counters).toMatchObject({ snapshots: 1, snapshotsFailed: 0 });
  });

  it('a snapshot\'s events were seen alive at its takenAt, the clock read before the list, however long the list takes', async () => {
    let tick = 0;
    const { api, tap, published } = setup({ now: () => new Date(NOW.getTime() + 1000 * tick++) });
    for (const n of ['a', 'b', 'c']) api.put(namespace(n, { org: 'acme' }));
    expect(await tap.snapshot()).toBe(true);
    await tap.stop();
    const end = published.find((m) => m.type === 'snapshot-end')!;
    expect(published.filter((m) => m.type === 'event').map((m) => m.type === 'event' && `${m.event} ${m.observedAt}`)).toEqual(expect.arrayContaining([`created ${end.takenAt}`, `snapshot ${end.takenAt}`]));
    expect(new Set(published.map((m) => (m.type === 'event' ? m.observedAt : end.takenAt)))).toEqual(new Set([end.takenAt]));
  });

  it('a snapshot whose list fails publishes no end: nothing is judged deleted', async () => {
    const { tap, published } = setup({ failList: true });
    expect(await tap.snapshot()).toBe(false);
    await tap.stop();
    expect(published.filter((m) => m.type === 'snapshot-end')).toEqual([]);
    expect(tap.counters.snapshotsFailed).toBe(1);
  });

  it('config: billing topic and snapshot period from the relay environment', () => {
    expect(billingTapConfig({}, 'c1', 500)).toEqual({ cluster: 'c1', topic: 'furnish-billing', snapshotSeconds: 86_400, pageSize: 500 });
    expect(billingTapConfig({ FURNISH_TOPIC_BILLING: '' }, 'c1', 500)).toBeNull();
    expect(() => billingTapConfig({ FURNISH_BILLING_SNAPSHOT_SECONDS: 'daily' }, 'c1', 500)).toThrow('FURNISH_BILLING_SNAPSHOT_SECONDS: must be a number ≥ 0, got "daily"');
  });

  it('a watch burst beyond the bound on publishes in flight waits as messages: at most 256 reach the bus at once, every one is published, in order', async () => {
    const { bus, held, sent, most } = heldBus((m) => String(m.namespace));
    const api = memoryApi();
    const tap = createBillingTap({ kube: api.client, bus, config: { cluster: 'c1', topic: 'furnish-billing', snapshotSeconds: 0, pageSize: 2 }, log: silentLogger, now: () => NOW });
    const names = Array.from({ length: 300 }, (_, i) => `burst-${i}`);
    for (const name of names) tap.observe('ADDED', namespace(name, { org: 'acme' }));
    await settle();
    expect(sent).toHaveLength(256);
    while (held.length > 0) {
      held.shift()!();
      await settle();
    }
    expect(most()).toBe(256);
    expect(sent).toEqual(names);
    expect(tap.counters.published).toBe(300);
  });
});
