// Pluggable namespace initializers, end to end: `npm start`'s stack (webhooks registered in the
// test cluster, relay, reconcilers) with README's second initializer, docs/examples/secret-seeder
// (a shell script that, as its ServiceAccount, kubectl-creates a Secret and removes itself), and
// users running kubectl. Runs on kube-sim, or on the real cluster FURNISH_TEST_KUBECONFIG names
// (contexts admin, alice; admin may impersonate; the webhooks listen on this host's loopback).
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { KubeClient } from '../../shared/kube/client.ts';
import { inTreePolicies } from '../../shared/kube/features.ts';
import { silentLogger } from '../../shared/log.ts';
import { startLocalStack, type LocalStack } from '../../scripts/start.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { describeWithTool } from '../support/tools.ts';
import { clientFor, get, waitFor } from '../integration/helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const EXAMPLE = join(ROOT, 'docs', 'examples', 'secret-seeder');
const describeKubectl = describeWithTool('kubectl', 'the initializer end-to-end suite runs kubectl and the example initializer script');
const SEEDER = 'system:serviceaccount:secret-seeder:seeder';
const SEEDER_AS = ['--as', SEEDER, '--as-group', 'system:serviceaccounts', '--as-group', 'system:serviceaccounts:secret-seeder'];
const suffix = process.env.FURNISH_TEST_KUBECONFIG ? `-${Date.now().toString(36).slice(-5)}` : '';
const TWO = `init-two${suffix}`;
const SLOW = `init-slow${suffix}`;
const ONCE_READY = `init-once-ready${suffix}`;
const UNSERVED = `init-unserved${suffix}`;
const STUCK = `init-stuck${suffix}`;
/** The label the example configuration selects: only those namespaces wait for secret-seeder. */
const SERVED = { secrets: 'seeded' };
/** Holds nothing but patch/update on namespaces/status and /finalize (issue 25 finding 6). */
const STATUS_WRITER = 'status-writer';
const REPLICASET_CONTROLLER = ['--as', 'system:serviceaccount:kube-system:replicaset-controller', '--as-group', 'system:serviceaccounts', '--as-group', 'system:serviceaccounts:kube-system'];

let cluster: TestCluster;
let admin: KubeClient;
let stack: LocalStack;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], env: Record<string, string> = {}, input = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const p = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
    p.stdin.end(input);
  });
}

/** kubectl as a context of the test cluster (admin: the current context on a real cluster). */
function kubectlArgs(user: 'admin' | 'alice'): string[] {
  const context = cluster.users[user]?.context;
  return ['--kubeconfig', cluster.kubeconfigPath, ...(context ? ['--context', context] : [])];
}

const kubectl = (user: 'admin' | 'alice', args: string[], input?: string) => run('kubectl', [...kubectlArgs(user), ...args], {}, input);
/** kubectl as the example initializer's ServiceAccount (admin impersonating it). */
const asSeeder = (args: string[], input?: string) => run('kubectl', [...kubectlArgs('admin'), ...SEEDER_AS, ...args], {}, input);
/** kubectl as anyone else, admin impersonating them. */
const as = (who: string[], args: string[], input?: string) => run('kubectl', [...kubectlArgs('admin'), ...who, ...args], {}, input);

