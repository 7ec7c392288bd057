import { describe, expect, it } from '@jest/globals';
import { billingState, buildRow, decodeBillingMessage, deriveEvent, encodeBillingMessage, eventId, impliedDeletionId } from '../../../shared/billing/event.ts';
import { contradictableAfter, deletionContradicting, deletionsMissingFromSnapshot, SNAPSHOT_GRACE_MS } from '../../../shared/billing/snapshot.ts';
import type { SnapshotEndMessage } from '../../../shared/billing/types.ts';
import { message, namespace, row } from './helpers.ts';

const now = new Date('2026-03-02T12:00:00Z');

describe('billingState: what a namespace bills', () => {
  it('reads organization, creator and furnish.dev/billing.* annotations, sorted', () => {
    expect(billingState(namespace('a', { org: 'acme', creator: 'bob', billing: { project: 'x', costCenter: '4711' } }))).toEqual({ organization: 'acme', creator: 'bob', billing: { costCenter: '4711', project: 'x' } });
  });

  it('has no billing map without billing annotations (the Organization then applies)', () => {
    const ns = namespace('a');
    ns.metadata.annotations!['furnish.dev/billing.'] = 'empty field name is ignored';
    expect(billingState(ns)).toEqual({ organization: '', creator: 'alice' });
  });
});

describe('deriveEvent', () => {
  const before = billingState(namespace('a', { org: 'acme' }));

  it('a namespace first seen is created at its creationTimestamp, whenever the relay sees it', () => {
    expect(deriveEvent(undefined, 'LISTED', namespace('a'), now)).toEqual({ event: 'created', eventTime: '2026-03-01T10:00:00.000Z' });
    expect(deriveEvent(undefined, 'ADDED', namespace('a'), now)).toEqual({ event: 'created', eventTime: '2026-03-01T10:00:00.000Z' });
  });

  it('a change of organization, creator or billing field is an update seen now', () => {
    expect(deriveEvent(before, 'MODIFIED', namespace('a', { org: 'globex' }), now)).toEqual({ event: 'updated', eventTime: now.toISOString() });
    expect(deriveEvent(before, 'MODIFIED', namespace('a', { org: 'acme', billing: { costCenter: '1' } }), now)?.event).toBe('updated');
    expect(deriveEvent(before, 'MODIFIED', namespace('a', { org: 'acme', creator: 'eve' }), now)?.event).toBe('updated');
  });

  it('any other change (a label, the phase) is no billing event', () => {
    const ns = namespace('a', { org: 'acme' });
    ns.metadata.labels!['furnish.dev/phase'] = 'ready';
    expect(deriveEvent(before, 'MODIFIED', ns, now)).toBeNull();
    expect(deriveEvent(before, 'LISTED', ns, now)).toBeNull();
  });

  it('a deletion is timed by its deletionTimestamp, else now', () => {
    expect(deriveEvent(before, 'DELETED', namespace('a', { deleted: '2026-03-02T08:00:00Z' }), now)).toEqual({ event: 'deleted', eventTime: '2026-03-02T08:00:00.000Z' });
    expect(deriveEvent(before, 'DELETED', namespace('a'), now)).toEqual({ event: 'deleted', eventTime: now.toISOString() });
  });
});

