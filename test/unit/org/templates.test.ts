// infra/templates: the organization defaults, rendered as the reconciler would, and the
// $(ANNOTATION:key|default) token they use.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { matchTemplates, renderNamespace, substituteTokens, validateTemplate } from '../../../shared/render/index.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';

const dir = join(import.meta.dirname, '..', '..', '..', 'infra', 'templates');
const templates = (parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')).resources as string[]).map((f) => parse(readFileSync(join(dir, f), 'utf8')) as NamespaceTemplate);
const values = (annotations: Record<string, string>) => ({ CREATOR: 'alice', NAMESPACE: 'team-a', ORGANIZATION: 'acme', annotations });

function render(labels: Record<string, string>, annotations: Record<string, string> = {}) {
  const ns = { name: 'team-a', labels: { 'kubernetes.io/metadata.name': 'team-a', ...labels }, annotations };
  const { matched } = matchTemplates(ns, templates);
  return renderNamespace(matched, { namespace: 'team-a', creator: 'alice', organization: labels['furnish.dev/organization'] ?? '', annotations });
}

describe('$(ANNOTATION:key|default)', () => {
  it('reads the namespace annotation, else the default; never structure or another token', () => {
    const t = 'x-$(ANNOTATION:furnish.dev/quota-pods|50)';
    expect(substituteTokens(t, values({}))).toBe('x-50');
    expect(substituteTokens(t, values({ 'furnish.dev/quota-pods': '200' }))).toBe('x-200');
    for (const hostile of ['1\nkind: ClusterRoleBinding', '$(CREATOR)', '', 'a b', 'x'.repeat(64)]) {
      expect(substituteTokens(t, values({ 'furnish.dev/quota-pods': hostile }))).toBe('x-50');
    }
    expect(substituteTokens('$$(ANNOTATION:a|1)', values({ a: '2' }))).toBe('$(ANNOTATION:a|1)');
  });

  it('is validated at admission: key, default and arguments, each with its path', () => {
    const template = (value: string): NamespaceTemplate => ({
      apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: 't' },
      spec: { templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { v: value } }] },
    });
    expect(validateTemplate(template('$(ANNOTATION:furnish.dev/x|50)'))).toEqual([]);
    const problems = (v: string) => validateTemplate(template(v)).map((p) => `${p.path}: ${p.message}`);
    expect(problems('$(ANNOTATION)')).toEqual(['spec.templates[0].data.v: $(ANNOTATION): write $(ANNOTATION:<annotation key>|<default>)']);
    expect(problems('$(ANNOTATION:bad key!|1)')[0]).toMatch(/^spec\.templates\[0\]\.data\.v: \$\(ANNOTATION:bad key!\|1\): annotation key "bad key!": /);
    expect(problems('$(ANNOTATION:a|two words)')).toEqual([`spec.templates[0].data.v: $(ANNOTATION:a|two words): the default "two words" must be 1 to 63 letters, digits, '.', '-' or '_' (what an annotation value must be to be used)`]);
    expect(problems('$(CREATOR:a|b)')).toEqual(['spec.templates[0].data.v: $(CREATOR:a|b): $(CREATOR) takes no arguments']);
    // A name built from an annotation is checked with the longest value that can be used.
    const named: NamespaceTemplate = { ...template('x'), spec: { templates: [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc-$(ANNOTATION:a|x)' } }] } };
    expect(validateTemplate(named)[0]?.message).toContain('"svc-$(ANNOTATION:a|x)" (once $(ANNOTATION) is a 63-character annotation value) is not a valid Service name');
  });
});

describe('infra/templates', () => {
  it('are valid NamespaceTemplates', () => {
    for (const t of templates) expect(validateTemplate(t)).toEqual([]);
  });

  it('give an organization namespace the admin RoleBinding to the organization\'s Group (Enforce), quota and limits', () => {
    const result = render({ 'furnish.dev/organization': 'acme' });
    expect(result.problems).toEqual([]);
    const byName = Object.fromEntries(result.objects.map((o) => [`${o.object.kind}/${o.object.metadata.name}`, o.object]));
    expect(byName['RoleBinding/organization-admin']).toMatchObject({ roleRef: { kind: 'ClusterRole', name: 'admin' }, subjects: [{ kind: 'Group', name: 'acme' }] });
    expect(templates.find((t) => t.metadata.name === 'organization-admin')!.spec.mode).toBe('Enforce');
    expect(byName['ResourceQuota/organization-quota']).toMatchObject({ spec: { hard: { pods: '50', 'requests.memory': '16Gi' } } });
    expect(byName['LimitRange/organization-limits']).toMatchObject({ spec: { limits: [{ type: 'Container', default: { cpu: '1', memory: '512Mi' } }] } });
  });

  it('the admin RoleBinding follows the organization: after a transfer the same object names the new Group only (finding 16)', () => {
    const binding = (org: string) => render({ 'furnish.dev/organization': org }).objects.find((o) => o.object.kind === 'RoleBinding')!.object;
    expect(binding('globex')).toMatchObject({ metadata: { name: 'organization-admin' }, subjects: [{ kind: 'Group', name: 'globex' }] });
    expect(binding('globex').subjects).toHaveLength(1);
    // Enforce re-applies the subjects a transfer changes; CreateOnly never touched the first organization's again.
    expect(templates.find((t) => t.metadata.name === 'organization-admin')!.spec.mode).not.toBe('CreateOnly');
  });

  it('take per-namespace overrides from annotations', () => {
    const result = render({ 'furnish.dev/organization': 'acme' }, { 'furnish.dev/quota-pods': '200', 'furnish.dev/default-limit-memory': '1Gi' });
    const quota = result.objects.find((o) => o.object.kind === 'ResourceQuota')!.object;
    expect(quota).toMatchObject({ spec: { hard: { pods: '200' } } });
    expect(result.objects.find((o) => o.object.kind === 'LimitRange')!.object).toMatchObject({ spec: { limits: [{ default: { memory: '1Gi' } }] } });
  });

  it('leave namespaces without an organization alone', () => {
    expect(render({}).objects).toEqual([]);
  });
});
