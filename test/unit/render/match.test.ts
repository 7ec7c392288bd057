import { describe, expect, it } from '@jest/globals';
import { KEY } from '../../../shared/keys.ts';
import { matchTemplates, newlyMatchedTemplates, requiresPermission, templatesNeedingPermission } from '../../../shared/render/match.ts';
import type { NamespaceTemplate, SkipReasonCode } from '../../../shared/render/types.ts';
import { namespace, template } from './helpers.ts';

const names = (templates: readonly NamespaceTemplate[]): string[] => templates.map((t) => t.metadata.name!);
const privileged = { [KEY.requirePermission]: 'true' };

describe('matchTemplates', () => {
  it('returns matched templates sorted by name, whatever the input order', () => {
    const result = matchTemplates(namespace('team-a'), [template('zeta'), template('alpha'), template('Beta'), template('10-base')]);
    // Code-unit order: digits < upper case < lower case; never locale order.
    expect(names(result.matched)).toEqual(['10-base', 'Beta', 'alpha', 'zeta']);
    expect(result.skipped).toEqual([]);
  });

  it('does not modify the array it is given', () => {
    const input = [template('b'), template('a')];
    matchTemplates(namespace('team-a'), input);
    expect(names(input)).toEqual(['b', 'a']);
  });

  const skipCases: [string, Parameters<typeof matchTemplates>, SkipReasonCode, RegExp][] = [
    ['system namespace', [namespace('kube-system'), [template('a')], {}], 'system-namespace', /"kube-system" is a system namespace/],
    ['kube-node-lease', [namespace('kube-node-lease'), [template('a')], {}], 'system-namespace', /system namespace/],
    ['configured system namespace', [namespace('gatekeeper-system'), [template('a')], { systemNamespaces: ['gatekeeper-system'] }], 'system-namespace', /system namespace/],
    ['opted out', [namespace('team-a', {}, { [KEY.optOut]: 'true' }), [template('a')], {}], 'opted-out', /opted out \(annotation furnish.dev\/opt-out: "true"\)/],
    ['template disabled', [namespace('team-a'), [template('a', { annotations: { [KEY.apply]: 'disable' } })], {}], 'template-disabled', /disabled \(annotation furnish.dev\/apply: "disable"\)/],
    ['not selected', [namespace('team-a', { env: 'dev' }), [template('a', { selector: { matchLabels: { env: 'prod' } } })], {}], 'not-selected', /do not match selector "env=prod"/],
    [
      'invalid selector',
      [namespace('team-a'), [template('a', { selector: { matchExpressions: [{ key: 'env', operator: 'Like', values: ['p'] }] } })], {}],
      'invalid-selector',
      /invalid selector, so it selects nothing: spec.namespaces.labelSelector.matchExpressions\[0\].operator: Unsupported value: "Like"/,
    ],
    ['permission not granted', [namespace('team-a'), [template('a', { annotations: privileged })], {}], 'permission-required', /requires permission .* may not use namespacetemplates\/a/],
    ['permission granted for another template', [namespace('team-a'), [template('a', { annotations: privileged })], { granted: (n) => n === 'b' }], 'permission-required', /namespacetemplates\/a/],
  ];

  it.each(skipCases)('skips with a reason: %s', (_name, args, code, message) => {
    const result = matchTemplates(...args);
    expect(result.matched).toEqual([]);
    expect(result.skipped).toEqual([{ template: 'a', code, message: expect.stringMatching(message) }]);
  });

  it('skips every template of a system namespace with the same reason', () => {
    const result = matchTemplates(namespace('kube-public'), [template('b'), template('a', { annotations: { [KEY.apply]: 'disable' } })]);
    expect(result.skipped.map((s) => [s.template, s.code])).toEqual([
      ['a', 'system-namespace'],
      ['b', 'system-namespace'],
    ]);
  });

  it('applies the rules in order: disabled wins over not selected, not selected over permission', () => {
    const both = template('a', { annotations: { [KEY.apply]: 'disable', ...privileged }, selector: { matchLabels: { x: 'y' } } });
    const unselectedPrivileged = template('b', { annotations: privileged, selector: { matchLabels: { x: 'y' } } });
    const result = matchTemplates(namespace('team-a'), [both, unselectedPrivileged]);
    expect(result.skipped.map((s) => s.code)).toEqual(['template-disabled', 'not-selected']);
  });

  it('matches a template requiring permission once it is granted', () => {
    const result = matchTemplates(namespace('team-a'), [template('a', { annotations: privileged }), template('b')], { granted: (n) => n === 'a' });
    expect(names(result.matched)).toEqual(['a', 'b']);
  });

  it('treats opt-out "false" and require-permission "false" as absent', () => {
    const ns = namespace('team-a', {}, { [KEY.optOut]: 'false' });
    const result = matchTemplates(ns, [template('a', { annotations: { [KEY.requirePermission]: 'false' } })]);
    expect(names(result.matched)).toEqual(['a']);
  });

  it('selects by labels with the full selector semantics', () => {
    const tpls = [
      template('prod-only', { selector: { matchLabels: { env: 'prod' } } }),
      template('not-legacy', { selector: { matchExpressions: [{ key: 'legacy', operator: 'DoesNotExist' }] } }),
      template('everyone', { selector: null }),
    ];
    expect(names(matchTemplates(namespace('a', { env: 'prod' }), tpls).matched)).toEqual(['everyone', 'not-legacy', 'prod-only']);
    expect(names(matchTemplates(namespace('b', { env: 'dev', legacy: 'yes' }), tpls).matched)).toEqual(['everyone']);
  });
});

