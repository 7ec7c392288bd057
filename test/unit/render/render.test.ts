import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import { KEY } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { applySetId, applySetParent } from '../../../shared/render/applyset.ts';
import { canonicalJson, contentHash, RENDER_VERSION } from '../../../shared/render/hash.ts';
import { cloneJson } from '../../../shared/render/json.ts';
import { substituteTokens, tokenValues } from '../../../shared/render/tokens.ts';
import { renderNamespace } from '../../../shared/render/render.ts';
import type { RenderContext } from '../../../shared/render/types.ts';
import { configMap, ctx, template } from './helpers.ts';

const only = (objects: KubeObject[]) => renderNamespace([template('t', { objects })], ctx);

describe('renderNamespace: tokens', () => {
  it('replaces the three tokens inside string values, wherever they are', () => {
    const result = only([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'admin', annotations: { note: 'made for $(CREATOR) of $(ORGANIZATION) in $(NAMESPACE)' } },
        subjects: [{ kind: 'User', name: '$(CREATOR)' }],
        roleRef: { kind: 'ClusterRole', name: 'admin' },
      },
    ]);
    expect(result.problems).toEqual([]);
    const rb = result.objects[0]!.object;
    expect(rb.subjects).toEqual([{ kind: 'User', name: 'alice@example.com' }]);
    expect(rb.metadata.annotations).toEqual({ note: 'made for alice@example.com of acme in team-a' });
  });

  it('never replaces tokens in keys: the substitution walk leaves keys alone, and render refuses them', () => {
    const values = tokenValues(ctx);
    expect(cloneJson({ '$(NAMESPACE)': ['$(NAMESPACE)'] }, (s) => substituteTokens(s, values))).toEqual({ '$(NAMESPACE)': ['team-a'] });
    const result = only([configMap('c', { '$(NAMESPACE)': 'x' })]);
    expect(result.objects).toEqual([]);
    expect(result.problems).toEqual([{ template: 't', path: 'spec.templates[0].data["$(NAMESPACE)"]', message: 'tokens are not replaced in keys, only in string values' }]);
  });

  it('leaves lower-case and unterminated look-alikes alone', () => {
    const values = tokenValues(ctx);
    expect(substituteTokens('$(namespace) $(NAMESPACE $NAMESPACE ${NAMESPACE}', values)).toBe('$(namespace) $(NAMESPACE $NAMESPACE ${NAMESPACE}');
  });

  it('keeps a creator that looks like YAML structure one string value', () => {
    const creator = 'a"\nkind: ClusterRoleBinding\nmetadata: {name: x}';
    const result = renderNamespace([template('t', { objects: [configMap('c', { who: '$(CREATOR)' })] })], { ...ctx, creator });
    const object = result.objects[0]!.object;
    expect(object.kind).toBe('ConfigMap');
    expect(object.data).toEqual({ who: creator });
    // And it survives printing as YAML and reading back.
    expect(parse(stringify(object))).toEqual(object);
  });

  it('does not re-scan substituted values: a creator named like a token stays literal', () => {
    const result = renderNamespace([template('t', { objects: [configMap('c', { who: '$(CREATOR)' })] })], { ...ctx, creator: '$(NAMESPACE)' });
    expect(result.objects[0]!.object.data).toEqual({ who: '$(NAMESPACE)' });
  });

  it('turns $$(NAME) into a literal $(NAME), for the kubelet expansion of container args', () => {
    const result = only([configMap('c', { cmd: 'echo $$(POD_NAME) $$(NAMESPACE) $(NAMESPACE)' })]);
    expect(result.objects[0]!.object.data).toEqual({ cmd: 'echo $(POD_NAME) $(NAMESPACE) team-a' });
  });

  it('copies a __proto__ key as data, never as a prototype', () => {
    const data = JSON.parse('{"__proto__": {"polluted": "yes"}}') as Record<string, string>;
    const obj = { ...configMap('c'), spec: data } as KubeObject;
    const rendered = only([obj]).objects[0]!.object;
    expect(Object.getPrototypeOf(rendered.spec)).toBe(Object.prototype);
    expect(Object.keys(rendered.spec as object)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('renderNamespace: placement and labels', () => {
  it('puts every object in the namespace and labels it for its template and the ApplySet', () => {
    const result = only([configMap('c', {}, { labels: { team: 'x' } }), configMap('d', {}, { namespace: '$(NAMESPACE)' })]);
    for (const { object } of result.objects) {
      expect(object.metadata.namespace).toBe('team-a');
      expect(object.metadata.labels).toMatchObject({ [KEY.template]: 't', [KEY.applySetPartOf]: applySetId('team-a') });
    }
    expect(result.objects[0]!.object.metadata.labels!.team).toBe('x');
    expect(result.objects.map((o) => o.key)).toEqual(['/ConfigMap/team-a/c', '/ConfigMap/team-a/d']);
  });

  it('deep-clones: the template is untouched and outputs share nothing', () => {
    const tpl = template('t', { objects: [configMap('c', { who: '$(CREATOR)' }, { labels: { a: 'b' } })] });
    const before = structuredClone(tpl);
    const first = renderNamespace([tpl], ctx).objects[0]!.object;
    const second = renderNamespace([tpl], ctx).objects[0]!.object;
    (first.metadata.labels as Record<string, string>).a = 'changed';
    expect(tpl).toEqual(before);
    expect(second.metadata.labels!.a).toBe('b');
  });

  it('refuses an object that names another namespace; the template contributes nothing, others still render', () => {
    // A literal namespace is refused by validation already; a token can also name another one.
    const other = template('other', { objects: [configMap('ok'), configMap('c', {}, { namespace: 'ns-$(ORGANIZATION)' })] });
    const fine = template('fine', { objects: [configMap('f')] });
    const result = renderNamespace([other, fine], ctx);
    expect(result.objects.map((o) => o.key)).toEqual(['/ConfigMap/team-a/f']);
    expect(result.problems).toEqual([
      { template: 'other', path: 'spec.templates[1].metadata.namespace', message: expect.stringMatching(/^"ns-\$\(ORGANIZATION\)": must be absent or "\$\(NAMESPACE\)"/) },
    ]);
  });

  it('reports a name that is invalid once the real values are in, with what it became', () => {
    const result = renderNamespace([template('t', { objects: [configMap('cfg-$(ORGANIZATION)')] })], { ...ctx, organization: 'ACME' });
    expect(result.objects).toEqual([]);
    expect(result.problems).toEqual([
      { template: 't', path: 'spec.templates[0].metadata.name', message: expect.stringMatching(/^"cfg-ACME" \(from "cfg-\$\(ORGANIZATION\)"\) is not a valid ConfigMap name: a lowercase RFC 1123 subdomain/) },
    ]);
  });

  it('reports a label value that is invalid once the real values are in', () => {
    const result = renderNamespace([template('t', { objects: [configMap('c', {}, { labels: { org: '$(ORGANIZATION)' } })] })], { ...ctx, organization: 'a b' });
    expect(result.problems.map((p) => p.path)).toEqual(['spec.templates[0].metadata.labels.org']);
  });

  it('refuses a template that does not validate, with the validation problems', () => {
    const invalid = template('bad', { objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }] });
    const result = renderNamespace([invalid, template('good')], ctx);
    expect(result.objects.map((o) => o.template)).toEqual(['good']);
    expect(result.problems).toEqual([{ template: 'bad', path: 'spec.templates[0].kind', message: expect.stringContaining('cluster-scoped') }]);
  });
});

describe('renderNamespace: order and overrides', () => {
  it('concatenates objects in template-name order, whatever the input order', () => {
    const a = template('a', { objects: [configMap('a1'), configMap('a2')] });
    const b = template('b', { objects: [configMap('b1')] });
    const result = renderNamespace([b, a], ctx);
    expect(result.objects.map((o) => `${o.template}:${o.object.metadata.name}`)).toEqual(['a:a1', 'a:a2', 'b:b1']);
    expect(result.warnings).toEqual([]);
  });

  it('lets the later template override the same object of an earlier one, with a warning naming both', () => {
    const base = template('10-base', { objects: [configMap('settings', { size: 'small' }), configMap('other')] });
    const custom = template('20-custom', { objects: [configMap('settings', { size: 'large' })] });
    const result = renderNamespace([custom, base], ctx);
    expect(result.objects.map((o) => `${o.template}:${o.object.metadata.name}`)).toEqual(['10-base:other', '20-custom:settings']);
    expect(result.objects[1]!.object.data).toEqual({ size: 'large' });
    expect(result.objects[1]!.object.metadata.labels![KEY.template]).toBe('20-custom');
    expect(result.warnings).toEqual([
      'template "20-custom" overrides ConfigMap/settings in namespace "team-a" defined by template "10-base" (the later template by name wins)',
    ]);
  });

  it('tells apart objects of the same name but another kind or group', () => {
    const a = template('a', {
      objects: [configMap('x'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }, { apiVersion: 'example.com/v1', kind: 'ConfigMap', metadata: { name: 'x' } }],
    });
    const result = renderNamespace([a], ctx);
    expect(result.objects.map((o) => o.key)).toEqual(['/ConfigMap/team-a/x', '/Secret/team-a/x', 'example.com/ConfigMap/team-a/x']);
    expect(result.warnings).toEqual([]);
  });
});

describe('content hash', () => {
  it('hashes the template object before tokens, with the context it renders in: the version, the template object, the values, the annotations it reads', () => {
    const raw = configMap('c', { b: '1', a: '$(CREATOR)' });
    const { hash } = only([raw]).objects[0]!;
    const context = { template: 't', namespace: ctx.namespace, applySetId: applySetId(ctx.namespace), CREATOR: ctx.creator, NAMESPACE: ctx.namespace, ORGANIZATION: ctx.organization };
    expect(hash).toBe(createHash('sha256').update(`${RENDER_VERSION}\n${contentHash(raw)}\n${canonicalJson(context)}\n[]`).digest('hex'));
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('changes with every input rendering reads, and only with those', () => {
    const objects = [configMap('c', { owner: '$(CREATOR)', cost: '$(ANNOTATION:example.com/cost|none)' })];
    const hashOf = (c: RenderContext) => renderNamespace([template('t', { objects })], c).objects[0]!.hash;
    const base = hashOf({ ...ctx, annotations: { 'example.com/cost': 'cc-1' } });
    expect(hashOf({ ...ctx, annotations: { 'example.com/cost': 'cc-1', unrelated: 'x' } })).toBe(base);
    expect(hashOf({ ...ctx, annotations: { 'example.com/cost': 'cc-2' } })).not.toBe(base);
    expect(hashOf({ ...ctx, annotations: {} })).not.toBe(base);
    expect(hashOf({ ...ctx, creator: 'someone-else', annotations: { 'example.com/cost': 'cc-1' } })).not.toBe(base);
    expect(hashOf({ ...ctx, namespace: 'team-b', annotations: { 'example.com/cost': 'cc-1' } })).not.toBe(base);
    expect(renderNamespace([template('u', { objects })], { ...ctx, annotations: { 'example.com/cost': 'cc-1' } }).objects[0]!.hash).not.toBe(base);
  });

  it('equal hashes mean equal rendered objects (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom('a', '$(CREATOR)', '$(NAMESPACE)', 'x-$(ORGANIZATION)'), fc.constantFrom('alice', 'bob'), fc.constantFrom('team-a', 'team-b'), (value, creator, namespace) => {
        const c1 = { ...ctx, creator, namespace };
        const r1 = renderNamespace([template('t', { objects: [configMap('c', { k: value })] })], c1).objects[0]!;
        const r2 = renderNamespace([template('t', { objects: [configMap('c', { k: value })] })], ctx).objects[0]!;
        // An equal hash must mean an equal object; the converse may fail (a token-free object in
        // another creator's namespace renders the same but hashes apart: one needless apply at most).
        return r1.hash !== r2.hash || canonicalJson(r1.object) === canonicalJson(r2.object);
      }),
    );
  });

  it('does not depend on key order, and changes with content', () => {
    const one = only([configMap('c', { a: '1', b: '2' })]).objects[0]!.hash;
    const reordered = only([{ data: { b: '2', a: '1' }, metadata: { name: 'c' }, kind: 'ConfigMap', apiVersion: 'v1' }]).objects[0]!.hash;
    const changed = only([configMap('c', { a: '1', b: '3' })]).objects[0]!.hash;
    expect(reordered).toBe(one);
    expect(changed).not.toBe(one);
  });

  it('canonical JSON sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 'x' }, 2], e: undefined, f: null })).toBe('{"a":[{"c":"x","d":1},2],"b":1,"f":null}');
    expect(contentHash({ a: 1, b: 2 })).toBe(contentHash({ b: 2, a: 1 }));
  });

  it('canonical JSON escapes strings exactly as JSON.stringify does', () => {
    for (const s of ['plain', 'q"uote', 'back\\slash', 'new\nline', '\u0000\u001f', 'lone \ud800 surrogate', 'ünïcødé 🚀']) {
      expect(canonicalJson({ [s]: s })).toBe(JSON.stringify({ [s]: s }));
    }
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });
});

