// Compiled rendering (shared/render/compile.ts) must make exactly what the plain way makes
// (render.ts renderObjectDirectly: cloneJson + substituteTokens + placement + checks), never
// hand out a stale or shared result, and never let two contexts share a hash.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { applySetId } from '../../../shared/render/applyset.ts';
import { compiledObject } from '../../../shared/render/compile.ts';
import { interned, isJsonValue } from '../../../shared/render/intern.ts';
import { renderNamespace, renderObject, renderObjectDirectly, renderTarget } from '../../../shared/render/render.ts';
import { compileTokens, substituteTokens, tokenValues } from '../../../shared/render/tokens.ts';
import type { RenderContext } from '../../../shared/render/types.ts';
import { configMap, ctx, template } from './helpers.ts';

const FRAGMENTS = ['$(', '$$(', ')', 'CREATOR', 'NAMESPACE', 'ORGANIZATION', 'ANNOTATION', ':', 'cost', '|', 'none', 'x', '-', ' ', 'USER', '$', '$(CREATOR)', '$(NAMESPACE)', '$(ANNOTATION:cost|none)'];
const text = fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 6 }).map((parts) => parts.join(''));
const tokenValue = fc.constantFrom('', ' ', 'alice', 'team-a', 'ACME', 'a b', '$(NAMESPACE)', 'x'.repeat(70));
const context = fc.record({
  namespace: fc.constantFrom('team-a', 'team-b'),
  creator: tokenValue,
  organization: tokenValue,
  annotations: fc.constantFrom<Record<string, string>>({}, { cost: 'cc-1' }, { cost: 'not valid' }),
});

/** Exact equality, key order and `undefined` members included. */
function same(a: unknown, b: unknown): void {
  expect(a).toStrictEqual(b);
  expect(JSON.stringify(a)).toBe(JSON.stringify(b));
}

function bothWays(raw: KubeObject, c: RenderContext, template = 't') {
  const target = renderTarget(template, c, tokenValues(c), applySetId(c.namespace));
  return { compiled: renderObject(raw, 3, target), direct: renderObjectDirectly(raw, 3, target) };
}

describe('compileTokens', () => {
  it('substitutes exactly as substituteTokens does (property)', () => {
    fc.assert(
      fc.property(text, context, (s, c) => {
        const values = tokenValues(c);
        const compiled = compileTokens(s);
        expect(typeof compiled === 'string' ? compiled : compiled(values)).toBe(substituteTokens(s, values));
      }),
      { numRuns: 2000 },
    );
  });

  it('decides at compile time what no value changes: escapes undone, unknown tokens kept', () => {
    expect(compileTokens('echo $$(HOSTNAME) $(USER)')).toBe('echo $(HOSTNAME) $(USER)');
    expect(typeof compileTokens('x-$(NAMESPACE)')).toBe('function');
  });
});

describe('compiled rendering makes what the plain way makes', () => {
  it('for objects with tokens anywhere, valid or not in the context (property)', () => {
    const object = fc.record({
      name: text,
      label: text,
      namespace: fc.constantFrom(undefined, '', '$(NAMESPACE)', 'team-a', 'ns-$(ORGANIZATION)'),
      data: fc.dictionary(fc.constantFrom('a', 'b', '10', 'c.d'), text, { maxKeys: 3 }),
      list: fc.array(fc.oneof(text, fc.integer(), fc.constant(null), fc.boolean()), { maxLength: 3 }),
      kind: fc.constantFrom('ConfigMap', 'Service', 'RoleBinding'),
    });
    fc.assert(
      fc.property(object, context, (o, c) => {
        const raw = {
          apiVersion: o.kind === 'RoleBinding' ? 'rbac.authorization.k8s.io/v1' : 'v1',
          kind: o.kind,
          metadata: { name: o.name, ...(o.namespace === undefined ? {} : { namespace: o.namespace }), labels: { l: o.label }, annotations: { note: '$(CREATOR)' } },
          data: o.data,
          spec: { list: o.list, nested: [{ deep: { value: o.label } }] },
        } as KubeObject;
        const { compiled, direct } = bothWays(raw, c);
        same(compiled, direct);
      }),
      { numRuns: 1500 },
    );
  });

  it('for shapes it does not compile: a __proto__ key, a sparse array, a token in kind, a label that is not a string', () => {
    const proto = { ...configMap('c'), spec: JSON.parse('{"__proto__": {"x": "$(CREATOR)"}}') } as KubeObject;
    // eslint-disable-next-line no-sparse-arrays -- the shape under test
    const sparse = { ...configMap('c'), spec: { list: ['a', , '$(CREATOR)'] } } as KubeObject;
    const tokenKind = { apiVersion: 'v1', kind: '$(ORGANIZATION)', metadata: { name: 'c' } } as KubeObject;
    const numericLabel = configMap('c', {}, { labels: { n: 1 as unknown as string } });
    for (const raw of [proto, sparse, tokenKind, numericLabel]) {
      expect(compiledObject(raw)).toBeNull();
      const { compiled, direct } = bothWays(raw, ctx);
      same(compiled, direct);
    }
  });

  it('when the template name is not a valid label value (an unvalidated template)', () => {
    const raw = configMap('c', { who: '$(CREATOR)' });
    const { compiled, direct } = bothWays(raw, ctx, 'Not A Label');
    same(compiled, direct);
    expect(compiled.problems.map((p) => p.path)).toEqual([`spec.templates[3].metadata.labels["furnish.dev/template"]`]);
  });
});

