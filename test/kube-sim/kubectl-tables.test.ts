// What a user sees with kubectl (issue 28), the same on kube-sim and on a real kube-apiserver 1.26
// (FURNISH_TEST_KUBECONFIG): `kubectl get` prints Furnish's printer columns and the built-in
// kinds' columns, and `kubectl create -f` of a SubjectAccessReview passes kubectl's default
// (client-side) validation.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { runKubectl, type KubectlRun } from '../support/kubectl.ts';
import { applyCrds } from './tables-helpers.ts';

let cluster: TestCluster;
const suffix = Math.random().toString(36).slice(2, 7);
const template = `tables-${suffix}`;
const namespace = `tables-${suffix}`;

const kubectl = (args: string[], input?: string): Promise<KubectlRun> => runKubectl(cluster.kubeconfigPath, 'admin', args, input);

/** The header line of a `kubectl get` table, split into its column names. */
const header = (run: KubectlRun): string[] => run.stdout.split('\n')[0]!.trim().split(/\s{2,}/);

beforeAll(async () => {
  cluster = await useTestCluster();
  await applyCrds(cluster.kubeconfigPath);
}, 60_000);

afterAll(async () => {
  for (const kind of ['namespacetemplate', 'organization', 'lnamespace', 'namespaceinitializationconfiguration']) {
    await kubectl(['delete', kind, template, '--ignore-not-found', '--wait=false']);
  }
  await kubectl(['delete', 'namespace', namespace, '--ignore-not-found', '--wait=false']);
  await cluster.stop();
});

describe('kubectl get prints the server\'s columns', () => {
  it('a NamespaceTemplate with its printer columns (kubectl create -f with default validation)', async () => {
    const created = await kubectl(['create', '-f', '-'], JSON.stringify({
      apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: template },
      spec: { namespaces: { labelSelector: { matchLabels: { team: suffix } } }, mode: 'CreateOnly', protect: true, templates: [] },
    }));
    expect(created.stderr).toBe('');
    const got = await kubectl(['get', 'nstpl', template]);
    expect(header(got)).toEqual(['NAME', 'MODE', 'PROTECT', 'MATCHED', 'APPLIED', 'FAILED', 'AGE']);
    expect(got.stdout.split('\n')[1]).toMatch(new RegExp(`^${template}\\s+CreateOnly\\s+true\\s+\\S+$`));
  });

  it('Organizations, LNamespaces and initializer configurations with their printer columns', async () => {
    const objects = [
      { apiVersion: 'furnish.dev/v1alpha1', kind: 'Organization', metadata: { name: template }, spec: { namespaceQuota: 3 } },
      { apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', metadata: { name: template }, spec: {} },
      { apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceInitializationConfiguration', metadata: { name: template },
        spec: { initializers: [{ name: 'vault', principals: [{ kind: 'User', name: 'alice' }] }, { name: 'dns', principals: [{ kind: 'User', name: 'bob' }] }] } },
    ];
    for (const obj of objects) expect((await kubectl(['create', '-f', '-'], JSON.stringify(obj))).stderr).toBe('');
    const org = await kubectl(['get', 'org', template]);
    expect(header(org)).toEqual(['NAME', 'NAMESPACES', 'QUOTA', 'AGE']);
    expect(org.stdout.split('\n')[1]).toMatch(new RegExp(`^${template}\\s+3\\s+\\S+$`));
    expect(header(await kubectl(['get', 'lns', template]))).toEqual(['NAME', 'CREATOR', 'USERS', 'MANAGERS', 'SUDOERS', 'READY', 'AGE']);
    const init = await kubectl(['get', 'nsinit', template]);
    expect(header(init)).toEqual(['NAME', 'INITIALIZERS', 'AGE']);
    // The column's JSONPath (.spec.initializers[*].name) shows its first result only, as on the real server.
    expect(init.stdout.split('\n')[1]).toMatch(new RegExp(`^${template}\\s+vault\\s+\\S+$`));
  });

  it('namespaces with STATUS; a RoleBinding -o wide with its subjects; events', async () => {
    expect((await kubectl(['create', 'namespace', namespace])).status).toBe(0);
    const ns = await kubectl(['get', 'namespace', namespace]);
    expect(header(ns)).toEqual(['NAME', 'STATUS', 'AGE']);
    expect(ns.stdout.split('\n')[1]).toMatch(new RegExp(`^${namespace}\\s+Active\\s+\\S+$`));

    const binding = await kubectl(['create', 'rolebinding', 'devs', '-n', namespace, '--clusterrole=edit', '--user=alice', '--group=dev', `--serviceaccount=${namespace}:ci`]);
    expect(binding.status).toBe(0);
    const wide = await kubectl(['get', 'rolebinding', 'devs', '-n', namespace, '-o', 'wide']);
    expect(header(wide)).toEqual(['NAME', 'ROLE', 'AGE', 'USERS', 'GROUPS', 'SERVICEACCOUNTS']);
    expect(wide.stdout.split('\n')[1]).toMatch(new RegExp(`^devs\\s+ClusterRole/edit\\s+\\S+\\s+alice\\s+dev\\s+${namespace}/ci$`));

    const event = await kubectl(['create', '-f', '-'], JSON.stringify({
      apiVersion: 'v1', kind: 'Event', metadata: { name: 'tables.one', namespace },
      involvedObject: { apiVersion: 'v1', kind: 'Namespace', name: namespace, namespace }, reason: 'Applied', message: 'applied 1 object', type: 'Normal',
      source: { component: 'furnish' }, firstTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), count: 1,
    }));
    expect(event.stderr).toBe('');
    const events = await kubectl(['get', 'events', '-n', namespace]);
    expect(header(events)).toEqual(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
    expect(events.stdout).toMatch(new RegExp(`Normal\\s+Applied\\s+namespace/${namespace}\\s+applied 1 object`));
  });
});

describe('kubectl create -f validates with the server\'s OpenAPI', () => {
  it('a SubjectAccessReview', async () => {
    const sar = await kubectl(['create', '-f', '-', '-o', 'json'], JSON.stringify({
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
      spec: { user: 'admin-checker', groups: ['system:masters'], resourceAttributes: { verb: 'list', resource: 'namespaces' } },
    }));
    expect(sar.stderr).toBe('');
    expect(JSON.parse(sar.stdout).status.allowed).toBe(true);
  });

  it('an unknown field in a SubjectAccessReview is refused by kubectl, naming it', async () => {
    const sar = await kubectl(['create', '-f', '-'], JSON.stringify({
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'x', resourceAttribute: { verb: 'list' } },
    }));
    expect(sar.status).not.toBe(0);
    expect(sar.stderr).toMatch(/resourceAttribute/);
  });
});
