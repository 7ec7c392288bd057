// The CLI shows the initializers a namespace would get: `furnish render --initializers` (stderr)
// and `furnish admit --cluster` (mutate-namespace's patch), from the initializers guide's example (docs/guide/initializers.md).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectUserError, root, runFurnish, writeUnder } from './spawn.ts';
import type { AdmissionReview } from '../../../shared/admission/types.ts';

const EXAMPLE = join(root, 'docs', 'examples', 'secret-seeder');
let dir: string;
let vault: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'furnish-cli-init-'));
  vault = writeUnder(dir, 'vault.yaml', [
    'apiVersion: furnish.dev/v1alpha1',
    'kind: NamespaceInitializationConfiguration',
    'metadata: { name: 20-vault }',
    'spec:',
    '  initializers:',
    '    - name: vault-injector',
    '      principals: [{ kind: Group, name: vault-admins }]',
    '      namespaces: { labelSelector: { matchLabels: { vault: "on" } } }',
    '',
  ].join('\n'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const render = (...args: string[]) => runFurnish(['render', '--templates', 'examples', '-n', 'team-a', '--initializers', EXAMPLE, '--initializers', vault, ...args]);

describe('furnish render --initializers', () => {
  it('prints the namespace\'s initializers in order, and why the others are left out', async () => {
    const selected = await render('--labels', 'vault=on,secrets=seeded');
    expect(selected.status).toBe(0);
    expect(selected.stderr).toContain('initializers (furnish.dev/initializers): furnish,secret-seeder,vault-injector\n');
    // The example serves only the namespaces labelled for it: any other is not held for it.
    const plain = await render();
    expect(plain.stderr).toContain('initializers (furnish.dev/initializers): furnish\nskipped initializer secret-seeder (not-selected): namespace labels do not match selector "secrets=seeded"\nskipped initializer vault-injector (not-selected): namespace labels do not match selector "vault=on"\n');
    expect(plain.stdout).toContain('kind: NetworkPolicy');
  });

  it('an opted-out namespace gets none', async () => {
    expect((await render('--annotations', 'furnish.dev/opt-out=true')).stderr).toContain('initializers (furnish.dev/initializers): (none: opted out)\n');
  });

  it('refuses an invalid configuration with its file and path (exit 2)', async () => {
    const bad = writeUnder(dir, 'bad/bad.yaml', 'apiVersion: furnish.dev/v1alpha1\nkind: NamespaceInitializationConfiguration\nmetadata: { name: bad }\nspec: { initializers: [{ name: furnish, principals: [{ kind: User, name: x }] }] }\n');
    const run = await runFurnish(['render', '--templates', 'examples', '-n', 'team-a', '--initializers', bad]);
    expectUserError(run, /bad\.yaml: NamespaceInitializationConfiguration\/bad: spec\.initializers\[0\]\.name: "furnish" is Furnish's own template population/, 1);
  });
});

describe('furnish admit --cluster with a configuration', () => {
  it('mutate-namespace records the initializers a new namespace gets', async () => {
    const request = join(root, 'test', 'fixtures', 'kube-apiserver-1.26', 'admission', '001-mutate-CREATE-namespaces-team-a-alice.json');
    const everyNamespace = writeUnder(dir, 'all/all.yaml', 'apiVersion: furnish.dev/v1alpha1\nkind: NamespaceInitializationConfiguration\nmetadata: { name: 30-audit }\nspec: { initializers: [{ name: audit-log, principals: [{ kind: Group, name: auditors }] }] }\n');
    const initializersOf = async (config: string) => {
      const run = await runFurnish(['admit', '-w', 'mutate-namespace', '-r', request, '--cluster', config]);
      expect(run.status).toBe(0);
      const { response } = JSON.parse(run.stdout) as AdmissionReview;
      const patch = JSON.parse(Buffer.from(response!.patch!, 'base64').toString('utf8')) as { path: string; value: Record<string, string> }[];
      return patch.find((p) => p.path === '/metadata/annotations')?.value;
    };
    expect(await initializersOf(everyNamespace)).toMatchObject({ 'furnish.dev/creator': 'alice', 'furnish.dev/initializers': 'furnish,audit-log' });
    // team-a is not labelled secrets=seeded: the example's seeder does not hold it.
    expect(await initializersOf(EXAMPLE)).toMatchObject({ 'furnish.dev/creator': 'alice', 'furnish.dev/initializers': 'furnish' });
  });
});