describe('requiresPermission', () => {
  it.each([
    [undefined, false],
    ['false', false],
    ['true', true],
    ['True', true], // fails closed on values validation refuses
    ['', true],
  ])('annotation %p → %p', (value, expected) => {
    const annotations = value === undefined ? undefined : { [KEY.requirePermission]: value };
    expect(requiresPermission(template('a', annotations ? { annotations } : {}))).toBe(expected);
  });
});

describe('templatesNeedingPermission', () => {
  const tpls = [
    template('z-privileged', { annotations: privileged, selector: { matchLabels: { class: 'privileged' } } }),
    template('a-privileged', { annotations: privileged }),
    template('plain'),
    template('disabled-privileged', { annotations: { ...privileged, [KEY.apply]: 'disable' } }),
  ];

  it('lists the selected templates that require permission, sorted by name', () => {
    expect(names(templatesNeedingPermission(namespace('team-a', { class: 'privileged' }), tpls))).toEqual(['a-privileged', 'z-privileged']);
    expect(names(templatesNeedingPermission(namespace('team-a'), tpls))).toEqual(['a-privileged']);
  });

  it('lists none for namespaces that get no template', () => {
    expect(templatesNeedingPermission(namespace('kube-system', { class: 'privileged' }), tpls)).toEqual([]);
    expect(templatesNeedingPermission(namespace('team-a', {}, { [KEY.optOut]: 'true' }), tpls)).toEqual([]);
  });
});

describe('newlyMatchedTemplates', () => {
  const tpls = [
    template('base'),
    template('prod', { selector: { matchLabels: { env: 'prod' } } }),
    template('privileged', { annotations: privileged, selector: { matchLabels: { class: 'privileged' } } }),
  ];

  it('returns the templates a label change makes match', () => {
    const before = namespace('team-a', { env: 'dev' });
    const after = namespace('team-a', { env: 'prod' });
    expect(names(newlyMatchedTemplates(before, after, tpls))).toEqual(['prod']);
  });

  it('returns nothing when the labels do not change what matches', () => {
    const before = namespace('team-a', { env: 'prod' });
    expect(newlyMatchedTemplates(before, namespace('team-a', { env: 'prod', other: 'x' }), tpls)).toEqual([]);
  });

  it('with everything granted, finds newly selected templates that need a permission check', () => {
    const before = namespace('team-a');
    const after = namespace('team-a', { class: 'privileged' });
    expect(newlyMatchedTemplates(before, after, tpls)).toEqual([]);
    const selected = newlyMatchedTemplates(before, after, tpls, { granted: () => true });
    expect(names(selected.filter(requiresPermission))).toEqual(['privileged']);
  });

  it('counts an opt-out being removed as making templates match', () => {
    const before = namespace('team-a', {}, { [KEY.optOut]: 'true' });
    expect(names(newlyMatchedTemplates(before, namespace('team-a'), tpls))).toEqual(['base']);
  });
});