describe('ApplySet', () => {
  it('computes the KEP-3659 id as kubectl does', () => {
    // base64url(sha256("furnish-applyset.team-a.ConfigMap.")), computed independently.
    expect(applySetId('team-a')).toBe('applyset-xcXBx0DsjTL8foGBjnBTWUThEu95_5LmEnE5JwBXKB8-v1');
    const digest = createHash('sha256').update('furnish-applyset.other.ConfigMap.').digest('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    expect(applySetId('other')).toBe(`applyset-${digest}-v1`);
  });

  it('builds the parent ConfigMap with sorted, de-duplicated group-kinds', () => {
    const parent = applySetParent('team-a', [
      { group: 'networking.k8s.io', kind: 'NetworkPolicy' },
      { group: '', kind: 'ConfigMap' },
      { group: 'rbac.authorization.k8s.io', kind: 'RoleBinding' },
      { group: '', kind: 'ConfigMap' },
    ]);
    expect(parent).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'furnish-applyset',
        namespace: 'team-a',
        labels: { [KEY.applySetId]: applySetId('team-a') },
        annotations: {
          [KEY.applySetTooling]: 'furnish/v1alpha1',
          [KEY.applySetGroupKinds]: 'ConfigMap,NetworkPolicy.networking.k8s.io,RoleBinding.rbac.authorization.k8s.io',
        },
      },
    });
  });

  it('comes with every render, listing the kinds rendered (none when nothing matched)', () => {
    const result = renderNamespace([template('a', { objects: [configMap('x'), { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } }] })], ctx);
    expect(result.parent.metadata.annotations![KEY.applySetGroupKinds]).toBe('ConfigMap,Deployment.apps');
    expect(renderNamespace([], ctx).parent.metadata.annotations![KEY.applySetGroupKinds]).toBe('');
  });
});