describe('the compiled-object cache', () => {
  it('renders an edited template anew: a new template object with the same name gives the new content and a new hash', () => {
    const first = template('t', { objects: [configMap('c', { size: 'small', who: '$(CREATOR)' })] });
    const before = renderNamespace([first], ctx).objects[0]!;
    const edited = structuredClone(first);
    edited.spec.templates![0]!.data = { size: 'large', who: '$(CREATOR)' };
    const after = renderNamespace([edited], ctx).objects[0]!;
    expect(after.object.data).toEqual({ size: 'large', who: 'alice@example.com' });
    expect(after.hash).not.toBe(before.hash);
    // And the old version still renders as it was (the cache holds per object, not per name).
    const again = renderNamespace([first], ctx).objects[0]!;
    expect(again.object.data).toEqual({ size: 'small', who: 'alice@example.com' });
    expect(again.hash).toBe(before.hash);
  });

  it('shares nothing between renders: a changed output never reaches the next render', () => {
    const policy = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'p' }, spec: { podSelector: {}, policyTypes: ['Ingress'] } };
    const tpl = template('t', { objects: [configMap('c', { who: '$(CREATOR)' }, { labels: { a: 'b' }, annotations: { n: 'x' } }), policy] });
    const [first, firstPolicy] = renderNamespace([tpl], ctx).objects.map((o) => o.object) as [KubeObject, KubeObject];
    (firstPolicy.spec as { policyTypes: string[] }).policyTypes.push('Egress');
    (firstPolicy.spec as { podSelector: Record<string, string> }).podSelector.x = 'y';
    (first.metadata.labels as Record<string, string>).a = 'changed';
    (first.metadata.annotations as Record<string, string>).n = 'changed';
    (first.data as Record<string, string>).who = 'changed';
    const [second, secondPolicy] = renderNamespace([tpl], ctx).objects.map((o) => o.object) as [KubeObject, KubeObject];
    expect(secondPolicy.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress'] });
    expect(second.metadata.labels!.a).toBe('b');
    expect(second.metadata.annotations).toEqual({ n: 'x' });
    expect(second.data).toEqual({ who: 'alice@example.com' });
  });

  it('gives each context its own objects and hashes: contexts that differ in one value never share a hash', () => {
    const tpl = template('t', { objects: [configMap('uses', { who: '$(CREATOR)', org: '$(ORGANIZATION)' }), configMap('plain', { size: 'small' })] });
    const contexts: RenderContext[] = [ctx, { ...ctx, creator: 'bob' }, { ...ctx, organization: 'other' }, { ...ctx, namespace: 'team-b' }];
    const renders = contexts.map((c) => renderNamespace([tpl], c).objects);
    for (const i of [0, 1]) {
      const hashes = renders.map((objects) => objects[i]!.hash);
      expect(new Set(hashes).size).toBe(contexts.length);
    }
    expect(renders.map((objects) => objects[0]!.object.data)).toEqual([
      { who: 'alice@example.com', org: 'acme' },
      { who: 'bob', org: 'acme' },
      { who: 'alice@example.com', org: 'other' },
      { who: 'alice@example.com', org: 'acme' },
    ]);
    expect(renders[3]![0]!.object.metadata.namespace).toBe('team-b');
  });

  it('a context that makes an object invalid, then one that does not: each render judged on its own values', () => {
    const tpl = template('t', { objects: [configMap('c', { who: '$(CREATOR)' })] });
    expect(renderNamespace([tpl], { ...ctx, creator: '' }).problems.map((p) => p.path)).toEqual(['spec.templates[0].data.who']);
    expect(renderNamespace([tpl], ctx).problems).toEqual([]);
    expect(renderNamespace([tpl], { ...ctx, creator: '' }).objects).toEqual([]);
  });
});

describe('templates listed afresh (interned)', () => {
  it('knows what JSON gives back unchanged', () => {
    for (const v of ['s', 1, 0, true, null, [], {}, { a: [1, { b: 'c' }] }, JSON.parse('{"__proto__": {"x": 1}}')]) expect(isJsonValue(v)).toBe(true);
    // eslint-disable-next-line no-sparse-arrays -- the shape under test
    for (const v of [NaN, Infinity, -0, undefined, { a: undefined }, [1, , 2], new Date(0), { toJSON: () => 1 }, Object.create(null), () => 1, 1n]) expect(isJsonValue(v)).toBe(false);
  });

  it('answers an equal template with the first one seen, and anything else with itself', () => {
    const first = template('interned-a', { objects: [configMap('c', { who: '$(CREATOR)' })] });
    expect(interned(first)).toBe(first);
    expect(interned(structuredClone(first))).toBe(first);
    const edited = structuredClone(first);
    edited.spec.templates![0]!.data = { who: 'bob' };
    expect(interned(edited)).toBe(edited);
  });

  it('a fresh copy renders exactly as the original', () => {
    const tpl = template('t', { objects: [configMap('c', { who: '$(CREATOR)' }), configMap('d', { who: '$(CREATOR)' })] });
    const original = renderNamespace([tpl], ctx);
    same(renderNamespace([structuredClone(tpl)], ctx), original);
    const blank = { ...ctx, creator: '' };
    same(renderNamespace([structuredClone(tpl)], blank), renderNamespace([tpl], blank));
  });

  it('never stands a template with a value JSON cannot hold for its JSON twin', () => {
    const withNull = template('twins', { objects: [{ ...configMap('c'), spec: { x: null } } as KubeObject] });
    const withNaN = template('twins', { objects: [{ ...configMap('c'), spec: { x: NaN } } as KubeObject] });
    expect(renderNamespace([withNull], ctx).objects[0]!.object.spec).toEqual({ x: null });
    expect(renderNamespace([withNaN], ctx).objects[0]!.object.spec).toEqual({ x: NaN });
  });
});
