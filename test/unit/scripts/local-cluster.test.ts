// `npm start` on a machine without a cluster: which cluster it picks, and what it says.
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { chooseCluster, embeddedClusterBanner, portInUseMessage, startEmbeddedCluster } from '../../../scripts/local-cluster.ts';
import { probeCluster } from '../../../scripts/start/cluster.ts';

describe('chooseCluster', () => {
  it('uses a reachable cluster, from KUBECONFIG when set', () => {
    expect(chooseCluster(true, { KUBECONFIG: '/a/config:/b/config' })).toEqual({ kind: 'configured', kubeconfigPath: '/a/config' });
    expect(chooseCluster(true, {})).toEqual({ kind: 'configured', kubeconfigPath: undefined });
  });

  it('starts the test cluster when nothing is reachable and no KUBECONFIG names a cluster', () => {
    expect(chooseCluster(false, {})).toEqual({ kind: 'embedded' });
  });

  it('never swaps an unreachable cluster the user named for the test cluster', () => {
    expect(chooseCluster(false, { KUBECONFIG: '/a/config' })).toEqual({ kind: 'refuse' });
  });
});

describe('embeddedClusterBanner', () => {
  it('names the kubeconfig to export and the first commands', () => {
    const text = embeddedClusterBanner({ kubeconfigPath: '/repo/.furnish/kube-sim/kubeconfig', server: 'https://127.0.0.1:4242' });
    expect(text).toContain('export KUBECONFIG=/repo/.furnish/kube-sim/kubeconfig');
    expect(text).toContain('kubectl --context alice create namespace team-a');
    // alice may create namespaces only once she is granted it (kube-sim's RBAC is the real one's).
    expect(text.indexOf('kubectl create clusterrolebinding alice-ns --clusterrole=ns-creator --user=alice')).toBeLessThan(text.indexOf('kubectl --context alice create namespace team-a'));
    // The quickstart's next step is bob's refusal for a template he may not use: he needs the same grant.
    expect(text).toContain('kubectl create clusterrolebinding bob-ns --clusterrole=ns-creator --user=bob');
    expect(text).toContain('with users admin, alice, bob, carol');
    expect(text).toContain('https://127.0.0.1:4242');
  });
});

describe('portInUseMessage', () => {
  const busy = (port: number) => Object.assign(new Error(`listen EADDRINUSE: address already in use 127.0.0.1:${port}`), { code: 'EADDRINUSE', port });

  it('names the setting that moves the busy port', () => {
    expect(portInUseMessage(busy(8443), {})).toBe('Port 8443 on 127.0.0.1 is already in use (another npm start?): stop what listens there, or set FURNISH_WEBHOOK_PORT to a free port (0 lets the system pick one).');
    expect(portInUseMessage(busy(9000), { FURNISH_RELAY_PORT: '9000' })).toContain('set FURNISH_RELAY_PORT');
  });

  it('leaves every other failure alone', () => {
    expect(portInUseMessage(new Error('boom'), {})).toBeUndefined();
    expect(portInUseMessage(undefined, {})).toBeUndefined();
  });
});

describe('removeRegistrationsCommand', () => {
  it('names every registration npm start made, by kind', async () => {
    const { removeRegistrationsCommand } = await import('../../../scripts/start.ts');
    const config = (kind: string, name: string) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name } });
    expect(removeRegistrationsCommand([config('MutatingWebhookConfiguration', 'furnish-mutate-namespace'), config('ValidatingWebhookConfiguration', 'furnish-validate-namespace'), config('ValidatingWebhookConfiguration', 'furnish-guard-initializing')]))
      .toBe('kubectl delete mutatingwebhookconfiguration furnish-mutate-namespace; kubectl delete validatingwebhookconfiguration furnish-validate-namespace furnish-guard-initializing');
  });
});

describe('startEmbeddedCluster', () => {
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it("runs the test cluster as a process of its own (not under the stack's heap limit), with every walk-through's users, and stops it", async () => {
    const cluster = await startEmbeddedCluster(mkdtempSync(`${tmpdir()}/furnish-embedded-`));
    try {
      expect(cluster.pid).not.toBe(process.pid);
      expect(alive(cluster.pid)).toBe(true);
      // Each user is a context and is who the docs say (groups included: a Group sudoer's members).
      const who: Record<string, string[]> = {};
      for (const user of ['admin', 'alice', 'bob', 'carol']) {
        const kube = await probeCluster(cluster.kubeconfigPath, user);
        const review = await kube.call<{ status?: { userInfo?: { username?: string; groups?: string[] } } }>({ method: 'POST', path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
        who[review.data?.status?.userInfo?.username ?? `? ${review.status}`] = (review.data?.status?.userInfo?.groups ?? []).filter((g) => g !== 'system:authenticated');
        kube.close();
      }
      expect(who).toEqual({ admin: ['system:masters'], alice: ['dev'], bob: ['dev'], carol: [] });
    } finally {
      await cluster.stop();
    }
    expect(alive(cluster.pid)).toBe(false);
  });
});
