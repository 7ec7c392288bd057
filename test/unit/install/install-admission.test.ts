// The admission side of `furnish install` (issue 29 review): the policies are written before any
// registration, proven enforced by a dry run they must refuse (discovery lists them even where the
// ValidatingAdmissionPolicy plugin is off), go and come back together with the registrations in an
// undo, and uninstall never takes an unanswered discovery for "no policies".
import { describe, expect, it } from '@jest/globals';
import { defaultPolicySettings } from '../../../shared/config/types.ts';
import { enforcementProblem, uninstall } from '../../../shared/install/install.ts';
import { admissionWrittenBack, INSTALL_PHASES, keepsPolicies } from '../../../shared/install/plan.ts';
import { ENFORCEMENT_CHECK, installedPolicies, notEnforced, stillEnforced } from '../../../shared/install/policies.ts';
import { KEY, PHASE } from '../../../shared/keys.ts';
import type { KubeClient, KubeRequest } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { silentLogger } from '../../../shared/log.ts';
import { webhookRegistrations } from '../../../shared/webhooks/registration.ts';

const settings = defaultPolicySettings();
const policies = installedPolicies(settings);
const registrations = webhookRegistrations({ functionsUrl: 'https://f.example', inTree: settings }) as KubeObject[];
/** As kube-apiserver 1.32 words the refusal (kube-sim's is the same). */
const REFUSED = "namespaces \"install-probe-x\" is forbidden: ValidatingAdmissionPolicy 'furnish-phase-and-ready' with binding 'furnish-phase-and-ready' denied request: admin may not change label furnish.dev/phase";

type Answer = { ok: boolean; status: number; error?: string; data?: unknown };
/** The check's namespace, as the server answers its create. */
const CREATED: Answer = { ok: true, status: 201, data: { metadata: { name: 'install-probe-x', uid: 'probe-uid' } } };
const fakeKube = (answer: (req: KubeRequest) => Answer, calls: KubeRequest[] = []) => ({ call: async (req: KubeRequest) => (calls.push(req), { attempts: 1, ...answer(req) }) }) as unknown as KubeClient;

describe('notEnforced: what the dry run\'s answer proves', () => {
  it('only a refusal naming furnish-phase-and-ready proves the policies are enforced', () => {
    expect(notEnforced({ ok: false, status: 422, error: REFUSED })).toBeUndefined();
    expect(notEnforced({ ok: true, status: 200 })).toContain('admitted a dry run that ValidatingAdmissionPolicy \'furnish-phase-and-ready\' refuses');
    expect(notEnforced({ ok: true, status: 200 })).toContain('ValidatingAdmissionPolicy admission plugin disabled');
    // Refused by something else (a webhook, RBAC): proves nothing of the policies.
    expect(notEnforced({ ok: false, status: 403, error: 'admission webhook "validate-namespace.furnish.dev" denied the request' })).toContain('HTTP 403 without naming it');
  });
});

