// The real kubectl (1.32) driving kube-sim: the commands Furnish's users and tests run.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';
import { describeWithTool } from '../support/tools.ts';

let cluster: SimCluster;
const describeKubectl = describeWithTool('kubectl', 'kube-sim must be driven by the real kubectl');
let work: string;

/**
 * Runs kubectl with kube-sim's kubeconfig and a private discovery cache. Asynchronously: kube-sim
 * runs in this process, and a blocking spawn would starve it.
 */
function kubectl(args: string[], context = 'admin'): Promise<{ status: number; stdout: string; stderr: string }> {
  const child = spawn('kubectl', ['--kubeconfig', cluster.kubeconfigPath, '--context', context, '--cache-dir', join(work, 'cache'), ...args]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  return new Promise((resolve) => child.on('close', (status) => resolve({ status: status ?? -1, stdout, stderr })));
}

async function ok(args: string[], context?: string): Promise<string> {
  const result = await kubectl(args, context);
  if (result.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

beforeAll(async () => {
  cluster = await startCluster();
  work = mkdtempSync(join(tmpdir(), 'kube-sim-kubectl-'));
  cluster.sim.seed({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'alice-creates-namespaces' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'namespace-creator' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }] });
  cluster.sim.seed({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'namespace-creator' },
    rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'get', 'list'] }] });
});
afterAll(() => cluster.stop());

describeKubectl('kubectl 1.32 against kube-sim', () => {
  it('creates a namespace as another user and labels it', async () => {
    expect(await ok(['create', 'namespace', 'team-a'], 'alice')).toBe('namespace/team-a created\n');
    expect((await kubectl(['create', 'namespace', 'team-b'], 'mallory')).stderr)
      .toContain('Error from server (Forbidden): namespaces is forbidden: User "mallory" cannot create resource "namespaces" in API group "" at the cluster scope');
    expect(await ok(['label', 'namespace', 'team-a', 'team=blue'])).toBe('namespace/team-a labeled\n');
    const ns = JSON.parse(await ok(['get', 'namespace', 'team-a', '-o', 'json']));
    expect(ns.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'team-a', team: 'blue' });
  });

  it('applies client-side, then server-side twice (the second a no-op)', async () => {
    const file = join(work, 'cm.yaml');
    writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: team-a\ndata:\n  a: "1"\n');
    expect(await ok(['apply', '-f', file])).toBe('configmap/app created\n');
    writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: team-a\ndata:\n  a: "2"\n');
    expect(await ok(['apply', '-f', file])).toBe('configmap/app configured\n');
    expect(await ok(['apply', '--server-side', '-f', file])).toBe('configmap/app serverside-applied\n');
    const before = JSON.parse(await ok(['get', 'configmap', 'app', '-n', 'team-a', '-o', 'json']));
    expect(await ok(['apply', '--server-side', '-f', file])).toBe('configmap/app serverside-applied\n');
    const after = JSON.parse(await ok(['get', 'configmap', 'app', '-n', 'team-a', '-o', 'json']));
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.data).toEqual({ a: '2' });
  });

  it('applies a CRD and then objects of its kind', async () => {
    expect(await ok(['apply', '--server-side', '-f', 'infra/crds/namespacetemplates.yaml'])).toBe('customresourcedefinition.apiextensions.k8s.io/namespacetemplates.furnish.dev serverside-applied\n');
    const file = join(work, 'tpl.yaml');
    writeFileSync(file, 'apiVersion: furnish.dev/v1alpha1\nkind: NamespaceTemplate\nmetadata:\n  name: default\nspec:\n  namespaces:\n    labelSelector: {}\n  templates: []\n');
    expect(await ok(['apply', '-f', file])).toBe('namespacetemplate.furnish.dev/default created\n');
    const tpl = JSON.parse(await ok(['get', 'nstpl', 'default', '-o', 'json']));
    expect(tpl.spec).toEqual({ namespaces: { labelSelector: {} }, templates: [], deletionPolicy: 'Delete', mode: 'Enforce', existingNamespaces: 'Adopt' });
  });

  it('answers auth can-i, with --as', async () => {
    expect(await ok(['auth', 'can-i', 'create', 'namespaces', '--as', 'alice'])).toBe('yes\n');
    const denied = await kubectl(['auth', 'can-i', 'delete', 'namespaces', '--as', 'alice']);
    expect([denied.status, denied.stdout]).toEqual([1, 'no\n']);
    expect(await ok(['auth', 'can-i', 'get', 'configmaps', '-n', 'team-a'], 'admin')).toBe('yes\n');
  });

  it('watches with get -w', async () => {
    const child = spawn('kubectl', ['--kubeconfig', cluster.kubeconfigPath, '--cache-dir', join(work, 'cache'), 'get', 'configmaps', '-n', 'team-a', '-w', '--request-timeout=10s']);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    const seen = (text: string): Promise<void> => new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`kubectl get -w never printed ${text}: ${output}`)), 10_000);
      const poll = setInterval(() => {
        if (output.includes(text)) { clearInterval(poll); clearTimeout(timer); resolve(); }
      }, 20);
    });
    try {
      await seen('app');
      await ok(['create', 'configmap', 'watched', '-n', 'team-a', '--from-literal=k=v']);
      await seen('watched');
    } finally {
      child.kill();
    }
  });

  it('deletes a namespace with its contents', async () => {
    expect(await ok(['delete', 'namespace', 'team-a'])).toBe('namespace "team-a" deleted\n');
    expect((await kubectl(['get', 'namespace', 'team-a'])).stderr).toContain('Error from server (NotFound): namespaces "team-a" not found');
    expect(cluster.sim.store.list('configmaps.', 'team-a')).toEqual([]);
  });
});
