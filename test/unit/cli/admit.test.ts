// `furnish admit`, spawned as a CI pipeline runs it, on AdmissionReviews captured from
// kube-apiserver 1.26 and on cluster directories built here: the printed response, the exit codes
// of --expect, and every bad input refused with a message (exit 1, a wrong command line 2; no stack trace).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectUserError, root, runFurnish, writeUnder, type Run } from './spawn.ts';
import { stringify } from 'yaml';
import type { AdmissionReview } from '../../../shared/admission/types.ts';
import { formatLoadProblem, objectsOf } from '../../../shared/cli/load.ts';
import { KEY } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { admissionFixture, admissionReview, type AdmissionFixtureName } from '../../support/fixtures.ts';

const fixture = (name: AdmissionFixtureName) => join(root, 'test', 'fixtures', 'kube-apiserver-1.26', 'admission', `${name}.json`);
const PRIVILEGED_EXAMPLE = readFileSync(join(root, 'examples', 'privileged.yaml'), 'utf8');

const MUTATE_TEAM_A = '001-mutate-CREATE-namespaces-team-a-alice';
const VALIDATE_PRIV_B = '004-validate-CREATE-namespaces-priv-b-bob';
const TEMPLATE_CREATE = '014-mutate-CREATE-namespacetemplates-default-admin';
const GUARD_ALICE_CONFIGMAP = '021-guard-CREATE-configmaps-app-config-alice';


function furnish(args: string[], input?: string): Promise<Run> {
  return runFurnish(['admit', ...args], input);
}

/** The printed AdmissionReview, after checking it is the only thing on stdout. */
function printed(run: Run): AdmissionReview {
  const review = JSON.parse(run.stdout) as AdmissionReview;
  expect(review).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
  return review;
}

let dir: string;
const file = (name: string, text: string): string => writeUnder(dir, name, text);
const json = (name: string, value: unknown): string => file(name, JSON.stringify(value));

/** RBAC that grants `use` of the privileged template (examples/privileged.yaml), bound cluster-wide to one subject. */
function useGrant(subject: Record<string, string>): KubeObject[] {
  const rbac = 'rbac.authorization.k8s.io';
  return [
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRole',
      metadata: { name: 'furnish-privileged-user' },
      rules: [{ apiGroups: ['furnish.dev'], resources: ['namespacetemplates'], verbs: ['use'], resourceNames: ['privileged'] }],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'furnish-privileged-users' },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'furnish-privileged-user' },
      subjects: [subject],
    },
  ];
}

const multiDocumentYaml = (objects: readonly KubeObject[]): string => objects.map((o) => stringify(o)).join('---\n');
const user = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name });

