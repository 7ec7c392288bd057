// inTreePolicies (shared/kube/features.ts): whether the API server evaluates
// ValidatingAdmissionPolicies (and webhook matchConditions), by discovery alone. Judged here
// against an oracle the code must not use: the server's version (both went GA in 1.30), or, on
// kube-sim, whether it was started with them (KUBE_SIM_ADMISSION_POLICIES=0 turns them off, as 1.26).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeClient } from '../../shared/kube/client.ts';
import { inTreePolicies } from '../../shared/kube/features.ts';
import { runCli } from '../../shared/cli/command.ts';
import { COMMANDS } from '../../shared/cli/commands.ts';
import { clientFor } from './helpers.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';

let cluster: TestCluster;
let admin: KubeClient;

beforeAll(async () => {
  cluster = await useTestCluster();
  admin = await clientFor(cluster.kubeconfigPath, 'admin');
});

afterAll(async () => {
  admin?.close();
  await cluster?.stop();
});

/** What the server should answer: a real one by its version, kube-sim by how it was started. */
async function expected(): Promise<boolean> {
  if (cluster.isSimulated) return process.env.KUBE_SIM_ADMISSION_POLICIES !== '0';
  const version = await admin.call<{ major: string; minor: string }>({ method: 'GET', path: '/version' });
  const [major, minor] = [Number(version.data!.major), Number.parseInt(version.data!.minor, 10)];
  return major > 1 || minor >= 30;
}

describe('inTreePolicies', () => {
  it('is true exactly on a server that serves validatingadmissionpolicies v1 (1.32), false on one without (1.26)', async () => {
    const want = await expected();
    expect(await inTreePolicies(admin)).toBe(want);
    // And the answer means what it says: the server takes (or has no) policies of that API.
    const list = await admin.call({ method: 'GET', path: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies' });
    expect(list.status).toBe(want ? 200 : 404);
  });

  it('throws, naming discovery, when the server does not answer it (never a guess)', async () => {
    const broken: KubeClient = { ...admin, call: async () => ({ ok: false, status: 503, error: 'unavailable' }) } as unknown as KubeClient;
    await expect(inTreePolicies(broken)).rejects.toThrow('could not read API discovery of admissionregistration.k8s.io/v1: unavailable');
  });

  it('`furnish webhooks --kubeconfig` prints the variant the cluster supports, says which settings it rendered, and prints its parts alone with --only', async () => {
    const webhooks = async (...args: string[]) => {
      let stdout = '';
      let stderr = '';
      const code = await runCli(COMMANDS, ['webhooks', '--url', 'https://functions.example', '--cluster', 'prod', '--kubeconfig', cluster.kubeconfigPath, '--context', 'admin', '-o', 'json', ...args], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env: {}, readStdin: () => '' });
      return { code, stderr, kinds: code === 0 ? (JSON.parse(stdout) as { items: { kind: string }[] }).items.map((o) => o.kind) : [] };
    };
    const want = await expected();
    const printed = await webhooks();
    expect(printed.code).toBe(0);
    expect(printed.kinds.includes('ValidatingAdmissionPolicy')).toBe(want);
    expect(printed.stderr).toEqual(want ? expect.stringContaining('warning: in-tree policies rendered from the functions\' defaults') : '');
    const policies = await webhooks('--only', 'policies');
    expect(policies.code).toBe(want ? 0 : 2);
    if (want) expect(policies.kinds.every((k) => k.startsWith('ValidatingAdmissionPolicy'))).toBe(true);
    const registrations = await webhooks('--only', 'registrations');
    expect(registrations.kinds.every((k) => k.endsWith('WebhookConfiguration'))).toBe(true);
  });
});
