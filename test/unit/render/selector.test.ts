// Label selectors behave as k8s.io/apimachinery/pkg/labels does: the cases follow its selector
// tests (matching, string form) and metav1 ValidateLabelSelector (what is refused).
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { StringMap } from '../../../shared/kube/types.ts';
import { matchesSelector, parseSelector, selectorToString, type CompiledSelector } from '../../../shared/render/selector.ts';

function compile(sel: unknown): CompiledSelector {
  const parsed = parseSelector(sel);
  if (!parsed.ok) throw new Error(`expected a valid selector: ${JSON.stringify(parsed.problems)}`);
  return parsed.selector;
}

const req = (key: string, operator: string, values?: string[]) => ({ key, operator, ...(values ? { values } : {}) });

describe('matchesSelector', () => {
  const cases: [string, unknown, StringMap, boolean][] = [
    ['{} selects a namespace without labels', {}, {}, true],
    ['{} selects any labels', {}, { x: 'y' }, true],
    ['null selects everything', null, { x: 'y' }, true],
    ['undefined selects everything', undefined, {}, true],
    ['empty lists select everything', { matchLabels: {}, matchExpressions: [] }, { a: 'b' }, true],
    ['matchLabels equal', { matchLabels: { x: 'y' } }, { x: 'y' }, true],
    ['matchLabels other value', { matchLabels: { x: 'y' } }, { x: 'z' }, false],
    ['matchLabels missing key', { matchLabels: { x: 'y' } }, {}, false],
    ['matchLabels are ANDed', { matchLabels: { x: 'y', z: 'w' } }, { x: 'y', z: 'w' }, true],
    ['matchLabels are ANDed (one missing)', { matchLabels: { x: 'y', z: 'w' } }, { x: 'y' }, false],
    ['matchLabels empty value requires the key', { matchLabels: { x: '' } }, { x: '' }, true],
    ['matchLabels empty value, key missing', { matchLabels: { x: '' } }, {}, false],
    ['In: value in set', { matchExpressions: [req('x', 'In', ['y', 'z'])] }, { x: 'z' }, true],
    ['In: value not in set', { matchExpressions: [req('x', 'In', ['y', 'z'])] }, { x: 'a' }, false],
    ['In: missing key', { matchExpressions: [req('x', 'In', ['y'])] }, { y: 'y' }, false],
    ['NotIn: other value', { matchExpressions: [req('x', 'NotIn', ['y'])] }, { x: 'z' }, true],
    ['NotIn: value in set', { matchExpressions: [req('x', 'NotIn', ['y', 'z'])] }, { x: 'y' }, false],
    ['NotIn: a missing key satisfies it', { matchExpressions: [req('x', 'NotIn', ['y'])] }, {}, true],
    ['Exists: present', { matchExpressions: [req('x', 'Exists')] }, { x: 'anything' }, true],
    ['Exists: present with empty value', { matchExpressions: [req('x', 'Exists')] }, { x: '' }, true],
    ['Exists: missing', { matchExpressions: [req('x', 'Exists')] }, { y: 'x' }, false],
    ['Exists with values: []', { matchExpressions: [{ key: 'x', operator: 'Exists', values: [] }] }, { x: '1' }, true],
    ['DoesNotExist: missing', { matchExpressions: [req('x', 'DoesNotExist')] }, { y: 'z' }, true],
    ['DoesNotExist: present', { matchExpressions: [req('x', 'DoesNotExist')] }, { x: '' }, false],
    [
      'matchLabels AND matchExpressions: all hold',
      { matchLabels: { env: 'prod' }, matchExpressions: [req('tier', 'In', ['web', 'api']), req('legacy', 'DoesNotExist')] },
      { env: 'prod', tier: 'api' },
      true,
    ],
    [
      'matchLabels AND matchExpressions: one fails',
      { matchLabels: { env: 'prod' }, matchExpressions: [req('tier', 'In', ['web', 'api']), req('legacy', 'DoesNotExist')] },
      { env: 'prod', tier: 'api', legacy: 'true' },
      false,
    ],
    ['prefixed keys', { matchLabels: { 'furnish.dev/organization': 'acme' } }, { 'furnish.dev/organization': 'acme' }, true],
    ['inherited properties are not labels (Exists)', { matchExpressions: [req('constructor', 'Exists')] }, {}, false],
    ['inherited properties are not labels (DoesNotExist)', { matchExpressions: [req('toString', 'DoesNotExist')] }, {}, true],
  ];

  it.each(cases)('%s', (_name, sel, labels, expected) => {
    expect(matchesSelector(compile(sel), labels)).toBe(expected);
  });

  it('compiles once and matches many label sets with the same answer as a fresh compile', () => {
    const sel = { matchLabels: { env: 'prod' }, matchExpressions: [req('tier', 'NotIn', ['db'])] };
    const compiled = compile(sel);
    const labelSets: StringMap[] = [{ env: 'prod' }, { env: 'prod', tier: 'db' }, { env: 'dev' }, { env: 'prod', tier: 'web' }];
    expect(labelSets.map((l) => matchesSelector(compiled, l))).toEqual([true, false, false, true]);
    expect(labelSets.map((l) => matchesSelector(compile(sel), l))).toEqual([true, false, false, true]);
  });

  it('ignores labels the selector does not mention', () => {
    const sel = compile({ matchLabels: { a: 'x' }, matchExpressions: [req('b', 'NotIn', ['y']), req('c', 'DoesNotExist'), req('d', 'Exists')] });
    const label = fc.stringMatching(/^[a-z]{2,8}$/);
    fc.assert(
      fc.property(fc.dictionary(label, fc.stringMatching(/^[a-z0-9]{0,8}$/)), fc.dictionary(label, fc.stringMatching(/^[a-z0-9]{0,8}$/)), (base, extra) => {
        const before = matchesSelector(sel, base);
        return matchesSelector(sel, { ...extra, ...base }) === before;
      }),
    );
  });
});

