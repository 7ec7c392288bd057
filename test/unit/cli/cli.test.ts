// The real CLI, spawned as a user runs it (bin/furnish.js on the Node that runs the tests), on
// examples/ and on broken inputs: output, stderr and exit codes.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectUserError, runFurnish, writeUnder, type Run } from './spawn.ts';
import { parseAllDocuments } from 'yaml';
import { KEY } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { applySetId } from '../../../shared/render/applyset.ts';



function furnish(...args: string[]): Promise<Run> {
  return runFurnish(args);
}

function documents(yaml: string): KubeObject[] {
  return parseAllDocuments(yaml).map((d) => (d as { toJS(): KubeObject }).toJS());
}

const namesOf = (objects: KubeObject[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`);

let dir: string;
const file = (name: string, text: string): string => writeUnder(dir, name, text);
const tpl = (name: string, templates: string, extra = ''): string =>
  `apiVersion: furnish.dev/v1alpha1\nkind: NamespaceTemplate\nmetadata:\n  name: ${name}\n${extra}spec:\n  templates:\n${templates}`;
const cm = (name: string, data = 'a: b') => `    - apiVersion: v1\n      kind: ConfigMap\n      metadata: { name: ${name} }\n      data: { ${data} }\n`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'furnish-cli-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('furnish (no command, help, unknown command)', () => {
  it('prints the commands with --help and exits 0', async () => {
    const run = await furnish('--help');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/Usage: furnish <command>/);
    expect(run.stdout).toMatch(/render\s+Print the objects/);
    expect(run.stdout).toMatch(/validate\s+Check NamespaceTemplates/);
  });

  it('prints a command help with --help', async () => {
    const run = await furnish('render', '--help');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/--templates <file\|dir>/);
    expect(run.stdout).toMatch(/--grant-all/);
  });

  it('exits 2 with usage without a command', async () => {
    const run = await furnish();
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/Usage: furnish <command>/);
  });

  it('refuses an unknown command', async () => {
    expectUserError(await furnish('apply'), /^furnish: unknown command "apply"; commands: render, validate/, 2);
  });

  it('refuses an unknown flag', async () => {
    expectUserError(await furnish('render', '--templates', 'examples', '--namespace', 'a', '--lables', 'a=b'), /^furnish render: Unknown option '--lables' \(see furnish render --help\)\n$/, 2);
  });

  it('refuses a stray argument', async () => {
    expectUserError(await furnish('validate', 'examples'), /Unexpected argument 'examples'/, 2);
  });
});

describe('furnish validate', () => {
  it('accepts every example', async () => {
    const run = await furnish('validate', '--templates', 'examples');
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('ok: 3 NamespaceTemplates valid in 3 files\n');
    expect(run.status).toBe(0);
  });

  it('prints file: NamespaceTemplate/name: path: message for each problem and exits 1', async () => {
    const bad = file('bad/one.yaml', tpl('broken', `${cm('Settings')}    - apiVersion: v1\n      kind: Namespace\n      metadata: { name: x }\n`, '  annotations: { furnish.dev/apply: "off" }\n'));
    const run = await furnish('validate', '--templates', bad);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.split('\n')).toEqual([
      `${bad}: NamespaceTemplate/broken: metadata.annotations["furnish.dev/apply"]: must be "disable", found "off"`,
      expect.stringMatching(new RegExp(`^${bad}: NamespaceTemplate/broken: spec.templates\\[0\\].metadata.name: "Settings" is not a valid ConfigMap name`)),
      `${bad}: NamespaceTemplate/broken: spec.templates[1].kind: Namespace is cluster-scoped: a NamespaceTemplate may only hold namespaced objects`,
      '3 problems found',
      '',
    ]);
  });

  it('reads directories recursively (*.yaml, *.yml, *.json), multi-document files and Lists', async () => {
    const base = join(dir, 'tree');
    file('tree/a.yaml', `${tpl('a', cm('a'))}---\n${tpl('b', cm('b'))}---\n`);
    file('tree/sub/c.yml', tpl('c', cm('c')));
    file('tree/sub/deeper/d.json', JSON.stringify({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: 'd' }, spec: { templates: [] } }));
    file('tree/sub/list.yaml', `apiVersion: v1\nkind: List\nitems:\n  - ${JSON.stringify({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: 'e' }, spec: {} })}\n`);
    file('tree/notes.txt', 'not a manifest');
    file('tree/kustomization.yaml', 'resources: [a.yaml]\n');
    const run = await furnish('validate', '--templates', base);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('ok: 5 NamespaceTemplates valid in 4 files\n');
  });

  it('names the file and document of anything that is not a NamespaceTemplate', async () => {
    const mixed = file('mixed.yaml', `${tpl('m', cm('m'))}---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\n---\n- just\n- a list\n`);
    const run = await furnish('validate', '--templates', mixed);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`${mixed}: document 2: v1 ConfigMap is not a NamespaceTemplate\n`);
    expect(run.stderr).toContain(`${mixed}: document 3: a list, not an object is not a NamespaceTemplate\n`);
  });

  it('reports bad YAML with its line and column', async () => {
    // Lines 1-10: a valid template; 11: ---; 14: the error.
    const broken = file('broken.yaml', `${tpl('ok', cm('ok'))}---\nkind: NamespaceTemplate\nmetadata:\n  name: a: b\n`);
    const run = await furnish('validate', '--templates', broken);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(`${broken}:14:9: invalid YAML: Nested mappings are not allowed in compact mappings\n1 problem found\n`);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('reports a missing file and an empty directory', async () => {
    mkdirSync(join(dir, 'empty'), { recursive: true });
    const run = await furnish('validate', '--templates', 'no-such-file.yaml', '--templates', join(dir, 'empty'));
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('no-such-file.yaml: no such file or directory\n');
    expect(run.stderr).toContain(`${join(dir, 'empty')}: directory holds no .yaml, .yml or .json file\n`);
  });

  it('prints its verdict as JSON with -o json, a problem per entry, and exits 1 when invalid', async () => {
    const ok = await furnish('validate', '-f', 'examples', '-o', 'json');
    expect(ok.status).toBe(0);
    const good = JSON.parse(ok.stdout) as { valid: boolean; templates: { name: string; file: string }[]; problems: string[] };
    expect(good.valid).toBe(true);
    expect(good.problems).toEqual([]);
    expect(good.templates.length).toBeGreaterThan(0);
    expect(good.templates.every((t) => t.file.startsWith('examples'))).toBe(true);
    const missing = await furnish('validate', '-f', 'no/such/dir', '-o', 'json');
    expect(missing.status).toBe(1);
    expect(JSON.parse(missing.stdout)).toEqual({ valid: false, templates: [], problems: ['no/such/dir: no such file or directory'] });
  });

  it('refuses two templates with one name', async () => {
    const one = file('dup/one.yaml', tpl('same', cm('a')));
    const two = file('dup/two.yaml', tpl('same', cm('b')));
    const run = await furnish('validate', '--templates', join(dir, 'dup'));
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`${two}: NamespaceTemplate/same: metadata.name: also defined in ${one} (document 1)\n`);
  });

  it('needs --templates', async () => {
    expectUserError(await furnish('validate'), /^furnish validate: missing -f\/--filename/, 2);
  });
});

describe('furnish render', () => {
  const renderExamples = (...args: string[]) => furnish('render', '--templates', 'examples', ...args);

  it('prints the ApplySet parent, then each object after a comment naming its template', async () => {
    const run = await renderExamples('--namespace', 'team-a', '--creator', 'alice@example.com', '--organization', 'acme');
    expect(run.status).toBe(0);
    const objects = documents(run.stdout);
    expect(namesOf(objects)).toEqual([
      'ConfigMap/furnish-applyset',
      'NetworkPolicy/default-deny',
      'NetworkPolicy/allow-dns-egress',
      'NetworkPolicy/allow-same-namespace',
      'RoleBinding/namespace-admin',
      'ResourceQuota/default-quota',
      'LimitRange/default-limits',
      'ConfigMap/team-settings',
    ]);
    const comments = run.stdout.split('\n').filter((l) => l.startsWith('# '));
    expect(comments).toEqual([
      '# ApplySet parent: the inventory of what Furnish applied in this namespace',
      ...Array(6).fill('# from template: security-defaults'),
      '# from template: starter-settings',
    ]);
    for (const o of objects) expect(o.metadata.namespace).toBe('team-a');
    for (const o of objects.slice(1)) expect(o.metadata.labels![KEY.applySetPartOf]).toBe(applySetId('team-a'));
    expect(objects[0]!.metadata.annotations![KEY.applySetGroupKinds]).toBe(
      'ConfigMap,LimitRange,NetworkPolicy.networking.k8s.io,ResourceQuota,RoleBinding.rbac.authorization.k8s.io',
    );
    expect(objects[4]!.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice@example.com' }]);
    expect(objects[7]!.data).toMatchObject({ owner: 'alice@example.com', organization: 'acme', namespace: 'team-a' });
    expect(run.stderr).toBe('skipped NamespaceTemplate/privileged (not-selected): namespace labels do not match selector "namespace-class=privileged"\n');
  });

  it('prints a v1 List with --output json, each item labelled with its template', async () => {
    const run = await renderExamples('--namespace', 'team-a', '-o', 'json');
    expect(run.status).toBe(0);
    const list = JSON.parse(run.stdout) as { apiVersion: string; kind: string; items: KubeObject[] };
    expect([list.apiVersion, list.kind]).toEqual(['v1', 'List']);
    expect(list.items[0]!.metadata.name).toBe('furnish-applyset');
    expect(list.items.slice(1).map((o) => o.metadata.labels![KEY.template])).toEqual(Array(6).fill('security-defaults'));
    // No organization: starter-settings (selects furnish.dev/organization Exists) is skipped.
    expect(run.stderr).toMatch(/skipped NamespaceTemplate\/starter-settings \(not-selected\)/);
  });

  it('skips a template requiring permission unless --granted or --grant-all says so', async () => {
    const privileged = ['--namespace', 'team-a', '--labels', 'namespace-class=privileged'];
    const denied = await renderExamples(...privileged);
    expect(denied.status).toBe(0);
    expect(denied.stderr).toMatch(/skipped NamespaceTemplate\/privileged \(permission-required\): .*\(offline: --granted privileged or --grant-all\)/);
    expect(namesOf(documents(denied.stdout))).not.toContain('RoleBinding/privileged-workloads');
    for (const granted of [['--granted', 'privileged'], ['--grant-all']]) {
      const run = await renderExamples(...privileged, ...granted);
      expect(run.status).toBe(0);
      expect(namesOf(documents(run.stdout))).toContain('RoleBinding/privileged-workloads');
    }
  });

  it('keeps a creator that looks like YAML one string value', async () => {
    const creator = 'a"\nkind: ClusterRoleBinding\n---\nkind: ClusterRole';
    const run = await renderExamples('--namespace', 'team-a', '--creator', creator);
    expect(run.status).toBe(0);
    const objects = documents(run.stdout);
    expect(objects.map((o) => o.kind)).not.toContain('ClusterRoleBinding');
    expect(objects.map((o) => o.kind)).not.toContain('ClusterRole');
    expect(objects.find((o) => o.kind === 'RoleBinding')!.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: creator }]);
  });

  it('prints nothing for an opted-out or a system namespace, and an empty List in JSON', async () => {
    for (const args of [['--namespace', 'team-a', '--annotations', `${KEY.optOut}=true`], ['--namespace', 'kube-system']]) {
      const run = await renderExamples(...args);
      expect(run.status).toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr.trim().split('\n')).toHaveLength(4);
      expect(run.stderr).toMatch(/\((opted-out|system-namespace)\)/);
      expect(run.stderr).toMatch(/^nothing to apply: (team-a is opted out|kube-system is a system namespace)/m);
      const json = await renderExamples(...args, '-o', 'json');
      expect(json.status).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({ apiVersion: 'v1', kind: 'List', metadata: {}, items: [] });
    }
  });

  it('reads templates with -f/--filename, as kubectl does, and still with --templates', async () => {
    const byTemplates = await furnish('render', '--templates', 'examples', '-n', 'team-a');
    expect(byTemplates.status).toBe(0);
    for (const flag of ['-f', '--filename']) expect((await furnish('render', flag, 'examples', '-n', 'team-a')).stdout).toBe(byTemplates.stdout);
  });

  it('warns when a later template overrides an object of an earlier one', async () => {
    file('override/a.yaml', tpl('10-base', cm('settings', 'size: small')));
    file('override/b.yaml', tpl('20-team', cm('settings', 'size: large')));
    const run = await furnish('render', '--templates', join(dir, 'override'), '--namespace', 'team-a');
    expect(run.status).toBe(0);
    const objects = documents(run.stdout);
    expect(objects.map((o) => o.data)).toEqual([undefined, { size: 'large' }]);
    expect(run.stderr).toBe(
      'warning: template "20-team" overrides ConfigMap/settings in namespace "team-a" defined by template "10-base" (the later template by name wins)\n',
    );
  });

  it('refuses invalid templates with their problems and prints no object', async () => {
    const bad = file('render-bad.yaml', tpl('bad', cm('x', 'who: $(USER)')));
    const run = await furnish('render', '--templates', bad, '--namespace', 'team-a');
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(new RegExp(`^${bad}: NamespaceTemplate/bad: spec.templates\\[0\\].data.who: unknown token \\$\\(USER\\)`));
  });

  it('refuses a template that cannot be rendered with these values, naming the value', async () => {
    const org = file('render-org.yaml', tpl('org', cm('settings-$(ORGANIZATION)')));
    const run = await furnish('render', '--templates', org, '--namespace', 'team-a', '--organization', 'ACME');
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/NamespaceTemplate\/org: spec.templates\[0\].metadata.name: "settings-ACME" \(from "settings-\$\(ORGANIZATION\)"\) is not a valid ConfigMap name/);
  });

  it.each([
    [['--namespace', 'Team_A'], /--namespace: invalid namespace name "Team_A"/],
    [[], /missing --namespace/],
    [['--namespace', 'a', '--labels', 'novalue'], /--labels: "novalue" is not key=value/],
    [['--namespace', 'a', '--labels', 'a=b c'], /--labels: invalid value "b c" for "a"/],
    [['--namespace', 'a', '--labels', 'kubernetes.io/metadata.name=b'], /must equal the namespace name "a"/],
    [['--namespace', 'a', '--organization', 'x', '--labels', 'furnish.dev/organization=y'], /--organization and label furnish.dev\/organization disagree/],
    [['--namespace', 'a', '--output', 'xml'], /--output: "xml" is not one of yaml, json/],
  ])('refuses bad flags %p', async (args, message) => {
    expectUserError(await renderExamples(...args), message, 2);
  });

  it('reports a missing template file', async () => {
    expectUserError(await furnish('render', '--templates', 'missing.yaml', '--namespace', 'a'), /^missing.yaml: no such file or directory\n$/, 1);
  });
});
