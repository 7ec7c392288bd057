import { describe, it, expect } from '@jest/globals';
import { decodeMessage, encodeMessage, messageIdentity, orderingKey, RecentSet, type ReconcileMessage } from '../../../shared/bus/envelope.ts';

const msg: ReconcileMessage = { v: 1, cluster: 'local', kind: 'Namespace', name: 'team-a', uid: 'u1', resourceVersion: '42', type: 'ADDED' };

describe('reconcile messages', () => {
  it('round-trips through the base64 a Pub/Sub push delivers', () => {
    const env = encodeMessage(msg);
    expect(decodeMessage(env.data.toString('base64'))).toEqual({ ok: true, message: msg });
    expect(decodeMessage(env.data)).toEqual({ ok: true, message: msg });
  });

  it('carries filterable attributes and one ordering key per object', () => {
    const env = encodeMessage(msg);
    expect(env.attributes).toEqual({ kind: 'Namespace', type: 'ADDED', cluster: 'local', name: 'team-a' });
    expect(env.orderingKey).toBe('local/Namespace/team-a');
    expect(orderingKey({ cluster: 'local', kind: 'NamespaceTemplate', name: 'team-a' })).not.toBe(env.orderingKey);
  });

  it('stays small: names and versions, never objects', () => {
    expect(encodeMessage({ ...msg, cause: 'template/x@1' }).data.length).toBeLessThan(200);
  });

  it.each([
    [undefined, 'empty message data'],
    ['', 'empty message data'],
    ['!!!notjson', 'message data is not base64 JSON'],
    [Buffer.from('"x"').toString('base64'), 'message data is not an object'],
    [Buffer.from(JSON.stringify({ ...msg, v: 2 })).toString('base64'), 'unsupported message version 2'],
    [Buffer.from(JSON.stringify({ ...msg, kind: 'Pod' })).toString('base64'), 'unknown kind Pod'],
    [Buffer.from(JSON.stringify({ ...msg, type: 'BOOKMARK' })).toString('base64'), 'unknown type BOOKMARK'],
    [Buffer.from(JSON.stringify({ ...msg, name: '' })).toString('base64'), 'missing or invalid name'],
    [Buffer.from(JSON.stringify({ ...msg, cluster: undefined })).toString('base64'), 'missing cluster'],
  ])('rejects %p without throwing: %s', (data, reason) => {
    expect(decodeMessage(data)).toEqual({ ok: false, reason });
  });

  it('a fan-out carries the digest of the templates it saw; anything but a hex digest is dropped', () => {
    const fanout: ReconcileMessage = { ...msg, type: 'FANOUT', cause: 'template/t@1', templates: 'c38666ea47323d2b7a253e1ab8042301' };
    expect(decodeMessage(encodeMessage(fanout).data)).toEqual({ ok: true, message: fanout });
    const odd = decodeMessage(Buffer.from(JSON.stringify({ ...fanout, templates: 'not a digest' })));
    expect(odd.ok && odd.message.templates).toBeUndefined();
  });

  it('a fan-out batch carries its template and each namespace with what it holds; a malformed batch is refused, naming what is wrong', () => {
    const batch: ReconcileMessage = { v: 1, cluster: 'local', kind: 'Namespace', name: 'gold#0', type: 'FANOUT', template: 'gold', targets: [{ n: 'a', h: { '/ConfigMap/a/x': 'h1' } }, { n: 'b' }] };
    expect(decodeMessage(encodeMessage(batch).data)).toEqual({ ok: true, message: batch });
    const bad = (extra: Record<string, unknown>) => decodeMessage(Buffer.from(JSON.stringify({ ...batch, ...extra })));
    expect(bad({ template: undefined })).toEqual({ ok: false, reason: 'a FANOUT batch must name its template' });
    expect(bad({ targets: [] })).toEqual({ ok: false, reason: 'targets must be a list of 1 to 1000 namespaces' });
    expect(bad({ targets: Array.from({ length: 1001 }, (_, i) => ({ n: `n${i}` })) })).toMatchObject({ ok: false });
    expect(bad({ targets: [{ n: 'a' }, { n: 7 }] })).toEqual({ ok: false, reason: 'targets[1].n must be a namespace name' });
    expect(bad({ targets: [{ n: 'a', h: { k: 1 } }] })).toEqual({ ok: false, reason: 'targets[0].h must map object keys to hashes' });
    expect(bad({ targets: [{ n: 'a', h: ['x'] }] })).toEqual({ ok: false, reason: 'targets[0].h must map object keys to hashes' });
    expect(bad({ type: 'SYNC' })).toEqual({ ok: false, reason: 'targets are only carried by Namespace FANOUT messages' });
  });

  it('drops unknown fields instead of passing them on', () => {
    const decoded = decodeMessage(Buffer.from(JSON.stringify({ ...msg, object: { huge: true } })));
    expect(decoded.ok && 'object' in decoded.message).toBe(false);
  });

  it('identity distinguishes versions and reasons, not delivery', () => {
    expect(messageIdentity(msg)).toBe(messageIdentity({ ...msg }));
    expect(messageIdentity(msg)).not.toBe(messageIdentity({ ...msg, resourceVersion: '43' }));
    expect(messageIdentity(msg)).not.toBe(messageIdentity({ ...msg, type: 'SYNC' }));
  });
});

describe('RecentSet', () => {
  it('remembers a bounded number of identities, oldest evicted first', () => {
    const seen = new RecentSet(2);
    expect(seen.checkAndAdd('a')).toBe(false);
    expect(seen.checkAndAdd('a')).toBe(true);
    seen.checkAndAdd('b');
    seen.checkAndAdd('c');
    expect(seen.size).toBe(2);
    expect(seen.checkAndAdd('a')).toBe(false);
  });
});