describe('eventId: deterministic', () => {
  it('the same event, published again (relay restart: another time, another version), has the same id', () => {
    expect(eventId(message('created', 'a', '2026-03-01T10:00:00Z'))).toBe(eventId({ ...message('created', 'a', '2026-03-01T10:00:00Z'), resourceVersion: '999' }));
    expect(eventId(message('deleted', 'a', '2026-03-02T08:00:00Z'))).toBe(eventId(message('deleted', 'a', '2026-03-05T00:00:00Z')));
  });

  it('snapshots: one per namespace per UTC day', () => {
    expect(eventId(message('snapshot', 'a', '2026-03-02T00:00:01Z'))).toBe(eventId(message('snapshot', 'a', '2026-03-02T23:59:59Z')));
    expect(eventId(message('snapshot', 'a', '2026-03-02T23:59:59Z'))).not.toBe(eventId(message('snapshot', 'a', '2026-03-03T00:00:00Z')));
  });

  it('updates: one per resourceVersion; events, namespaces and clusters never share ids', () => {
    const ids = [
      eventId(message('updated', 'a', '2026-03-02T00:00:00Z', { rv: '7' })),
      eventId(message('updated', 'a', '2026-03-02T00:00:00Z', { rv: '8' })),
      eventId(message('created', 'a', '2026-03-02T00:00:00Z')),
      eventId(message('deleted', 'a', '2026-03-02T00:00:00Z')),
      eventId(message('created', 'b', '2026-03-02T00:00:00Z')),
      eventId(message('created', 'a', '2026-03-02T00:00:00Z', { cluster: 'c2' })),
    ];
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]).toMatch(/^[0-9a-f]{32}$/);
  });

  it('a deletion a snapshot implies: one per snapshot, never the watched deletion\'s id', () => {
    expect(impliedDeletionId('c1', 'uid-a', '2026-03-02T11:00:00Z')).toBe(impliedDeletionId('c1', 'uid-a', '2026-03-02T11:00:00.000Z'));
    const ids = [impliedDeletionId('c1', 'uid-a', '2026-03-02T11:00:00Z'), impliedDeletionId('c1', 'uid-a', '2026-03-03T11:00:00Z'), impliedDeletionId('c2', 'uid-a', '2026-03-02T11:00:00Z'), eventId(message('deleted', 'a', '2026-03-02T11:00:00Z'))];
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('buildRow', () => {
  it('takes the namespace\'s own billing fields over its organization\'s', () => {
    expect(buildRow(message('created', 'a', '2026-03-01T10:00:00Z', { billing: { costCenter: '1' } }), { costCenter: '2' }, now).billing).toEqual({ costCenter: '1' });
    const r = buildRow(message('created', 'a', '2026-03-01T10:00:00Z'), { costCenter: '2' }, now);
    expect(r).toEqual({
      event_id: eventId(message('created', 'a', '2026-03-01T10:00:00Z')),
      event: 'created',
      event_time: '2026-03-01T10:00:00.000Z',
      recorded_time: now.toISOString(),
      cluster: 'c1',
      namespace: 'a',
      namespace_uid: 'uid-a',
      organization: 'acme',
      creator: 'alice',
      billing: { costCenter: '2' },
      resource_version: '',
    });
  });
});

describe('billing messages on the wire', () => {
  it('round-trip, with one ordering key per namespace', () => {
    const m = message('created', 'a', '2026-03-01T10:00:00.000Z', { billing: { costCenter: '1' } });
    const env = encodeBillingMessage(m);
    expect(env.orderingKey).toBe('c1/billing/uid-a');
    expect(decodeBillingMessage(env.data.toString('base64'))).toEqual({ ok: true, message: m });
  });

  it('observedAt (when the relay saw the namespace alive) travels, and changes neither the event id nor the row', () => {
    const m = message('created', 'a', '2026-03-01T10:00:00.000Z');
    const observed = { ...m, observedAt: '2026-03-02T11:59:58.000Z' };
    expect(decodeBillingMessage(encodeBillingMessage(observed).data)).toEqual({ ok: true, message: observed });
    expect(eventId(observed)).toBe(eventId(m));
    expect(buildRow(observed, {}, now)).toEqual(buildRow(m, {}, now));
  });

  it.each([
    [undefined, 'empty message data'],
    ['bm90IGpzb24=', 'not base64 JSON'],
    [{ ...message('created', 'a', 'x'), eventTime: 'yesterday' }, 'eventTime: expected an RFC 3339 time'],
    [{ ...message('created', 'a', '2026-03-01T00:00:00Z'), event: 'renamed' }, 'event: expected one of created, updated, deleted, snapshot, got "renamed"'],
    [{ ...message('created', 'a', '2026-03-01T00:00:00Z'), uid: '' }, 'uid: expected a non-empty string'],
    [{ ...message('created', 'a', '2026-03-01T00:00:00Z'), billing: { costCenter: 4711 } }, 'billing: expected a map of strings'],
    [{ ...message('updated', 'a', '2026-03-01T00:00:00Z'), resourceVersion: undefined }, 'resourceVersion: required for an updated event'],
    [{ v: 1, type: 'snapshot-end', cluster: 'c1', takenAt: '2026-03-01T00:00:00Z', uids: [1] }, 'uids: expected an array of strings'],
    [{ v: 2, type: 'event' }, 'v: expected 1, got 2'],
    [{ ...message('created', 'a', '2026-03-01T00:00:00Z'), observedAt: 'at start' }, 'observedAt: expected an RFC 3339 time, got "at start"'],
    [{ ...message('created', 'a', '2026-03-01T00:00:00Z'), observedAt: 1772100000000 }, 'observedAt: expected an RFC 3339 time, got 1772100000000'],
  ])('refuses %j: %s', (input, reason) => {
    const data = input === undefined || typeof input === 'string' ? input : Buffer.from(JSON.stringify(input)).toString('base64');
    const r = decodeBillingMessage(data);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(reason);
  });
});

describe('deletionsMissingFromSnapshot', () => {
  const takenAt = '2026-03-02T12:00:00.000Z';
  const end = (uids: string[]): SnapshotEndMessage => ({ v: 1, type: 'snapshot-end', cluster: 'c1', takenAt, uids });
  const open = (ns: string, first: string) => ({ last: row('snapshot', ns, first, { org: 'acme', billing: { costCenter: '1' } }), firstEventTime: first });

  it('records the deletion, at the snapshot time, of every open namespace the snapshot no longer lists', async () => {
    const rows = await deletionsMissingFromSnapshot([open('a', '2026-03-01T00:00:00.000Z'), open('b', '2026-03-01T00:00:00.000Z')], end(['uid-a']), now);
    expect(rows).toEqual([{ ...open('b', '2026-03-01T00:00:00.000Z').last, event: 'deleted', event_id: impliedDeletionId('c1', 'uid-b', takenAt), event_time: takenAt, recorded_time: now.toISOString() }]);
  });

  it('does not judge a namespace younger than the grace period (created while the list ran) nor another cluster\'s', async () => {
    const young = new Date(Date.parse(takenAt) - SNAPSHOT_GRACE_MS + 1000).toISOString();
    const other = { ...open('c', '2026-03-01T00:00:00.000Z'), last: { ...open('c', '2026-03-01T00:00:00.000Z').last, cluster: 'c2' } };
    expect(await deletionsMissingFromSnapshot([open('a', young), other], end([]), now)).toEqual([]);
  });
});

describe('deletionContradicting: a late event after a snapshot that lacked its namespace', () => {
  const takenAt = '2026-03-02T11:00:00.000Z';
  const late = row('created', 'gone', '2026-03-01T10:00:00.000Z', { org: 'acme', billing: { costCenter: '300' } });

  it('is recorded with its namespace\'s deletion at the snapshot\'s time, under the one deletion id of the namespace', () => {
    expect(deletionContradicting(late, { takenAt, listed: false }, now)).toEqual({ ...late, event: 'deleted', event_id: impliedDeletionId('c1', 'uid-gone', takenAt), event_time: takenAt, recorded_time: now.toISOString() });
    const lateSnapshot = row('snapshot', 'gone', '2026-03-01T00:05:00.000Z');
    expect(deletionContradicting(lateSnapshot, { takenAt, listed: false }, now)).toMatchObject({ event: 'deleted', event_time: takenAt, event_id: impliedDeletionId('c1', 'uid-gone', takenAt) });
  });

  it('nothing when the snapshot listed it, when there is none, or for a deletion', () => {
    expect(deletionContradicting(late, { takenAt, listed: true }, now)).toBeNull();
    expect(deletionContradicting(late, undefined, now)).toBeNull();
    expect(deletionContradicting(row('deleted', 'gone', '2026-03-01T10:00:00.000Z'), { takenAt, listed: false }, now)).toBeNull();
  });

  it('an event within the grace before the snapshot (created while the list ran) is left to the next snapshot', () => {
    const young = row('created', 'gone', new Date(Date.parse(takenAt) - SNAPSHOT_GRACE_MS + 1000).toISOString());
    expect(deletionContradicting(young, { takenAt, listed: false }, now)).toBeNull();
    const old = row('created', 'gone', new Date(Date.parse(takenAt) - SNAPSHOT_GRACE_MS - 1000).toISOString());
    expect(deletionContradicting(old, { takenAt, listed: false }, now)).not.toBeNull();
  });

  it('contradictableAfter: the grace after the event; null when no snapshot recorded by now can be that much younger, or for a deletion', () => {
    expect(contradictableAfter(late, now)).toBe('2026-03-01T10:02:00.000Z');
    expect(contradictableAfter(row('created', 'a', new Date(now.getTime() - SNAPSHOT_GRACE_MS).toISOString()), now)).toBeNull();
    expect(contradictableAfter(row('created', 'a', new Date(now.getTime() - SNAPSHOT_GRACE_MS - 1).toISOString()), now)).not.toBeNull();
    expect(contradictableAfter(row('deleted', 'a', '2026-03-01T10:00:00.000Z'), now)).toBeNull();
  });

  it('contradictableAfter with observedAt: an old event the relay saw alive within the grace (a restart\'s republished created) reads nothing; delivered later (a backlog), the same threshold as without', () => {
    const seen = (ms: number) => new Date(now.getTime() - ms).toISOString();
    expect(contradictableAfter(late, now, SNAPSHOT_GRACE_MS, seen(5_000))).toBeNull();
    expect(contradictableAfter(late, now, SNAPSHOT_GRACE_MS, seen(SNAPSHOT_GRACE_MS))).toBeNull();
    expect(contradictableAfter(late, now, SNAPSHOT_GRACE_MS, seen(SNAPSHOT_GRACE_MS + 1))).toBe('2026-03-01T10:02:00.000Z');
    // Seen before the event's time (the API server's clock ahead of the relay's): the event's time counts.
    const fresh = row('created', 'a', seen(1_000));
    expect(contradictableAfter(fresh, now, SNAPSHOT_GRACE_MS, seen(SNAPSHOT_GRACE_MS * 10))).toBeNull();
    expect(contradictableAfter(row('deleted', 'a', '2026-03-01T10:00:00.000Z'), now, SNAPSHOT_GRACE_MS, seen(SNAPSHOT_GRACE_MS * 10))).toBeNull();
    // Seen "after now" (the relay's clock ahead of record-billing's): not trusted, the snapshots are read.
    expect(contradictableAfter(late, now, SNAPSHOT_GRACE_MS, seen(-1))).toBe('2026-03-01T10:02:00.000Z');
    expect(contradictableAfter(late, now, SNAPSHOT_GRACE_MS, seen(0))).toBeNull();
  });
});