describe('selectorToString', () => {
  const cases: [string, unknown, string][] = [
    ['everything', {}, ''],
    ['null', null, ''],
    ['matchLabels', { matchLabels: { foo: 'bar' } }, 'foo=bar'],
    ['empty label value', { matchLabels: { foo: '' } }, 'foo='],
    ['sorted by key, values sorted', { matchLabels: { foo: 'bar' }, matchExpressions: [req('baz', 'In', ['qux', 'norf'])] }, 'baz in (norf,qux),foo=bar'],
    ['NotIn', { matchExpressions: [req('env', 'NotIn', ['dev', 'test'])] }, 'env notin (dev,test)'],
    ['Exists and DoesNotExist', { matchExpressions: [req('b', 'DoesNotExist'), req('a', 'Exists')] }, 'a,!b'],
    ['prefixed key', { matchExpressions: [req('furnish.dev/organization', 'Exists')] }, 'furnish.dev/organization'],
  ];
  it.each(cases)('%s', (_name, sel, expected) => {
    expect(selectorToString(compile(sel))).toBe(expected);
  });
});

describe('parseSelector refuses what the API server refuses', () => {
  const long = 'a'.repeat(64);
  const cases: [string, unknown, string, RegExp][] = [
    ['a string', 'env=prod', 'labelSelector', /must be an object/],
    ['a list', [], 'labelSelector', /must be an object/],
    ['misspelt field', { matchLabel: { a: 'b' } }, 'labelSelector.matchLabel', /unknown field/],
    ['matchLabels not an object', { matchLabels: ['a'] }, 'labelSelector.matchLabels', /must be an object/],
    ['matchLabels value not a string', { matchLabels: { a: 1 } }, 'labelSelector.matchLabels.a', /must be a string/],
    ['matchLabels invalid value', { matchLabels: { a: 'b c' } }, 'labelSelector.matchLabels.a', /invalid label value "b c"/],
    ['matchLabels value too long', { matchLabels: { a: long } }, 'labelSelector.matchLabels.a', /no more than 63 characters/],
    ['matchLabels invalid key', { matchLabels: { 'a b': 'c' } }, 'labelSelector.matchLabels["a b"]', /invalid label key "a b": name part must consist/],
    ['key with an invalid prefix', { matchLabels: { 'Example.com/a': 'b' } }, 'labelSelector.matchLabels["Example.com/a"]', /prefix part a lowercase RFC 1123 subdomain/],
    ['key with two slashes', { matchLabels: { 'a/b/c': 'd' } }, 'labelSelector.matchLabels["a/b/c"]', /a qualified name must consist/],
    ['key name part too long', { matchExpressions: [req(long, 'Exists')] }, 'labelSelector.matchExpressions[0].key', /name part must be no more than 63 characters/],
    ['key with an empty name part', { matchExpressions: [req('example.com/', 'Exists')] }, 'labelSelector.matchExpressions[0].key', /name part must be non-empty/],
    ['matchExpressions not a list', { matchExpressions: { key: 'a' } }, 'labelSelector.matchExpressions', /must be a list/],
    ['requirement not an object', { matchExpressions: ['a'] }, 'labelSelector.matchExpressions[0]', /must be an object/],
    ['requirement without key', { matchExpressions: [{ operator: 'Exists' }] }, 'labelSelector.matchExpressions[0].key', /Required value/],
    ['requirement without operator', { matchExpressions: [{ key: 'a' }] }, 'labelSelector.matchExpressions[0].operator', /Required value/],
    ['unknown operator', { matchExpressions: [req('a', 'Equals', ['b'])] }, 'labelSelector.matchExpressions[0].operator', /Unsupported value: "Equals"/],
    ['lower-case operator', { matchExpressions: [req('a', 'in', ['b'])] }, 'labelSelector.matchExpressions[0].operator', /Unsupported value: "in"/],
    ['Gt is not a LabelSelector operator', { matchExpressions: [req('a', 'Gt', ['1'])] }, 'labelSelector.matchExpressions[0].operator', /Unsupported/],
    ['In without values', { matchExpressions: [req('a', 'In')] }, 'labelSelector.matchExpressions[0].values', /must be specified when `operator` is 'In' or 'NotIn'/],
    ['NotIn with empty values', { matchExpressions: [req('a', 'NotIn', [])] }, 'labelSelector.matchExpressions[0].values', /must be specified/],
    ['Exists with values', { matchExpressions: [req('a', 'Exists', ['b'])] }, 'labelSelector.matchExpressions[0].values', /may not be specified when `operator` is 'Exists' or 'DoesNotExist'/],
    ['DoesNotExist with values', { matchExpressions: [req('a', 'DoesNotExist', ['b'])] }, 'labelSelector.matchExpressions[0].values', /may not be specified/],
    ['values not a list', { matchExpressions: [{ key: 'a', operator: 'In', values: 'b' }] }, 'labelSelector.matchExpressions[0].values', /must be a list/],
    ['invalid value in In', { matchExpressions: [req('a', 'In', ['ok', 'not ok'])] }, 'labelSelector.matchExpressions[0].values[1]', /invalid label value "not ok"/],
    ['unknown requirement field', { matchExpressions: [{ key: 'a', operator: 'Exists', value: 'x' }] }, 'labelSelector.matchExpressions[0].value', /unknown field/],
  ];

  it.each(cases)('%s', (_name, sel, path, message) => {
    const parsed = parseSelector(sel);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems).toContainEqual({ path, message: expect.stringMatching(message) });
  });

  it('reports every problem, under the path it is given', () => {
    const parsed = parseSelector({ matchLabels: { a: 'b c' }, matchExpressions: [req('x', 'Foo'), req('y', 'In')] }, 'spec.namespaces.labelSelector');
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems.map((p) => p.path)).toEqual([
      'spec.namespaces.labelSelector.matchLabels.a',
      'spec.namespaces.labelSelector.matchExpressions[0].operator',
      'spec.namespaces.labelSelector.matchExpressions[1].values',
    ]);
  });

  it('accepts the selectors the docs show', () => {
    expect(parseSelector({ matchLabels: { 'app.kubernetes.io/name': 'My_App.v2' } }).ok).toBe(true);
    expect(parseSelector({ matchExpressions: [req('environment', 'In', ['production', 'qa']), req('tier', 'NotIn', ['frontend'])] }).ok).toBe(true);
  });
});