async function ok(user: 'admin' | 'alice', args: string[], input?: string): Promise<string> {
  const r = await kubectl(user, args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} as ${user}: ${r.stderr}`);
  return r.stdout;
}

async function metadataOf(ns: string): Promise<{ labels: Record<string, string>; annotations: Record<string, string> }> {
  const o = await get(admin, `/api/v1/namespaces/${ns}`);
  return { labels: o?.metadata.labels ?? {}, annotations: o?.metadata.annotations ?? {} };
}

const pendingOf = async (ns: string) => (await metadataOf(ns)).annotations['furnish.dev/initializers'];
const phaseOf = async (ns: string) => (await metadataOf(ns)).labels['furnish.dev/phase'];

const yaml = (...docs: object[]) => docs.map((d) => stringify(d)).join('---\n');

/** Furnish cannot finish a namespace labelled stall=true: this template holds an object of a kind nobody serves. */
const STALL_TEMPLATE = {
  apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: `e2e-stall${suffix}` },
  spec: { namespaces: { labelSelector: { matchLabels: { stall: 'true' } } }, templates: [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }] },
};
/** A third initializer that never finishes: selected by slow=true, 2 s to live. */
const SLOW_CONFIG = {
  apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceInitializationConfiguration', metadata: { name: `20-e2e-slow${suffix}` },
  spec: { initializers: [{ name: 'slow', principals: [{ kind: 'User', name: 'slow-bot' }], namespaces: { labelSelector: { matchLabels: { slow: 'true' } } }, timeoutSeconds: 2 }] },
};
const USERS_RBAC = [
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'e2e-init-users' }, rules: [
    { apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'get', 'list', 'patch'] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get', 'list'] },
  ] },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'e2e-init-users' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-init-users' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'dev' }] },
  // The namespace subresources, for the seeder and for a user who has nothing else.
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'e2e-init-status' }, rules: [
    { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
    { apiGroups: [''], resources: ['namespaces/status', 'namespaces/finalize'], verbs: ['get', 'patch', 'update'] },
  ] },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'e2e-init-status' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-init-status' }, subjects: [
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: STATUS_WRITER }, { kind: 'ServiceAccount', name: 'seeder', namespace: 'secret-seeder' },
  ] },
  // What the replicaset controller holds on a real cluster (bootstrap RBAC), for kube-sim.
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'e2e-init-replicaset-controller' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['create', 'delete', 'list', 'patch', 'watch'] }] },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'e2e-init-replicaset-controller' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-init-replicaset-controller' }, subjects: [{ kind: 'ServiceAccount', name: 'replicaset-controller', namespace: 'kube-system' }] },
];

beforeAll(async () => {
  cluster = await useTestCluster();
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  admin = await clientFor(cluster.kubeconfigPath, context);
  // A resync every 2 s: how the reconciler notices a timeout with nothing else happening.
  stack = await startLocalStack({ kubeconfigPath: cluster.kubeconfigPath, context, port: 0, relayPort: 0, webhookPort: 0, resyncSeconds: 2, log: silentLogger });
  await ok('admin', ['apply', '-f', join(EXAMPLE, 'secret-seeder.yaml')]);
  await ok('admin', ['apply', '-f', '-'], yaml(STALL_TEMPLATE, SLOW_CONFIG, ...USERS_RBAC));
}, 120_000);

afterAll(async () => {
  if (cluster && !cluster.isSimulated && admin) {
    for (const n of [TWO, SLOW, ONCE_READY, UNSERVED, STUCK]) await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${n}` });
  }
  await stack?.stop();
  if (cluster && !cluster.isSimulated) {
    await kubectl('admin', ['delete', '--ignore-not-found', '-f', '-'], yaml(STALL_TEMPLATE, SLOW_CONFIG, ...USERS_RBAC));
    await kubectl('admin', ['delete', '--ignore-not-found', '-f', join(EXAMPLE, 'secret-seeder.yaml')]);
  }
  admin?.close();
  await cluster?.stop();
}, 60_000);