describe('enforcementProblem: the dry run, as the installer', () => {
  it('creates the namespace (unmarked: a pending one would need mutate-namespace\'s marks), dry-runs its phase until a policy refuses, and deletes that namespace by its uid', async () => {
    const calls: KubeRequest[] = [];
    let dryRuns = 0;
    // The policy is loaded by the second dry run (kube-apiserver's informer).
    const kube = fakeKube((req) => (req.method === 'POST' ? CREATED : req.query?.dryRun ? (++dryRuns === 1 ? { ok: true, status: 200 } : { ok: false, status: 422, error: REFUSED }) : { ok: true, status: 200 }), calls);
    expect(await enforcementProblem(kube, 'install-probe-x', { sleep: async () => {}, until: Date.now() + 60_000 })).toBeUndefined();
    expect(calls[0]).toMatchObject({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: 'install-probe-x' } } });
    expect(calls[1]).toMatchObject({ method: 'PATCH', path: '/api/v1/namespaces/install-probe-x', query: { dryRun: 'All' }, contentType: 'application/merge-patch+json', body: ENFORCEMENT_CHECK.patch });
    expect(Object.values(PHASE)).not.toContain(ENFORCEMENT_CHECK.patch.metadata.labels[KEY.phase]);
    expect(calls[3]).toMatchObject({ method: 'DELETE', path: '/api/v1/namespaces/install-probe-x', body: { preconditions: { uid: 'probe-uid' } } });
    expect(calls).toHaveLength(4);
  });

  it('a namespace of that name someone else made first is neither taken over nor deleted: it says so', async () => {
    const calls: KubeRequest[] = [];
    const kube = fakeKube((req) => (req.method === 'POST' ? { ok: false, status: 409, error: 'namespaces "install-probe-x" already exists' } : { ok: true, status: 200 }), calls);
    const problem = await enforcementProblem(kube, 'install-probe-x', { sleep: async () => {}, until: Date.now() + 60_000 });
    expect(problem).toBe("could not create namespace install-probe-x to check them: it already exists (someone else's: it was left alone); run again: each check picks a new name");
    expect(calls.map((c) => c.method)).toEqual(['POST', 'GET']);
  });

  // The client retries a create that timed out (or failed on the server's side): the server may
  // have made it, and the retry then answers 409, or the retries run out.
  const madeAnyway = (post: Answer, probe: (nonce: string) => Record<string, string>) => {
    const calls: KubeRequest[] = [];
    let nonce = '';
    const kube = fakeKube((req) => {
      if (req.method === 'POST') {
        nonce = (req.body as KubeObject).metadata.annotations!['furnish.dev/install-probe']!;
        return post;
      }
      if (req.method === 'GET') return { ok: true, status: 200, data: { metadata: { name: 'install-probe-x', uid: 'probe-uid', annotations: probe(nonce) } } };
      return req.query?.dryRun ? { ok: false, status: 422, error: REFUSED } : { ok: true, status: 200 };
    }, calls);
    return { kube, calls };
  };

  it('a create the server made though the call failed (409 on the retry, or retries spent) is the check\'s by its nonce: checked, and deleted by its uid', async () => {
    for (const post of [{ ok: false, status: 409, error: 'namespaces "install-probe-x" already exists' }, { ok: false, status: 504, error: 'Timeout: request did not complete within requested timeout' }]) {
      const { kube, calls } = madeAnyway(post, (nonce) => ({ 'furnish.dev/install-probe': nonce }));
      expect(await enforcementProblem(kube, 'install-probe-x', { sleep: async () => {}, until: Date.now() + 60_000 })).toBeUndefined();
      expect(calls.map((c) => c.method)).toEqual(['POST', 'GET', 'PATCH', 'DELETE']);
      expect(calls[3]).toMatchObject({ path: '/api/v1/namespaces/install-probe-x', body: { preconditions: { uid: 'probe-uid' } } });
    }
  });

  it('a namespace carrying another check\'s nonce (or a copied one) is someone else\'s; a create answered without a uid deletes nothing by name', async () => {
    const other = madeAnyway({ ok: false, status: 409, error: 'namespaces "install-probe-x" already exists' }, () => ({ 'furnish.dev/install-probe': 'another-check' }));
    expect(await enforcementProblem(other.kube, 'install-probe-x', { sleep: async () => {}, until: Date.now() + 60_000 })).toContain("someone else's: it was left alone");
    expect(other.calls.map((c) => c.method)).toEqual(['POST', 'GET']);
    const noUid = madeAnyway({ ok: true, status: 201, data: { metadata: { name: 'install-probe-x' } } }, () => ({}));
    expect(await enforcementProblem(noUid.kube, 'install-probe-x', { sleep: async () => {}, until: Date.now() + 60_000 })).toBe('could not create namespace install-probe-x to check them: the server answered HTTP 201 without its uid (nothing to delete it by)');
    expect(noUid.calls.map((c) => c.method)).toEqual(['POST', 'GET']);
  });

  it('a server that admits it until the deadline: the policies are not enforced, and it says why', async () => {
    let t = 0;
    const kube = fakeKube((req) => (req.method === 'POST' ? CREATED : { ok: true, status: 200 }));
    const problem = await enforcementProblem(kube, 'install-probe-x', { sleep: async (ms) => void (t += ms), now: () => t, until: 5_000 });
    expect(problem).toContain('does not evaluate them');
    expect(t).toBeGreaterThanOrEqual(5_000);
  });

  it('lifted: after their removal, waits until the dry run is admitted (a refusal by anything else, or a 429, shows nothing)', async () => {
    let dryRuns = 0;
    // Still compiled for the first two dry runs (kube-apiserver refreshes its policies once a second).
    const kube = fakeKube((req) => (req.method === 'POST' ? CREATED : req.query?.dryRun && ++dryRuns <= 2 ? { ok: false, status: 422, error: REFUSED } : { ok: true, status: 200 }));
    expect(await enforcementProblem(kube, 'start-check-x', { sleep: async () => {}, until: Date.now() + 60_000, lifted: true })).toBeUndefined();
    expect(dryRuns).toBe(3);
    expect(stillEnforced({ ok: false, status: 422, error: REFUSED })).toBe('ValidatingAdmissionPolicy \'furnish-phase-and-ready\' still refuses its dry run after its removal');
    // Refused by anything else, or throttled: not lifted as far as it can tell.
    expect(stillEnforced({ ok: false, status: 403, error: 'admission webhook "validate-namespace.furnish.dev" denied the request' })).toContain('answered HTTP 403, which does not show whether the policies are lifted');
    expect(stillEnforced({ ok: false, status: 429, error: 'Too Many Requests' })).toContain('answered HTTP 429');
    expect(stillEnforced({ ok: true, status: 200 })).toBeUndefined();
  });
});

