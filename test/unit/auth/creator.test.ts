// The recorded creator identity (furnish.dev/creator-identity): readable form-urlencoded text that
// reads back to exactly the identity admission saw, the JSON of earlier versions still read, and
// anything else read as no identity (the reconciler then checks the creator's name alone).
import { describe, expect, it } from '@jest/globals';
import { canonicalIdentity, CREATOR_IDENTITY, creatorIdentityOf, parseIdentity } from '../../../shared/auth/creator.ts';
import type { UserInfo } from '../../../shared/kube/types.ts';

/** What a recorded identity reads back as: lists sorted, empty parts left out. */
function sorted(user: UserInfo): UserInfo {
  const out: UserInfo = { username: user.username ?? '' };
  if (user.uid) out.uid = user.uid;
  if (user.groups?.length) out.groups = [...user.groups].sort();
  const extra = Object.entries(user.extra ?? {}).filter(([, values]) => values.length > 0);
  if (extra.length > 0) out.extra = Object.fromEntries(extra.map(([k, values]) => [k, [...values].sort()]));
  return out;
}

describe('canonicalIdentity: readable form-urlencoded text', () => {
  it('writes user, uid, each group and each extra value as its own parameter, sorted and escaped', () => {
    expect(canonicalIdentity({ username: 'alice@example.com', uid: 'u-1', groups: ['system:authenticated', 'dev'], extra: { scopes: ['write', 'read'] } })).toBe(
      'user=alice%40example.com&uid=u-1&group=dev&group=system%3Aauthenticated&extra.scopes=read&extra.scopes=write',
    );
    expect(canonicalIdentity({ username: 'dora' })).toBe('user=dora');
  });

  it('equal identities are equal strings whatever the order admission saw', () => {
    const a = canonicalIdentity({ username: 'bob', groups: ['b', 'a'], extra: { y: ['2', '1'], x: ['z'] } });
    expect(canonicalIdentity({ extra: { x: ['z'], y: ['1', '2'] }, groups: ['a', 'b'], username: 'bob' })).toBe(a);
  });

  it('round-trips names with &, =, %, +, spaces, commas and unicode, and extra keys with =, &, . and the prefix itself', () => {
    const identities: UserInfo[] = [
      { username: 'a&b=c%d e+f,g', uid: 'uid with spaces', groups: ['x&y', 'p=q', '100%', 'a,b', ' '] },
      { username: 'zoë ☃ 𝄞 名前', groups: ['グループ', 'é'], extra: { 'ключ': ['значение'] } },
      { username: 'carol', groups: [], extra: { 'k=v&w': ['1', '3', '2'], 'a.b.c': ['dot'], 'extra.nested': ['x'], '': ['empty key'], 'v': [''] } },
      { username: 'dave', extra: { '__proto__': ['p'], 'constructor': ['c'], 'toString': ['t'] } },
      { username: 'erin', uid: '', groups: ['g'], extra: { 'reason': ['a', 'a'] } },
    ];
    for (const user of identities) {
      const text = canonicalIdentity(user);
      expect(() => JSON.parse(text) as unknown).toThrow();
      expect(parseIdentity(text)).toEqual(sorted(user));
      // Own keys, so `__proto__` and `constructor` are keys like any other.
      expect(Object.keys(parseIdentity(text)?.extra ?? {}).sort()).toEqual(Object.keys(sorted(user).extra ?? {}).sort());
    }
  });

  it('leaves out what carries nothing: empty groups, uid and extra, and an extra key without values (the form cannot state one)', () => {
    expect(canonicalIdentity({ username: 'alice', uid: '', groups: [], extra: {} })).toBe('user=alice');
    expect(canonicalIdentity({ username: 'alice', extra: { none: [], one: ['1'] } })).toBe('user=alice&extra.one=1');
    expect(canonicalIdentity({})).toBe('user=');
  });

  it('has no size cap of its own, as the JSON had none: a large identity round-trips (the API server bounds annotations)', () => {
    const user = { username: 'big', groups: Array.from({ length: 500 }, (_, i) => `group-${String(i).padStart(3, '0')}`), extra: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`key-${i}`, ['a', 'b']])) };
    expect(parseIdentity(canonicalIdentity(user))).toEqual(sorted(user));
  });
});

describe('parseIdentity', () => {
  it('still reads the canonical JSON earlier versions recorded, so their namespaces keep their identity', () => {
    const legacy = '{"extra":{"scopes":["a","b"]},"groups":["dev","platform"],"uid":"alice-uid","username":"alice"}';
    expect(parseIdentity(legacy)).toEqual({ username: 'alice', uid: 'alice-uid', groups: ['dev', 'platform'], extra: { scopes: ['a', 'b'] } });
    expect(parseIdentity('{"groups":["system:authenticated"],"username":"alice"}')).toEqual({ username: 'alice', groups: ['system:authenticated'] });
    expect(creatorIdentityOf({ 'furnish.dev/creator': 'alice', [CREATOR_IDENTITY]: legacy })).toEqual(parseIdentity(legacy));
  });

  it('reads anything canonicalIdentity did not write as no identity: the reconciler then checks the creator name alone', () => {
    const malformed = [
      '',
      'not an identity',
      'uid=u&group=g', // no user
      'user=alice&user=mallory', // repeated user
      'user=alice&uid=a&uid=b',
      'user=alice&role=admin', // unknown parameter
      'group=dev&user=alice', // out of order
      'user=alice&group=system%3Amasters&group=dev', // unsorted groups
      'user=alice&extra.k=2&extra.k=1', // unsorted values
      'user=alice&uid=', // empty part written
      'user=ali%63e', // escaped where the writer does not escape
      'user=alice%20smith', // %20 where the writer writes +
      'user=alice%2', // broken escape
      '?user=alice',
      'user=alice&',
      '[{"username":"alice"}]',
      '{',
      '{"username":1}',
      '{"groups":["system:masters"]}',
      'null',
    ];
    for (const text of malformed) {
      expect([text, parseIdentity(text)]).toEqual([text, undefined]);
      expect(creatorIdentityOf({ 'furnish.dev/creator': 'alice', [CREATOR_IDENTITY]: text })).toEqual({ username: 'alice' });
    }
    expect(parseIdentity(undefined)).toBeUndefined();
  });

  it('trusts a recorded identity only when it names the recorded creator', () => {
    const identity = canonicalIdentity({ username: 'alice', groups: ['platform'] });
    expect(creatorIdentityOf({ 'furnish.dev/creator': 'alice', [CREATOR_IDENTITY]: identity })).toEqual({ username: 'alice', groups: ['platform'] });
    expect(creatorIdentityOf({ 'furnish.dev/creator': 'bob', [CREATOR_IDENTITY]: identity })).toEqual({ username: 'bob' });
    expect(creatorIdentityOf({ [CREATOR_IDENTITY]: identity })).toBeUndefined();
  });
});