let privilegedOnly: string;
let privilegedForBob: string;
let privilegedForAlice: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'furnish-admit-'));
  privilegedOnly = join(dir, 'no-rbac');
  file('no-rbac/templates/privileged.yaml', PRIVILEGED_EXAMPLE);
  privilegedForBob = join(dir, 'bob');
  file('bob/templates/privileged.yaml', PRIVILEGED_EXAMPLE);
  file('bob/rbac/use-privileged.yaml', multiDocumentYaml(useGrant(user('bob'))));
  privilegedForAlice = join(dir, 'alice');
  file('alice/templates/privileged.yaml', PRIVILEGED_EXAMPLE);
  file('alice/rbac/use-privileged.yaml', multiDocumentYaml(useGrant(user('alice'))));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('furnish admit: mutate-namespace', () => {
  it('answers a captured CREATE with a JSONPatch recording the creator', async () => {
    const run = await furnish(['--webhook', 'mutate-namespace', '--request', fixture(MUTATE_TEAM_A)]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const { response } = printed(run);
    expect(response).toMatchObject({ uid: admissionReview(MUTATE_TEAM_A).request.uid, allowed: true, patchType: 'JSONPatch' });
    const operations: unknown = JSON.parse(Buffer.from(response!.patch!, 'base64').toString('utf8'));
    // The captured namespace has labels but no annotations: the patch adds the whole map.
    expect(operations).toEqual([
      { op: 'add', path: `/metadata/labels/${KEY.phase.replace('/', '~1')}`, value: 'pending' },
      // The built-in initializer: no NamespaceInitializationConfiguration is given.
      { op: 'add', path: '/metadata/annotations', value: { [KEY.creator]: 'alice', 'furnish.dev/creator-identity': 'user=alice&group=system%3Aauthenticated', 'furnish.dev/initializers': 'furnish' } },
    ]);
  });

  it('reads a bare AdmissionReview from stdin and answers it as the capture', async () => {
    const fromFile = await furnish(['-w', 'mutate-namespace', '-r', fixture(MUTATE_TEAM_A)]);
    const fromStdin = await furnish(['-w', 'mutate-namespace', '-r', '-'], JSON.stringify(admissionFixture(MUTATE_TEAM_A).review));
    expect(fromStdin.status).toBe(0);
    expect(fromStdin.stdout).toBe(fromFile.stdout);
  });
});

describe('furnish admit: validate-namespace with a cluster directory', () => {
  it('denies bob a privileged namespace when no RBAC lets him use the template, naming the verb (exit 1, the response printed)', async () => {
    const run = await furnish(['-w', 'validate-namespace', '-r', fixture(VALIDATE_PRIV_B), '--cluster', privilegedOnly]);
    expect(run.status).toBe(1);
    const { response } = printed(run);
    expect(response).toMatchObject({ uid: admissionReview(VALIDATE_PRIV_B).request.uid, allowed: false, status: { code: 403, reason: 'Forbidden' } });
    expect(response!.status!.message).toMatch(/"bob".*NamespaceTemplate "privileged".*verb "use" on namespacetemplates\.furnish\.dev/);
  });

  it('allows it when a ClusterRoleBinding grants bob `use` of the template', async () => {
    const run = await furnish(['-w', 'validate-namespace', '-r', fixture(VALIDATE_PRIV_B), '--cluster', privilegedForBob]);
    expect(run.status).toBe(0);
    expect(printed(run).response).toEqual({ uid: admissionReview(VALIDATE_PRIV_B).request.uid, allowed: true });
  });

  it('still denies bob when the grant is bound to someone else', async () => {
    const run = await furnish(['-w', 'validate-namespace', '-r', fixture(VALIDATE_PRIV_B), '--cluster', privilegedForAlice]);
    expect(printed(run).response!.allowed).toBe(false);
  });

  it('reads the RBAC from a List (kubectl get -o yaml) and from several --cluster paths', async () => {
    const list = json('list/rbac.json', { apiVersion: 'v1', kind: 'List', items: useGrant({ kind: 'Group', name: 'system:authenticated' }) });
    const run = await furnish(['-w', 'validate-namespace', '-r', fixture(VALIDATE_PRIV_B), '--cluster', join(privilegedOnly, 'templates'), '--cluster', list]);
    expect(run.stderr).toBe('');
    expect(printed(run).response!.allowed).toBe(true);
  });

  it('without --cluster knows no template, so nothing needs permission', async () => {
    const run = await furnish(['-w', 'validate-namespace', '-r', fixture(VALIDATE_PRIV_B)]);
    expect(printed(run).response!.allowed).toBe(true);
    expect(run.stderr).toBe('');
  });

  it('without --cluster refuses every permission check, and says so beside the denial', async () => {
    const review = admissionReview('002-validate-CREATE-namespaces-team-a-alice');
    review.request.object!.metadata.annotations = { [KEY.optOut]: 'true' };
    const run = await furnish(['-w', 'validate-namespace', '-r', json('opt-out.json', review)]);
    expect(run.status).toBe(1);
    expect(printed(run).response!.status!.message).toMatch(/"alice" may not opt namespace "team-a" out .*needs verb "optout"/);
    expect(run.stderr).toBe('furnish admit: note: no --cluster given, so every permission check was refused\n');
  });
});

describe('furnish admit --expect', () => {
  const denied = () => ['-w', 'validate-namespace', '-r', fixture(VALIDATE_PRIV_B), '--cluster', privilegedOnly];

  it('exits 0 when the answer is the expected one', async () => {
    expect((await furnish([...denied(), '--expect', 'denied'])).status).toBe(0);
    expect((await furnish(['-w', 'mutate-namespace', '-r', fixture(MUTATE_TEAM_A), '--expect', 'allowed'])).status).toBe(0);
  });

  it('exits 1 when it is not, still printing the response, and says why on stderr', async () => {
    const run = await furnish([...denied(), '--expect', 'allowed']);
    expect(run.status).toBe(1);
    expect(printed(run).response!.allowed).toBe(false);
    expect(run.stderr).toMatch(/^furnish admit: expected allowed, but the webhook denied the request: user "bob" may not use/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('names the answer when a denial was expected', async () => {
    const run = await furnish(['-w', 'validate-namespace', '-r', fixture(VALIDATE_PRIV_B), '--cluster', privilegedForBob, '--expect', 'denied']);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('furnish admit: expected denied, but the webhook allowed the request\n');
  });
});

describe('furnish admit: validate-template', () => {
  it('allows the captured template', async () => {
    const run = await furnish(['-w', 'validate-template', '-r', fixture(TEMPLATE_CREATE), '--expect', 'allowed']);
    expect(run.status).toBe(0);
  });

  it('denies a broken template with 422, listing the path of every problem', async () => {
    const review = admissionReview(TEMPLATE_CREATE);
    const spec = review.request.object!.spec as Record<string, unknown> & { templates: unknown[] };
    spec.mode = 'Sometimes';
    spec.templates.push({ apiVersion: 'v1', metadata: { name: 'no-kind' } });
    const run = await furnish(['-w', 'validate-template', '-r', json('broken-template.json', review)]);
    expect(run.status).toBe(1);
    const { status } = printed(run).response!;
    expect(status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(status!.message).toMatch(/^NamespaceTemplate "default" is invalid \(2 problems\): /);
    expect(status!.message).toMatch(/spec\.mode: Unsupported value: "Sometimes"/);
    expect(status!.message).toMatch(/spec\.templates\[1\]\.kind: Required value/);
  });
});

describe('furnish admit --config', () => {
  const guard = (...extra: string[]) => furnish(['-w', 'guard-initializing', '-r', fixture(GUARD_ALICE_CONFIGMAP), ...extra]);

  it('judges with the policy settings of the file: a reconciler may write into a pending namespace', async () => {
    expect(printed(await guard()).response!.allowed).toBe(false);
    const config = file('config/alice-reconciles.yaml', 'guard:\n  reconciler: [alice]\n');
    expect(printed(await guard('--config', config)).response!.allowed).toBe(true);
  });

  it('takes a cluster entry of the functions configuration as it is', async () => {
    const entry = { id: 'prod', jwt: { secretEnv: 'JWT_SECRET' }, sarCacheTtlMs: 0, guard: { reconciler: ['alice'] } };
    expect(printed(await guard('--config', json('config/entry.json', entry))).response!.allowed).toBe(true);
  });

  it.each([
    ['systemNamespace: [a]\n', /--config \S+: systemNamespace: is not a policy setting; settings: systemNamespaces, /],
    ['clusters: []\n', /clusters: is not a policy setting; .*\(give one entry of clusters, not the whole configuration\)/],
    ['guard:\n  reconciler: alice\n', /--config \S+: guard\.reconciler: must be a list of strings/],
    ['guard:\n  reconcilers: [alice]\n', /--config \S+: guard\.reconcilers: is not a policy setting/],
    ['- a\n', /--config \S+: must hold a mapping of policy settings/],
    ['a: [\n', /--config \S+:2:1: invalid YAML: /],
  ])('refuses %j', async (text, message) => {
    expectUserError(await guard('--config', file('config/bad.yaml', text)), message, 1);
  });
});

describe('furnish admit: bad input', () => {
  const noUid = (): AdmissionReview => {
    const review: AdmissionReview = admissionReview(MUTATE_TEAM_A);
    delete (review.request as { uid?: string }).uid;
    return review;
  };
  const mutate = (request: string) => furnish(['-w', 'mutate-namespace', '-r', request]);

  it('lists the webhooks for an unknown one', async () => {
    const run = await furnish(['--webhook', 'mutate-namespaces', '--request', fixture(MUTATE_TEAM_A)]);
    expectUserError(run, /^furnish admit: --webhook: unknown webhook "mutate-namespaces"; webhooks: mutate-namespace, validate-namespace, validate-template, guard-initializing, validate-organization, mutate-pod, mutate-lnamespace, protect-objects\n$/, 2);
  });

  it.each([
    [['--request', 'x.json'], /missing --webhook/],
    [['--webhook', 'mutate-namespace'], /missing --request/],
    [['-w', 'mutate-namespace', '-r', 'x.json', '--expect', 'yes'], /--expect: "yes" is not one of allowed, denied/],
    [['-w', 'mutate-namespace', '-r', 'x.json', '--namespace', 'a'], /Unknown option '--namespace'/],
  ])('refuses flags %j', async (args, message) => {
    expectUserError(await furnish(args), message, 2);
  });

  it.each([
    ['a missing file', () => join(dir, 'nope.json'), /--request \S+nope\.json: no such file or directory/],
    ['a directory', () => dir, /--request \S+: is a directory, expected a file/],
    ['an empty file', () => file('req/empty.json', '\n'), /--request \S+: empty, expected an AdmissionReview/],
    ['text that is not JSON', () => file('req/bad.json', '{"kind": "AdmissionReview",'), /--request \S+: not JSON: /],
    ['JSON that is not an AdmissionReview', () => json('req/cm.json', { apiVersion: 'v1', kind: 'ConfigMap' }), /body is not an AdmissionReview: kind is "ConfigMap"/],
    ['a v1beta1 review', () => json('req/beta.json', { ...admissionReview(MUTATE_TEAM_A), apiVersion: 'admission.k8s.io/v1beta1' }), /apiVersion "admission.k8s.io\/v1beta1" is not supported/],
    ['a review without uid', () => json('req/no-uid.json', noUid()), /request\.uid must be a non-empty string, got nothing/],
    ['a review of another resource', () => fixture('005-guard-CREATE-serviceaccounts-default-system_serviceaccount_kube_system_service_account_controller'), /webhook mutate-namespace judges namespaces, not serviceaccounts/],
  ])('refuses %s, with the reason', async (_, request, message) => {
    expectUserError(await mutate(request()), message, 1);
  });

  it('refuses empty stdin', async () => {
    expectUserError(await furnish(['-w', 'mutate-namespace', '-r', '-'], ''), /--request stdin: empty/, 1);
  });

  it('refuses a cluster directory holding something that is not an object, or an invalid template, naming each', async () => {
    file('broken-cluster/notes.yaml', 'just: notes\n');
    file('broken-cluster/templates.yaml', PRIVILEGED_EXAMPLE.replace('mode: Enforce', 'mode: Sometimes'));
    const run = await furnish(['-w', 'validate-namespace', '-r', fixture(VALIDATE_PRIV_B), '--cluster', join(dir, 'broken-cluster')]);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.trimEnd().split('\n')).toEqual([
      `${join(dir, 'broken-cluster', 'notes.yaml')}: document 1: (no apiVersion) (no kind) is not a Kubernetes object (apiVersion and kind are required)`,
      expect.stringMatching(/templates\.yaml: NamespaceTemplate\/privileged: spec\.mode: Unsupported value: "Sometimes"/),
    ]);
  });

  it('refuses a missing cluster directory', async () => {
    const run = await furnish(['-w', 'validate-namespace', '-r', fixture(VALIDATE_PRIV_B), '--cluster', join(dir, 'no-such-dir')]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/no-such-dir: no such file or directory/);
  });
});

// In process: how the cluster directory's documents become the objects admit looks up.
describe('objectsOf', () => {
  const role = (name: string) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace: 'team-a' } });

  it('flattens a List of any kind, as the API server writes it (RoleList)', () => {
    const found = objectsOf({ file: 'f', document: 2, value: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleList', items: [role('a'), role('b')] } });
    expect(found.problems).toEqual([]);
    expect(found.items).toEqual([
      { file: 'f', where: 'document 2, items[0]', object: role('a') },
      { file: 'f', where: 'document 2, items[1]', object: role('b') },
    ]);
  });

  it.each([
    [{ kind: 'Role', metadata: { name: 'a' } }, '(no apiVersion) Role is not a Kubernetes object (apiVersion and kind are required)'],
    [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'a-' } }, 'v1 ConfigMap has no metadata.name'],
    [{ apiVersion: 'v1', kind: 'ConfigMap' }, 'v1 ConfigMap has no metadata.name'],
    ['text', 'a string, not an object is not a Kubernetes object (apiVersion and kind are required)'],
  ])('refuses %j', (value, message) => {
    const found = objectsOf({ file: 'f', document: 1, value });
    expect(found.items).toEqual([]);
    expect(found.problems.map(formatLoadProblem)).toEqual([`f: document 1: ${message}`]);
  });
});

describe('furnish --help', () => {
  it('lists admit among the commands', async () => {
    const run = await runFurnish(['--help']);
    expect(run.stdout).toMatch(/admit\s+Print the AdmissionReview response/);
  });
});

