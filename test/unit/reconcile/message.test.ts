import { describe, it, expect } from '@jest/globals';
import { decodeMessage, encodeMessage, orderingKey, type ReconcileMessage } from '../../../shared/bus/envelope.ts';

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

  it('a message left by an earlier version (state carried for the receiver) is accepted and that state dropped: the receiver reads it', () => {
    const fanout: ReconcileMessage = { ...msg, type: 'FANOUT', cause: 'template/t@1' };
    const old = { ...fanout, templates: 'c38666ea47323d2b7a253e1ab8042301', template: 'gold', targets: [{ n: 'a', h: { '/ConfigMap/a/x': 'h1' } }], heldKinds: ['/ConfigMap'] };
    expect(decodeMessage(Buffer.from(JSON.stringify(old)))).toEqual({ ok: true, message: fanout });
  });

  it('names the organizations a namespace had before and now; anything but a short list of label values is dropped', () => {
    const moved: ReconcileMessage = { ...msg, type: 'MODIFIED', organizations: ['acme', 'globex'] };
    expect(decodeMessage(encodeMessage(moved).data)).toEqual({ ok: true, message: moved });
    for (const organizations of [['a', 'b', 'c'], [''], ['x'.repeat(64)], 'acme', [7]]) {
      const odd = decodeMessage(Buffer.from(JSON.stringify({ ...moved, organizations })));
      expect(odd.ok && odd.message.organizations).toBeUndefined();
    }
  });

  it('STATUS messages are keyed by their cause, so that a burst is not delivered one behind the other; every other message of an object shares its key', () => {
    const base = { cluster: 'local', kind: 'NamespaceTemplate' as const, name: 'gold' };
    expect(orderingKey({ ...base, type: 'FANOUT', cause: 'template/gold@3' })).toBe('local/NamespaceTemplate/gold');
    expect(orderingKey({ ...base, type: 'STATUS', cause: 'namespace/a' })).toBe('local/NamespaceTemplate/gold/status/namespace/a');
    expect(orderingKey({ ...base, type: 'STATUS', cause: 'namespace/a' })).not.toBe(orderingKey({ ...base, type: 'STATUS', cause: 'namespace/b' }));
  });

  it('drops unknown fields instead of passing them on', () => {
    const decoded = decodeMessage(Buffer.from(JSON.stringify({ ...msg, object: { huge: true } })));
    expect(decoded.ok && 'object' in decoded.message).toBe(false);
  });
});
