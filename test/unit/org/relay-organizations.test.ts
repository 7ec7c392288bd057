// The organization(s) a namespace message names, remembered by the relay, and how they travel in
// the envelope: what reconcile-organization trues up for one namespace event.
import { describe, expect, it } from '@jest/globals';
import { decodeMessage, encodeMessage, type ReconcileMessage } from '../../../shared/bus/envelope.ts';
import { concernedOrganizations, NamespaceOrganizations } from '../../../shared/org/relay-organizations.ts';
import { namespaceObject } from '../../support/organizations.ts';

const ns = (name: string, org?: string) => namespaceObject(name, org ? { 'furnish.dev/organization': org } : {});

describe('the organizations a namespace change concerns', () => {
  it.each([
    [undefined, undefined, []],
    ['acme', undefined, ['acme']],
    ['acme', 'acme', ['acme']],
    ['acme', 'globex', ['acme', 'globex']],
    [undefined, 'globex', ['globex']],
  ])('now %s, before %s', (now, before, concerned) => {
    expect(concernedOrganizations(now, before)).toEqual(concerned);
  });

  it('remembers only organized namespaces, and forgets them when they leave', () => {
    const seen = new NamespaceOrganizations();
    expect(seen.observe(ns('a', 'acme'), 'LISTED')).toEqual(['acme']);
    expect(seen.observe(ns('loose'), 'ADDED')).toEqual([]);
    expect(seen.size).toBe(1);
    expect(seen.observe(ns('a', 'globex'), 'MODIFIED')).toEqual(['globex', 'acme']);
    expect(seen.observe(ns('a', 'globex'), 'MODIFIED')).toEqual(['globex']);
    expect(seen.observe(ns('a'), 'MODIFIED')).toEqual(['globex']);
    expect(seen.size).toBe(0);
    seen.observe(ns('b', 'acme'), 'ADDED');
    expect(seen.forget('b')).toEqual(['acme']);
    expect(seen.forget('b')).toEqual([]);
    seen.observe(ns('c', 'acme'), 'ADDED');
    expect(seen.observe(ns('c', 'acme'), 'DELETED')).toEqual(['acme']);
    expect(seen.size).toBe(0);
  });
});

describe('organizations in the envelope', () => {
  const msg: ReconcileMessage = { v: 1, cluster: 'c', kind: 'Namespace', name: 'a', type: 'MODIFIED', organizations: ['globex', 'acme'] };
  const roundTrip = (m: object) => decodeMessage(Buffer.from(JSON.stringify(m)));

  it('travel with the message; absent stays absent (not known), [] stays [] (none)', () => {
    expect(decodeMessage(encodeMessage(msg).data)).toEqual({ ok: true, message: msg });
    expect(roundTrip({ ...msg, organizations: [] })).toEqual({ ok: true, message: { ...msg, organizations: [] } });
    const { organizations: _o, ...without } = msg;
    expect(roundTrip(without)).toEqual({ ok: true, message: without });
  });

  it.each([['not a list', 'acme'], ['an empty name', ['']], ['a name longer than a label value', ['x'.repeat(64)]], ['a number', [7]], ['three of them', ['a', 'b', 'c']]])('are dropped when malformed (%s): the message is still taken, as not knowing', (_what, organizations) => {
    const { organizations: _o, ...without } = msg;
    expect(roundTrip({ ...msg, organizations })).toEqual({ ok: true, message: without });
  });
});
