import { describe, expect, it } from '@jest/globals';
import { nextFloor, planReservation, quotaOf, trueUp, usedSlots } from '../../../shared/org/ledger.ts';
import { DEADLINE_MARGIN_MS, mayStillReserve, reservationDeadline, reserveSlot } from '../../../shared/org/reserve.ts';
import { memoryOrganizations } from '../../../shared/org/source.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { RESERVING_WEBHOOK_TIMEOUT_SECONDS } from '../../../shared/webhooks/organizations.ts';
import { organization } from '../../support/organizations.ts';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const later = (s: number) => new Date(NOW + s * 1000).toISOString();

describe('the quota ledger', () => {
  it('quota: spec.namespaceQuota, else the cluster default', () => {
    expect(quotaOf(organization('a', [], { quota: 3 }), 25)).toBe(3);
    expect(quotaOf(organization('a', [], { quota: 0 }), 25)).toBe(0);
    expect(quotaOf(organization('a'), 25)).toBe(25);
  });

  it('counts namespaces plus live reservations, one per namespace name', () => {
    const org = organization('acme', [], { status: { namespaces: 2, reservations: [{ uid: 'a', namespace: 'x', expires: later(30) }, { uid: 'b', namespace: 'x', expires: later(30) }, { uid: 'c', namespace: 'y', expires: later(-1) }] } });
    expect(usedSlots(org, NOW)).toBe(3);
  });

  it('plans a reservation, recognises a retried review, and refuses when full with the denial text', () => {
    const org = organization('acme', [], { quota: 25, status: { namespaces: 24 } });
    const plan = planReservation(org, { uid: 'u1', namespace: 'n1' }, 25, NOW, 60);
    expect(plan).toEqual({ kind: 'reserve', used: 25, quota: 25, status: { namespaces: 24, reservations: [{ uid: 'u1', namespace: 'n1', expires: later(60) }] } });
    const reserved = { ...org, status: plan.kind === 'reserve' ? plan.status : {} };
    expect(planReservation(reserved, { uid: 'u1', namespace: 'n1' }, 25, NOW, 60)).toEqual({ kind: 'held' });
    expect(planReservation(reserved, { uid: 'u2', namespace: 'n2' }, 25, NOW, 60)).toMatchObject({ kind: 'full', message: 'organization "acme" has 25 of 25 namespaces' });
    // Once expired, the slot is free again.
    expect(planReservation(reserved, { uid: 'u2', namespace: 'n2' }, 25, NOW + 61_000, 60)).toMatchObject({ kind: 'reserve', used: 25 });
  });

  it('trues up from the namespace list: terminating excluded, consumed and expired reservations dropped, no change no write', () => {
    const org = organization('acme', [], { status: { namespaces: 9, reservations: [{ uid: 'a', namespace: 'made', expires: later(30) }, { uid: 'b', namespace: 'coming', expires: later(30) }, { uid: 'c', namespace: 'lost', expires: later(-5) }] } });
    const status = trueUp(org, [{ name: 'made', terminating: false }, { name: 'old', terminating: false }, { name: 'going', terminating: true }], NOW);
    expect(status).toEqual({ namespaces: 2, reservations: [{ uid: 'b', namespace: 'coming', expires: later(30) }] });
    expect(trueUp({ ...org, status }, [{ name: 'made', terminating: false }, { name: 'old', terminating: false }], NOW)).toBeUndefined();
  });

  it('remembers the newest namespace revision counted, and never lowers it after a list from the cache or a resync', () => {
    const org = organization('acme', [], { status: { namespaces: 0, reservations: [], countedResourceVersion: '950' } });
    const listed = [{ name: 'a', terminating: false, resourceVersion: '1000' }, { name: 'b', terminating: true, resourceVersion: '999' }, { name: 'c', terminating: false, resourceVersion: '98' }];
    expect(trueUp(org, listed, NOW)).toEqual({ namespaces: 2, reservations: [], countedResourceVersion: '1000' });
    const newer = { ...org, status: { ...org.status, countedResourceVersion: '2000' } };
    expect(trueUp(newer, listed, NOW)?.countedResourceVersion).toBe('2000');
  });

  it('replaces the floor after a fallback to etcd (the cache could not reach it), even with nothing else to write', () => {
    const listed = [{ name: 'a', terminating: false, resourceVersion: '100' }, { name: 'b', terminating: false, resourceVersion: '120' }];
    expect(nextFloor('99999999999', listed, 'cache')).toBe('99999999999');
    expect(nextFloor('99999999999', listed, 'etcd')).toBe('99999999999');
    expect(nextFloor('99999999999', listed, 'fallback')).toBe('120');
    const restored = organization('acme', [], { status: { namespaces: 2, reservations: [], countedResourceVersion: '99999999999' } });
    expect(trueUp(restored, listed, NOW, 'cache')).toBeUndefined();
    expect(trueUp(restored, listed, NOW, 'fallback')).toEqual({ namespaces: 2, reservations: [], countedResourceVersion: '120' });
    // Nothing left to count: no floor at all, rather than the one the server cannot reach.
    expect(trueUp({ ...restored, status: { ...restored.status, namespaces: 0 } }, [], NOW, 'fallback')).toEqual({ namespaces: 0, reservations: [] });
    // A floor the fallback confirms is not written again.
    expect(trueUp({ ...restored, status: { ...restored.status, countedResourceVersion: '120' } }, listed, NOW, 'fallback')).toBeUndefined();
  });
});

