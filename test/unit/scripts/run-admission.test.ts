// npm start writes its policies, then its registrations (scripts/local-registrations.ts
// writeRunAdmission), at start and again after Ctrl-Z/fg: the in-tree registrations fail open
// where only the policies back them (mutate-namespace), so a policy that cannot be written, or
// policies the server does not enforce, stop it before any registration.
import { describe, expect, it } from '@jest/globals';
import { defaultPolicySettings } from '../../../shared/config/types.ts';
import { installedPolicies } from '../../../shared/install/policies.ts';
import type { KubeClient, KubeRequest } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { silentLogger } from '../../../shared/log.ts';
import { webhookRegistrations } from '../../../shared/webhooks/registration.ts';
import { writeRunAdmission } from '../../../scripts/local-registrations.ts';

const settings = defaultPolicySettings();
const configs = [...installedPolicies(settings), ...(webhookRegistrations({ functionsUrl: 'https://127.0.0.1:1', inTree: settings }) as KubeObject[])];
const registration = (req: KubeRequest) => /webhookconfigurations\//.test(req.path);

function kube(refuse: (req: KubeRequest) => boolean) {
  const calls: KubeRequest[] = [];
  const client = { call: async (req: KubeRequest) => (calls.push(req), refuse(req) ? { ok: false, status: 422, error: 'refused', attempts: 1 } : { ok: true, status: 200, attempts: 1 }) } as unknown as KubeClient;
  return { client, calls };
}

describe('writeRunAdmission', () => {
  it('writes every policy, checks they are enforced, then registers the webhooks', async () => {
    const { client, calls } = kube(() => false);
    let checked = -1;
    expect(await writeRunAdmission(client, configs, silentLogger, async () => void (checked = calls.length))).toBeUndefined();
    expect(calls).toHaveLength(configs.length);
    expect(calls.slice(0, checked).some(registration)).toBe(false);
    expect(calls.slice(checked).every(registration)).toBe(true);
  });

  it('stops at the first policy it cannot write: no registration is written (was: a WARNING, then every fail-open registration)', async () => {
    const { client, calls } = kube((req) => req.path.endsWith('/validatingadmissionpolicies/furnish-creator-immutable'));
    const problem = await writeRunAdmission(client, configs, silentLogger, async () => undefined);
    expect(problem).toBe('could not write ValidatingAdmissionPolicy furnish-creator-immutable: refused');
    expect(calls.some(registration)).toBe(false);
  });

  it('stops when the policies are written but not enforced', async () => {
    const { client, calls } = kube(() => false);
    expect(await writeRunAdmission(client, configs, silentLogger, async () => 'not evaluated')).toBe('not evaluated');
    expect(calls.some(registration)).toBe(false);
  });

  it('the webhook-only variant (no policy) registers without a check; a registration it cannot write does not stop the others', async () => {
    const only = webhookRegistrations({ functionsUrl: 'https://127.0.0.1:1' }) as KubeObject[];
    const { client, calls } = kube((req) => req.path.endsWith('/furnish-mutate-namespace'));
    expect(await writeRunAdmission(client, only, silentLogger, async () => 'never asked')).toBeUndefined();
    expect(calls).toHaveLength(only.length);
  });
});
