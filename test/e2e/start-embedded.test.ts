// `npm start` on a machine with no cluster at all (no KUBECONFIG, no ~/.kube/config): it starts
// the project's test cluster itself, says where its kubeconfig is, runs Furnish against it (a
// namespace created there gets its creator), and stops both on Ctrl-C. Always its own cluster:
// FURNISH_TEST_KUBECONFIG does not apply here.
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createKubeClient } from '../../shared/kube/client.ts';
import { KEY } from '../../shared/keys.ts';
import type { KubeObject } from '../../shared/kube/types.ts';

const root = join(import.meta.dirname, '..', '..');

function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<string> {
  let seen = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${seen.slice(-3000)}`)), timeoutMs);
    const onData = (d: Buffer) => {
      seen += d.toString();
      if (pattern.test(seen)) {
        clearTimeout(timer);
        resolve(seen);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  });
}

describe('npm start without a cluster', () => {
  const home = mkdtempSync(join(tmpdir(), 'furnish-home-'));
  const state = join(home, 'state');
  let child: ChildProcess | undefined;

  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it('starts the test cluster, runs Furnish on it, and stops both on SIGINT', async () => {
    const { KUBECONFIG: _unset, ...env } = process.env;
    child = spawn(process.execPath, [join(root, 'scripts', 'start.ts')], {
      cwd: root,
      env: { ...env, HOME: home, FURNISH_STATE_DIR: state, FURNISH_START_PORT: '0', FURNISH_RELAY_PORT: '0', FURNISH_WEBHOOK_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = await waitForOutput(child, /Furnish is running/, 60_000);
    const kubeconfigPath = join(state, 'kube-sim', 'kubeconfig');
    expect(output).toContain(`export KUBECONFIG=${kubeconfigPath}`);
    expect(existsSync(kubeconfigPath)).toBe(true);

    const alice = createKubeClient(await connect({ kubeconfigPath, context: 'alice' }));
    const admin = createKubeClient(await connect({ kubeconfigPath }));
    // alice may create namespaces; the stack's mutate-namespace records her as the creator.
    await admin.call({ method: 'POST', path: '/apis/rbac.authorization.k8s.io/v1/clusterroles', body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'ns-creator' }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'get'] }] } });
    await admin.call({ method: 'POST', path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'alice-ns' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'ns-creator' }, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }] } });
    const created = await alice.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } } });
    expect(created.status).toBe(201);
    expect(created.data?.metadata.annotations?.[KEY.creator]).toBe('alice');
    alice.close();
    admin.close();

    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  }, 90_000);
});