describe('the install\'s order', () => {
  it('writes the policies before any registration (the previous ones set to Ignore carry the new matchConditions), proves them enforced before infra/, and removes stale ones after the new registrations', () => {
    const at = (p: (typeof INSTALL_PHASES)[number]) => INSTALL_PHASES.indexOf(p);
    expect(at('policies')).toBe(0);
    expect(at('policies')).toBeLessThan(at('previous-registrations'));
    expect(at('enforced')).toBeLessThan(at('infra'));
    expect(at('enforced')).toBeLessThan(at('registrations'));
    expect(at('registrations')).toBeLessThan(at('stale-policies'));
    expect(INSTALL_PHASES.at(-1)).toBe('probes');
  });
});

describe('the undo: registrations and policies go and come back together', () => {
  it('the lockout check removes the policies written back with the registrations (registrations, bindings, then policies)', () => {
    const relay = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'furnish-relay', namespace: 'furnish-system' } } as KubeObject;
    const again = admissionWrittenBack([relay, ...policies, ...registrations]);
    expect(again.map((o) => o.kind)).not.toContain('Deployment');
    expect(again).toHaveLength(policies.length + registrations.length);
    expect(again.slice(0, registrations.length).every((o) => o.kind.endsWith('WebhookConfiguration'))).toBe(true);
    const kinds = again.slice(registrations.length).map((o) => o.kind);
    expect(kinds.lastIndexOf('ValidatingAdmissionPolicyBinding')).toBeLessThan(kinds.indexOf('ValidatingAdmissionPolicy'));
  });

  it('keeps the policies while a registration could not be taken back (it may fail open, relying on them)', () => {
    expect(keepsPolicies([registrations[0]!])).toBe(true);
    expect(keepsPolicies([policies[0]!])).toBe(false);
    expect(keepsPolicies([])).toBe(false);
  });
});

describe('uninstall', () => {
  it('fails, removing nothing, when discovery does not answer (never "no policies")', async () => {
    const calls: KubeRequest[] = [];
    const kube = fakeKube(() => ({ ok: false, status: 503, error: 'unavailable' }), calls);
    await expect(uninstall({ kube, log: silentLogger }, { crds: false })).rejects.toThrow('could not read API discovery of admissionregistration.k8s.io/v1: unavailable; nothing was removed');
    expect(calls.filter((c) => c.method === 'DELETE')).toEqual([]);
  });
});
