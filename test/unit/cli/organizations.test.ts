// `furnish render` and `furnish admit` with --organizations: a platform team previews, offline,
// who may create what.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { stringify } from 'yaml';
import type { AdmissionReview } from '../../../shared/admission/types.ts';
import { decodePatch } from '../../../shared/admission/response.ts';
import { namespaceRequest } from '../../support/organizations.ts';
import { expectUserError, root, runFurnish, writeUnder } from './spawn.ts';

const ORGS = join(root, 'test', 'fixtures', 'organizations', 'organizations.yaml');
const TEMPLATES = join(root, 'infra', 'templates');
const dir = mkdtempSync(join(tmpdir(), 'furnish-org-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const review = (name: string, request: ReturnType<typeof namespaceRequest>) => writeUnder(dir, name, JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request }));
const response = (stdout: string) => (JSON.parse(stdout) as AdmissionReview).response!;

describe('furnish render --organizations', () => {
  it('renders alice\'s namespace in her default organization, with the organization defaults', async () => {
    const run = await runFurnish(['render', '--templates', TEMPLATES, '-n', 'team-a', '--creator', 'alice', '--organizations', ORGS]);
    expect(run.status).toBe(0);
    expect(run.stderr).toContain('organization "acme": default organization of "alice"');
    expect(run.stdout).toContain('kind: RoleBinding');
    expect(run.stdout).toMatch(/subjects:\n\s+- apiGroup: rbac.authorization.k8s.io\n\s+kind: Group\n\s+name: acme/);
  });

  it('refuses as admission would: no default organization, or not a member', async () => {
    expectUserError(await runFurnish(['render', '--templates', TEMPLATES, '-n', 'x', '--creator', 'mallory', '--organizations', ORGS]), /user "mallory" has no default organization among --organizations/, 1);
    expectUserError(await runFurnish(['render', '--templates', TEMPLATES, '-n', 'x', '--creator', 'bob', '--organization', 'acme', '--organizations', ORGS]), /user "bob" is not a member of organization "acme": admission would refuse the namespace/, 1);
  });

  it('refuses an invalid organizations file with every problem and its path', async () => {
    const bad = writeUnder(dir, 'bad.yaml', stringify({ apiVersion: 'furnish.dev/v1alpha1', kind: 'Organization', metadata: { name: 'x' }, spec: { namespaceQuota: -2, members: [{ kind: 'Robot', name: 'r' }] } }));
    expectUserError(await runFurnish(['render', '--templates', TEMPLATES, '-n', 'x', '--organizations', bad]), /Organization\/x: spec.members\[0\].kind: Unsupported value: "Robot".*\n.*Organization\/x: spec.namespaceQuota: must be a non-negative integer, found -2/, 1);
  });
});

describe('furnish admit --organizations', () => {
  it('mutate-namespace sets alice\'s default organization; validate-namespace refuses bob in acme', async () => {
    const mutate = await runFurnish(['admit', '-w', 'mutate-namespace', '-r', review('m.json', namespaceRequest({ webhook: 'mutate', user: { username: 'alice' } })), '--organizations', ORGS]);
    expect(mutate.status).toBe(0);
    expect(decodePatch(response(mutate.stdout))).toContainEqual({ op: 'add', path: '/metadata/labels/furnish.dev~1organization', value: 'acme' });
    const bob = namespaceRequest({ user: { username: 'bob' }, labels: { 'furnish.dev/organization': 'acme' } });
    const refused = await runFurnish(['admit', '-w', 'validate-namespace', '-r', review('v.json', bob), '--organizations', ORGS, '--expect', 'denied']);
    expect(refused.status).toBe(0);
    expect(response(refused.stdout).status?.message).toContain('user "bob" may not create namespace "team-a" into organization "acme": not a member');
  });

  it('without --organizations, organization rules are off as before', async () => {
    const bob = namespaceRequest({ user: { username: 'bob' }, labels: { 'furnish.dev/organization': 'acme' } });
    expect((await runFurnish(['admit', '-w', 'validate-namespace', '-r', review('v2.json', bob), '--expect', 'allowed'])).status).toBe(0);
  });
});