describe('reserveSlot (compare-and-swap on the status)', () => {
  it('50 concurrent creates from 5 webhook instances against a quota of 10 reserve exactly 10', async () => {
    const api = memoryOrganizations([organization('acme', [], { quota: 10 })]);
    // Every read answers a little later, as over a network: the instances read the same version and conflict.
    const get = api.get.bind(api);
    api.get = async (name) => {
      const org = await get(name);
      await new Promise((r) => setTimeout(r, Math.random() * 3));
      return org;
    };
    // Each instance is its own client of the same store: its requests share writes, the instances' writes conflict.
    const instances = Array.from({ length: 5 }, () => ({ ...api }));
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => reserveSlot(instances[i % 5]!, 'acme', { uid: `u${i}`, namespace: `n${i}` }, { defaultQuota: 25, ttlSeconds: 60, dryRun: false, sleep: async () => {} })));
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.message)).toEqual(Array(40).fill('organization "acme" has 10 of 10 namespaces'));
    expect(Math.max(...results.map((r) => r.attempts))).toBeGreaterThan(1);
    expect(api.organizations.get('acme')!.status!.reservations).toHaveLength(10);
  });

  it('requests of one instance that arrive together share one read and one write', async () => {
    const api = memoryOrganizations([organization('acme', [], { quota: 3 })]);
    let writes = 0;
    const writeStatus = api.writeStatus.bind(api);
    api.writeStatus = (org, status) => ((writes += 1), writeStatus(org, status));
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => reserveSlot(api, 'acme', { uid: `u${i}`, namespace: i === 4 ? 'n0' : `n${i}` }, { defaultQuota: 25, ttlSeconds: 60, dryRun: false })));
    expect(writes).toBe(1);
    expect(results.map((r) => r.ok)).toEqual([true, true, true, false, true]);
    expect(results[4]).toMatchObject({ note: 'slot already held in organization "acme"' });
    expect(api.organizations.get('acme')!.status!.reservations).toHaveLength(3);
  });

  it('a dry run checks the quota and writes nothing', async () => {
    const api = memoryOrganizations([organization('acme', [], { quota: 1 })]);
    const dry = await reserveSlot(api, 'acme', { uid: 'u', namespace: 'n' }, { defaultQuota: 25, ttlSeconds: 60, dryRun: true });
    expect(dry).toMatchObject({ ok: true, note: 'dry run: organization "acme" would have 1 of 1 namespaces' });
    expect(api.organizations.get('acme')!.status).toBeUndefined();
  });

  it('gives up after the bound with a retryable answer, and fails closed when the API cannot be read', async () => {
    const api = memoryOrganizations([organization('acme')]);
    api.writeStatus = async () => ({ ok: false, conflict: true, status: 409, error: 'conflict' });
    expect(await reserveSlot(api, 'acme', { uid: 'u', namespace: 'n' }, { defaultQuota: 25, ttlSeconds: 60, dryRun: false, maxAttempts: 3, sleep: async () => {} })).toEqual({
      ok: false, unavailable: true, attempts: 3, message: 'could not reserve a namespace of organization "acme": 3 concurrent updates in a row; retry',
    });
    api.get = () => Promise.reject(new Error('timeout'));
    expect(await reserveSlot(api, 'acme', { uid: 'u', namespace: 'n' }, { defaultQuota: 25, ttlSeconds: 60, dryRun: false })).toMatchObject({ ok: false, unavailable: true, message: 'could not read organization "acme" (timeout); retry' });
  });
});