describeKubectl('two initializers: furnish, then the example secret-seeder', () => {
  it('records both at creation, in order, whatever the request says', async () => {
    const forged = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: TWO, labels: { stall: 'true', ...SERVED }, annotations: { 'furnish.dev/initializers': '' } } };
    await ok('alice', ['create', '-f', '-'], JSON.stringify(forged));
    expect(await pendingOf(TWO)).toBe('furnish,secret-seeder');
    expect(await phaseOf(TWO)).toBe('pending');
    // Furnish tries, and cannot finish (the stall template fails): furnish stays first.
    await waitFor('the stall template to fail in the namespace', async () => (await get(admin, `/api/v1/namespaces/${TWO}/configmaps/furnish-applyset`))?.metadata.annotations?.['furnish.dev/failed-templates']?.includes('e2e-stall'), 30_000);
    // The ApplySet parent is written before the namespace, whose phase then says failed.
    await waitFor('the namespace to say failed', async () => (await phaseOf(TWO)) === 'failed', 30_000);
    expect(await pendingOf(TWO)).toBe('furnish,secret-seeder');
  }, 60_000);

  it('the second initializer cannot write before the first has finished', async () => {
    const r = await asSeeder(['-n', TWO, 'create', 'secret', 'generic', 'early', '--from-literal=a=b']);
    expect(r.code).not.toBe(0);
    // Furnish's stall template failed, so the namespace is `failed` (the reason on it); that opens it
    // to holders of `initialize` for repair, never to an initializer whose turn has not come.
    expect(await phaseOf(TWO)).toBe('failed');
    expect(r.stderr).toContain(`user "${SEEDER}" may not write into it as initializer "secret-seeder", whose turn comes after "furnish"`);
  }, 30_000);

  it('a principal can neither skip the order nor remove another initializer', async () => {
    const skip = await asSeeder(['annotate', 'namespace', TWO, '--overwrite', 'furnish.dev/initializers=furnish']);
    expect(skip.code).not.toBe(0);
    // With in-tree policies (issue 29) furnish-initializer-keys refuses first, without naming the initializer that runs first.
    expect(skip.stderr).toContain(await inTreePolicies(admin)
      ? `user "${SEEDER}" may not change annotation furnish.dev/initializers of namespace "${TWO}" from "furnish,secret-seeder" to "furnish": an initializer may only remove itself, when it is first`
      : `user "${SEEDER}" may not remove initializer "secret-seeder" from namespace "${TWO}": initializer "furnish" runs before it and has not finished`);
    const other = await asSeeder(['annotate', 'namespace', TWO, '--overwrite', 'furnish.dev/initializers=secret-seeder']);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain(`user "${SEEDER}" may not remove initializer "furnish" from namespace "${TWO}": only its principals may`);
    const user = await kubectl('alice', ['annotate', 'namespace', TWO, '--overwrite', 'furnish.dev/initializers=']);
    expect(user.code).not.toBe(0);
    expect(user.stderr).toContain(`user "alice" may not change annotation furnish.dev/initializers of namespace "${TWO}" from "furnish,secret-seeder" to "": an initializer may only remove itself, when it is first`);
    expect(await pendingOf(TWO)).toBe('furnish,secret-seeder');
  }, 30_000);

  // Issue 25 finding 6: status and finalize keep metadata changes, so they are judged like the namespace.
  it('nobody skips an initializer through namespaces/status or namespaces/finalize', async () => {
    const remove = JSON.stringify([{ op: 'remove', path: '/metadata/annotations/furnish.dev~1initializers' }]);
    const status = await as(['--as', STATUS_WRITER], ['patch', 'namespace', TWO, '--subresource=status', '--type=json', '-p', remove]);
    expect(status.code).not.toBe(0);
    expect(status.stderr).toContain(`user "${STATUS_WRITER}" may not change annotation furnish.dev/initializers of namespace "${TWO}" from "furnish,secret-seeder" to null: an initializer may only remove itself, when it is first`);
    const stored = JSON.parse(await ok('admin', ['get', 'namespace', TWO, '-o', 'json'])) as { metadata: { annotations: Record<string, string> } };
    delete stored.metadata.annotations['furnish.dev/initializers'];
    const finalize = await as(['--as', STATUS_WRITER], ['replace', '--raw', `/api/v1/namespaces/${TWO}/finalize`, '-f', '-'], JSON.stringify(stored));
    expect(finalize.code).not.toBe(0);
    expect(finalize.stderr).toContain('an initializer may only remove itself, when it is first');
    expect(await pendingOf(TWO)).toBe('furnish,secret-seeder');
  }, 30_000);

  // Issue 25 finding 7: holding `initialize` does not open a namespace; only Furnish sets the phase.
  it('the seeder, whose turn has not come, cannot set phase=ready, directly or through namespaces/status', async () => {
    const direct = await asSeeder(['label', 'namespace', TWO, '--overwrite', 'furnish.dev/phase=ready']);
    expect(direct.code).not.toBe(0);
    expect(direct.stderr).toContain(`user "${SEEDER}" may not change label furnish.dev/phase from "failed" to "ready" on namespace "${TWO}": only Furnish sets the phase`);
    const viaStatus = await asSeeder(['patch', 'namespace', TWO, '--subresource=status', '--type=merge', '-p', '{"metadata":{"labels":{"furnish.dev/phase":"ready"}}}']);
    expect(viaStatus.code).not.toBe(0);
    expect(viaStatus.stderr).toContain(`user "${SEEDER}" may not change label furnish.dev/phase from "failed" to "ready" on namespace "${TWO}": only Furnish sets the phase`);
    // Nor the Ready condition that kubectl wait --for=condition=Ready reads.
    const readyCondition = await asSeeder(['patch', 'namespace', TWO, '--subresource=status', '--type=strategic', '-p', '{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Ready","message":"trust me"}]}}']);
    expect(readyCondition.code).not.toBe(0);
    expect(readyCondition.stderr).toContain(`user "${SEEDER}" may not change the Ready condition of namespace "${TWO}"`);
    // Nor a second Ready condition beside Furnish's (the server keeps both; readers may take either).
    const second = await asSeeder(['patch', 'namespace', TWO, '--subresource=status', '--type=json', '-p', '[{"op":"add","path":"/status/conditions/-","value":{"type":"Ready","status":"True","reason":"Ready","message":"trust me"}}]']);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(`user "${SEEDER}" may not change the Ready condition of namespace "${TWO}"`);
    // Nor one whose type differs in case only: kubectl wait takes `ready` for Ready (EqualFold).
    const cased = await asSeeder(['patch', 'namespace', TWO, '--subresource=status', '--type=json', '-p', '[{"op":"add","path":"/status/conditions/0","value":{"type":"ready","status":"True"}}]']);
    expect(cased.code).not.toBe(0);
    expect(cased.stderr).toContain(`user "${SEEDER}" may not change the Ready condition of namespace "${TWO}"`);
    expect(await phaseOf(TWO)).toBe('failed');
  }, 30_000);

  it('once furnish has finished, the second initializer writes; the user still waits for it', async () => {
    await ok('admin', ['label', 'namespace', TWO, 'stall-']);
    await waitFor('furnish to remove itself', async () => (await pendingOf(TWO)) === 'secret-seeder', 30_000);
    expect(await phaseOf(TWO)).toBe('pending');
    const refused = await kubectl('alice', ['-n', TWO, 'create', 'configmap', 'app', '--from-literal=a=b']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('while initializer "secret-seeder" is working (pending: secret-seeder): only its principals may (ServiceAccount secret-seeder/seeder)');
  }, 60_000);

  it('the example script creates its Secret as its ServiceAccount, removes itself, and the namespace is ready', async () => {
    const kubectlAsSeeder = ['kubectl', ...kubectlArgs('admin'), ...SEEDER_AS].join(' ');
    const script = await run(join(EXAMPLE, 'secret-seeder.sh'), [TWO], { KUBECTL: kubectlAsSeeder });
    expect(script.stderr).toBe('');
    expect(script.code).toBe(0);
    const secret = await get(admin, `/api/v1/namespaces/${TWO}/secrets/app-credentials`);
    expect(secret?.metadata.managedFields).toEqual(expect.arrayContaining([expect.objectContaining({ manager: 'kubectl-create' })]));
    // mutate-namespace set the phase on the very update that emptied the list.
    expect(await metadataOf(TWO)).toMatchObject({ labels: { 'furnish.dev/phase': 'ready' }, annotations: { 'furnish.dev/initializers': '' } });
    // And the reconciler, told of that update, raises the Ready condition kubectl wait reads (no resync runs here).
    await ok('admin', ['wait', '--for=condition=Ready', `namespace/${TWO}`, '--timeout=20s']);
    await ok('alice', ['-n', TWO, 'create', 'configmap', 'app', '--from-literal=a=b']);
  }, 60_000);
});

