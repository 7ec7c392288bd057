// Settings rendered into CEL: a value is exactly what the expression compares with, whatever it
// holds (quotes, backslashes, newlines), and matches as the webhooks match it.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { anyPrincipal, str } from '../../../shared/policies/cel.ts';
import { matchesPrincipal } from '../../../shared/webhooks/rules/principals.ts';
import { evaluate, toCelValue } from '../../support/kube-sim/cel.ts';
import { requestOf } from '../../support/kube-sim/policies.ts';
import type { UserInfo } from './harness.ts';

const HOSTILE = ['"', '\\', '\n', '\r', '\t', "'", '`', '*', '.', '(', ')', '[', ']', '{', '}', '^', '$', '|', '?', '+', '\u2028', '\u0000', '\u007f', 'é', '😀', 'a', 'b', ':', ' ', '" || true || "'];
const hostile = fc.array(fc.constantFrom(...HOSTILE), { maxLength: 8 }).map((parts) => parts.join(''));

/** Evaluates with `request` as a real server builds it for this user. */
function asUser(expression: string, user: UserInfo): unknown {
  const request = requestOf({ operation: 'CREATE', userInfo: user, object: null, oldObject: null, namespaceObject: null, resource: { group: '', version: 'v1', resource: 'namespaces' }, name: 'x', kind: { group: '', version: 'v1', kind: 'Namespace' } });
  return evaluate(expression, { request: toCelValue(request) });
}

describe('str', () => {
  it('is a CEL literal of exactly the value, for any string', () => {
    fc.assert(fc.property(fc.oneof(hostile, fc.string({ unit: 'grapheme' })), (value) => {
      expect(evaluate(str(value), {})).toBe(value);
    }));
  });

  it('refuses a value holding an unpaired surrogate, naming it', () => {
    expect(() => str('ab\ud800')).toThrow('cannot write "ab\\ud800" into a policy: it holds an unpaired surrogate (U+D800)');
  });
});

describe('principal patterns', () => {
  it('cannot be broken out of: a pattern holding CEL text matches only that literal name', () => {
    const pattern = '" || true || "';
    expect(asUser(anyPrincipal([pattern]), { username: 'mallory' })).toBe(false);
    expect(asUser(anyPrincipal([pattern]), { username: pattern })).toBe(true);
    expect(asUser(anyPrincipal([`group:${pattern}`]), { username: 'm', groups: ['x'] })).toBe(false);
  });

  it('match exactly as matchesPrincipal (users, groups, trailing *; no user name, no groups)', () => {
    const name = fc.oneof(hostile, fc.constantFrom('alice', 'system:serviceaccount:ci:b', ''));
    const pattern = fc.tuple(fc.boolean(), name, fc.boolean()).map(([group, n, star]) => `${group ? 'group:' : ''}${n}${star ? '*' : ''}`);
    const user = fc.record({ username: fc.option(name, { nil: undefined }), groups: fc.option(fc.array(name, { maxLength: 3 }), { nil: undefined }) }, { requiredKeys: [] });
    fc.assert(fc.property(fc.array(pattern, { maxLength: 3 }), user, (patterns, u) => {
      // The API server leaves an empty user name out of the request, as the webhooks receive it.
      const seen: UserInfo = { ...(u.username ? { username: u.username } : {}), ...(u.groups ? { groups: u.groups } : {}) };
      expect(asUser(anyPrincipal(patterns), seen)).toBe(patterns.some((p) => matchesPrincipal(seen, p)));
    }));
  });
});