describe('finding 17: no slot is written after the API server stopped waiting for the webhook', () => {
  it('pure: the deadline is the webhook\'s timeout from when it started, less the margin', () => {
    expect(reservationDeadline(10_000, 5)).toBe(15_000 - DEADLINE_MARGIN_MS);
    expect(mayStillReserve(12_999, 13_000)).toBe(true);
    expect(mayStillReserve(13_000, 13_000)).toBe(false);
    expect(mayStillReserve(1e15, undefined)).toBe(true);
  });

  it('a slow webhook (conflicts until past its deadline) writes no reservation and says retry', async () => {
    const api = memoryOrganizations([organization('acme', [], { quota: 10 })]);
    let clock = 0;
    const writeStatus = api.writeStatus.bind(api);
    // Every write loses to another writer and takes a second: by the fifth round the 4 s it may take are spent.
    api.writeStatus = async () => ((clock += 1000), { ok: false, conflict: true, status: 409, error: 'conflict' });
    const r = await reserveSlot(api, 'acme', { uid: 'u', namespace: 'n' }, { defaultQuota: 25, ttlSeconds: 60, dryRun: false, deadline: reservationDeadline(0, 5), now: () => clock, sleep: async () => {} });
    expect(r).toEqual({ ok: false, unavailable: true, attempts: 5, message: 'could not reserve a namespace of organization "acme" in time (the API server stops waiting for the webhook); retry' });
    api.writeStatus = writeStatus;
    expect(api.organizations.get('acme')!.status).toBeUndefined();
    clock = 0;
    expect(await reserveSlot(api, 'acme', { uid: 'u', namespace: 'n' }, { defaultQuota: 25, ttlSeconds: 60, dryRun: false, deadline: reservationDeadline(0, 5), now: () => clock })).toMatchObject({ ok: true });
  });
});

describe('the webhooks that reserve', () => {
  const registration = (name: string) => (parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'infra', 'webhooks', `${name}.yaml`), 'utf8')) as { webhooks: Array<{ timeoutSeconds: number; sideEffects: string; rules: Array<{ operations: string[] }> }> }).webhooks[0]!;

  it('have the timeout their deadline is counted from, reserve nothing on a dry run, and judge LNamespace UPDATEs', () => {
    for (const name of ['validate-namespace', 'mutate-lnamespace']) {
      expect(registration(name).timeoutSeconds).toBe(RESERVING_WEBHOOK_TIMEOUT_SECONDS);
      expect(registration(name).sideEffects).toBe('NoneOnDryRun');
    }
    expect(registration('mutate-lnamespace').rules[0]!.operations).toEqual(['CREATE', 'UPDATE']);
    expect(registration('validate-organization').rules[0]!.operations).toContain('DELETE');
  });
});