describeKubectl('a timeout', () => {
  it('marks the namespace failed, naming the initializer, and keeps it closed', async () => {
    await ok('alice', ['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: SLOW, labels: { slow: 'true', ...SERVED } } }));
    expect(await pendingOf(SLOW)).toBe('furnish,secret-seeder,slow');
    await waitFor('furnish to finish', async () => (await pendingOf(SLOW)) === 'secret-seeder,slow', 30_000);
    const script = await run(join(EXAMPLE, 'secret-seeder.sh'), [SLOW], { KUBECTL: ['kubectl', ...kubectlArgs('admin'), ...SEEDER_AS].join(' ') });
    expect(script.code).toBe(0);
    await waitFor('the timeout to fail the namespace', async () => (await phaseOf(SLOW)) === 'failed', 30_000);
    expect((await metadataOf(SLOW)).annotations).toMatchObject({ 'furnish.dev/initializers': 'slow', 'furnish.dev/failure': 'slow: did not finish within 2s of the namespace\'s creation' });
    const refused = await kubectl('alice', ['-n', SLOW, 'create', 'configmap', 'app', '--from-literal=a=b']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`which failed to initialize (slow: did not finish within 2s of the namespace's creation)`);
  }, 90_000);
});

// Issue 25 finding 10: a namespace that was ready keeps its workloads running when it turns failed.
describeKubectl('a ready namespace that turns failed', () => {
  it('the replicaset controller still creates Pods in it; the tenant is refused', async () => {
    await ok('alice', ['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ONCE_READY, labels: SERVED } }));
    await waitFor('furnish to finish', async () => (await pendingOf(ONCE_READY)) === 'secret-seeder', 30_000);
    const script = await run(join(EXAMPLE, 'secret-seeder.sh'), [ONCE_READY], { KUBECTL: ['kubectl', ...kubectlArgs('admin'), ...SEEDER_AS].join(' ') });
    expect(script.code).toBe(0);
    expect(await phaseOf(ONCE_READY)).toBe('ready');
    // A template change that cannot be applied: the namespace turns failed.
    await ok('admin', ['label', 'namespace', ONCE_READY, 'stall=true']);
    await waitFor('the namespace to fail', async () => (await phaseOf(ONCE_READY)) === 'failed', 30_000);
    const pod = await as(REPLICASET_CONTROLLER, ['-n', ONCE_READY, 'run', 'web-1', '--image=registry.k8s.io/pause:3.9', '--restart=Never']);
    expect(pod.stderr).toBe('');
    expect(pod.code).toBe(0);
    const tenant = await kubectl('alice', ['-n', ONCE_READY, 'create', 'configmap', 'app', '--from-literal=a=b']);
    expect(tenant.code).not.toBe(0);
    expect(tenant.stderr).toContain(`user "alice" may not write into namespace "${ONCE_READY}", which failed to initialize (template ${STALL_TEMPLATE.metadata.name}: `);
  }, 90_000);
});

describeKubectl('NamespaceInitializationConfiguration objects', () => {
  it('an invalid one is refused at admission, every problem with its path', async () => {
    const name = `e2e-bad${suffix}`;
    const bad = { ...SLOW_CONFIG, metadata: { name }, spec: { initializers: [{ name: 'furnish', principals: [{ kind: 'Robot', name: 'r2' }] }] } };
    const r = await kubectl('admin', ['apply', '-f', '-'], yaml(bad));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`NamespaceInitializationConfiguration "${name}" is invalid (2 problems): spec.initializers[0].name: "furnish" is Furnish's own template population, the built-in first initializer; it cannot be redefined; spec.initializers[0].principals[0].kind: must be one of User, Group, ServiceAccount, not "Robot"`);
  }, 30_000);

  it('the example selects only the namespaces it serves: another is furnished without waiting for it', async () => {
    await ok('alice', ['create', 'namespace', UNSERVED]);
    expect(await pendingOf(UNSERVED)).not.toContain('secret-seeder');
    await waitFor('the namespace to be ready', async () => (await phaseOf(UNSERVED)) === 'ready', 30_000);
  }, 60_000);

  it('kubectl get lists them with their initializers (short name nsinit)', async () => {
    const out = await ok('admin', ['get', 'nsinit', '10-secret-seeder']);
    // The server's Table (kube-sim's too): the CRD's printer column.
    expect(out).toMatch(/^NAME\s+INITIALIZERS\s+AGE\n10-secret-seeder\s+secret-seeder\s+/);
  }, 30_000);
});

// The example's own comment: a namespace it holds is released by hand, as the initializer while its
// configuration exists, and by a holder of `initialize` once the configuration is deleted (issue 28).
describeKubectl('releasing a namespace the example initializer holds, by hand', () => {
  it('deleting the configuration does not release it; an administrator then removes the initializer and it turns ready', async () => {
    await ok('alice', ['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: STUCK, labels: SERVED } }));
    await waitFor('furnish to finish', async () => (await pendingOf(STUCK)) === 'secret-seeder', 30_000);
    const early = await kubectl('admin', ['annotate', 'namespace', STUCK, '--overwrite', 'furnish.dev/initializers=']);
    expect(early.code).not.toBe(0);
    expect(early.stderr).toContain('may not remove initializer "secret-seeder"');
    await ok('admin', ['delete', 'nsinit', '10-secret-seeder']);
    expect(await pendingOf(STUCK)).toBe('secret-seeder');
    expect(await phaseOf(STUCK)).toBe('pending');
    await ok('admin', ['annotate', 'namespace', STUCK, '--overwrite', 'furnish.dev/initializers=']);
    await waitFor('the namespace to be ready', async () => (await phaseOf(STUCK)) === 'ready', 30_000);
  }, 90_000);
});
