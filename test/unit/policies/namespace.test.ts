// The namespace policies, evaluated as the API server does (kube-sim's evaluator): each attack
// refused with a message naming the key, each legitimate write allowed, through every path.
import { describe, expect, it } from '@jest/globals';
import { CREATOR_IDENTITY, canonicalIdentity } from '../../../shared/auth/creator.ts';
import { defaultPolicySettings, type PolicySettings } from '../../../shared/config/types.ts';
import { INITIALIZER_KEY } from '../../../shared/initializers/keys.ts';
import { KEY, PHASE } from '../../../shared/keys.ts';
import { judgeWith, mutated, namespace, namespaceRequest, type Grant, type UserInfo } from './harness.ts';

const settings: PolicySettings = { ...defaultPolicySettings(), autoOptOutPrincipals: ['system:serviceaccount:ci:*'], systemNamespaces: ['platform'] };
const judge = judgeWith(settings);
const RECONCILER: UserInfo = { username: settings.guard.reconciler[0]!, groups: ['system:serviceaccounts'] };
const alice: UserInfo = { username: 'alice', uid: 'a1', groups: ['dev', 'system:authenticated'] };
const admin: UserInfo = { username: 'root', groups: ['system:masters'] };
const ci: UserInfo = { username: 'system:serviceaccount:ci:builder' };
const ADMIN_GRANTS: Grant[] = [{ user: 'root', verb: 'optout', resource: 'namespacetemplates' }, { user: 'root', verb: 'initialize', resource: 'namespaces' }];
const INIT = INITIALIZER_KEY.initializers;

/** A namespace alice created, as mutate-namespace left it. */
function created(name = 'team-a', user = alice) {
  return mutated(settings, 'CREATE', user, namespace({ name }));
}

function update(old: ReturnType<typeof created>, change: { labels?: Record<string, string | null>; annotations?: Record<string, string | null>; status?: Record<string, unknown> }) {
  const apply = (base: Record<string, string> | undefined, values: Record<string, string | null> = {}) => {
    const next = new Map(Object.entries(base ?? {}));
    for (const [k, value] of Object.entries(values)) if (value === null) next.delete(k); else next.set(k, value);
    return Object.fromEntries(next);
  };
  return { ...old, metadata: { ...old.metadata, labels: apply(old.metadata.labels, change.labels), annotations: apply(old.metadata.annotations, change.annotations) }, ...(change.status ? { status: change.status } : {}) };
}

describe('furnish-namespace-marks (CREATE)', () => {
  it('allows what mutate-namespace records: creator, identity, phase pending, initializers "furnish" first', () => {
    const ns = created();
    expect(ns.metadata.labels?.[KEY.phase]).toBe(PHASE.pending);
    expect(judge(namespaceRequest('CREATE', alice, ns))).toEqual({ allowed: true, message: '' });
  });

  it('refuses a namespace mutate-namespace did not mark (the functions unreachable), naming the missing key', () => {
    const verdict = judge(namespaceRequest('CREATE', alice, namespace({ name: 'team-a' })));
    expect(verdict.allowed).toBe(false);
    expect(verdict.message).toContain(`user "alice" may not create namespace "team-a" without annotation ${KEY.creator}`);
  });

  it('refuses a hand-marked namespace that names another creator, or that sets a phase other than pending', () => {
    const forged = namespace({ name: 'team-a', labels: { [KEY.phase]: PHASE.pending }, annotations: { [KEY.creator]: 'bob', [INIT]: 'furnish' } });
    expect(judge(namespaceRequest('CREATE', alice, forged)).message).toContain(`may not set annotation ${KEY.creator}="bob" on namespace "team-a"`);
    const ready = update(created(), { labels: { [KEY.phase]: PHASE.ready } });
    expect(judge(namespaceRequest('CREATE', alice, ready)).message).toContain(`may not set label ${KEY.phase}="ready" on namespace "team-a": only Furnish sets the phase`);
  });

  it('refuses a pending namespace whose initializer list does not start with "furnish" (population skipped)', () => {
    for (const list of ['vault', '', ' ,vault,furnish']) {
      const ns = update(created(), { annotations: { [INIT]: list } });
      expect(judge(namespaceRequest('CREATE', alice, ns)).message).toContain(`may not create namespace "team-a" with annotation ${INIT}=`);
    }
    expect(judge(namespaceRequest('CREATE', alice, update(created(), { annotations: { [INIT]: ' furnish , vault' } }))).allowed).toBe(true);
  });

  it('allows an administrator (optout) to create a namespace unmarked: Furnish populates it later, no creator recorded', () => {
    expect(judge(namespaceRequest('CREATE', admin, namespace({ name: 'team-b' })), ADMIN_GRANTS).allowed).toBe(true);
    // Without the grant, the same request is refused.
    expect(judge(namespaceRequest('CREATE', admin, namespace({ name: 'team-b' }))).allowed).toBe(false);
  });

  it('allows an unmarked namespace of an auto-opt-out principal that is opted out, and of an exempt name (kube-*, configured, Furnish\'s own)', () => {
    expect(judge(namespaceRequest('CREATE', ci, namespace({ name: 'ci-1', annotations: { [KEY.optOut]: 'true' } }))).allowed).toBe(true);
    // Not opted out (mutate-namespace did not answer): Furnish would populate it later.
    expect(judge(namespaceRequest('CREATE', ci, namespace({ name: 'ci-1' }))).message).toContain('may not create namespace "ci-1" without annotation furnish.dev/opt-out="true": it matches an auto-opt-out principal');
    // Even one who may opt namespaces out: an auto-opt-out principal's namespace is always opted out.
    expect(judge(namespaceRequest('CREATE', ci, namespace({ name: 'ci-1' })), [{ user: ci.username!, verb: 'optout', resource: 'namespacetemplates' }]).allowed).toBe(false);
    for (const name of ['kube-public', 'platform', settings.furnishNamespace]) expect(judge(namespaceRequest('CREATE', alice, namespace({ name }))).allowed).toBe(true);
    // An exempt name is never pending: a phase set on it is refused.
    expect(judge(namespaceRequest('CREATE', alice, namespace({ name: 'platform', labels: { [KEY.phase]: PHASE.pending } }))).message).toContain(`may not set label ${KEY.phase}="pending"`);
  });

  it('lets a trusted creator name the requester (furnish.dev/requester), as mutate-namespace records it', () => {
    const ns = mutated(settings, 'CREATE', RECONCILER, namespace({ name: 'lns', annotations: { 'furnish.dev/requester': 'carol' } }));
    expect(ns.metadata.annotations?.[KEY.creator]).toBe('carol');
    expect(judge(namespaceRequest('CREATE', RECONCILER, ns)).allowed).toBe(true);
    // Nobody else can name someone: alice's namespace naming carol is refused.
    const claimed = mutated(settings, 'CREATE', alice, namespace({ name: 'x', annotations: { 'furnish.dev/requester': 'carol' } }));
    expect(judge(namespaceRequest('CREATE', alice, update(claimed, { annotations: { [KEY.creator]: 'carol' } }))).message).toContain(`may not set annotation ${KEY.creator}="carol"`);
  });

  it('judges a generateName create by the generated name (never exempt by a prefix), marked as any other', () => {
    const ns = created('');
    const generated = { ...ns, metadata: { ...ns.metadata, generateName: 'kube-system', name: 'kube-systemx7k2p' } };
    expect(judge({ ...namespaceRequest('CREATE', alice, generated), name: '' }).allowed).toBe(true);
    const unmarked = { apiVersion: 'v1', kind: 'Namespace', metadata: { generateName: 'kube-system', name: 'kube-systemx7k2p' } };
    expect(judge({ ...namespaceRequest('CREATE', alice, unmarked), name: '' }).message).toContain('may not create namespace "kube-systemx7k2p" without annotation');
  });
});

describe('furnish-creator-immutable (UPDATE, /status, /finalize)', () => {
  it.each([undefined, 'status', 'finalize'])('refuses changing or removing the creator or the identity (subresource %s)', (sub) => {
    const old = created();
    for (const [key, value] of [[KEY.creator, 'mallory'], [KEY.creator, null], [CREATOR_IDENTITY, 'user=mallory&group=system%3Amasters'], [CREATOR_IDENTITY, null]] as const) {
      const verdict = judge(namespaceRequest('UPDATE', alice, update(old, { annotations: { [key]: value } }), old, sub));
      expect(verdict.message).toContain(`user "alice" may not change annotation ${key} of namespace "team-a" from "`);
    }
    // Adding one to a namespace that never had it (an administrator's unmarked namespace) too.
    const unmarked = namespace({ name: 'team-b' });
    expect(judge(namespaceRequest('UPDATE', alice, update(unmarked, { annotations: { [KEY.creator]: 'alice' } }), unmarked, sub)).message).toContain('from null to "alice"');
  });

  it('allows other changes, and re-spelling an identity of the earlier JSON form (validate-namespace judges that)', () => {
    const old = created();
    expect(judge(namespaceRequest('UPDATE', alice, update(old, { labels: { team: 'x' } }), old)).allowed).toBe(true);
    const legacy = update(old, { annotations: { [CREATOR_IDENTITY]: JSON.stringify({ groups: ['dev'], username: 'alice' }) } });
    const respelled = update(legacy, { annotations: { [CREATOR_IDENTITY]: canonicalIdentity({ username: 'alice', groups: ['dev'] }) } });
    expect(judge(namespaceRequest('UPDATE', alice, respelled, legacy)).allowed).toBe(true);
  });
});

describe('furnish-phase-and-ready (UPDATE, /status, /finalize)', () => {
  it.each([undefined, 'status', 'finalize'])('refuses a tenant opening its pending namespace early (subresource %s)', (sub) => {
    const old = created();
    const verdict = judge(namespaceRequest('UPDATE', alice, update(old, { labels: { [KEY.phase]: PHASE.ready } }), old, sub), ADMIN_GRANTS);
    expect(verdict.message).toContain(`may not change label ${KEY.phase} from "pending" to "ready" on namespace "team-a"`);
    const removed = judge(namespaceRequest('UPDATE', alice, update(old, { labels: { [KEY.phase]: null } }), old, sub));
    expect(removed.message).toContain('from "pending" to null');
  });

  it('allows the reconciler, and the phase mutate-namespace derives from the initializer annotations', () => {
    const old = created();
    const ready = update(old, { labels: { [KEY.phase]: PHASE.ready }, annotations: { [INIT]: '' } });
    expect(judge(namespaceRequest('UPDATE', RECONCILER, ready, old), [{ user: RECONCILER.username!, verb: 'initialize', resource: 'namespaces' }]).allowed).toBe(true);
    // An initializer removing itself last: mutate-namespace sets ready, the policy agrees (the initializer holds initialize).
    const self = mutated(settings, 'UPDATE', alice, update(old, { annotations: { [INIT]: '' } }), old);
    expect(self.metadata.labels?.[KEY.phase]).toBe(PHASE.ready);
    expect(judge(namespaceRequest('UPDATE', alice, self, old), ADMIN_GRANTS.map((g) => ({ ...g, user: 'alice' }))).allowed).toBe(true);
    // A failed namespace whose failure record a holder of initialize removes is pending again.
    const failed = update(old, { labels: { [KEY.phase]: PHASE.failed }, annotations: { [KEY.failure]: 'vault: down' } });
    const repaired = mutated(settings, 'UPDATE', admin, update(failed, { annotations: { [KEY.failure]: null } }), failed);
    expect(judge(namespaceRequest('UPDATE', admin, repaired, failed), ADMIN_GRANTS).allowed).toBe(true);
  });

  it('refuses a Ready condition changed through namespaces/status by anyone but the reconciler', () => {
    const old = { ...created(), status: { phase: 'Active', conditions: [{ type: 'Ready', status: 'False', reason: 'Pending' }] } };
    const readyNow = { ...old, status: { phase: 'Active', conditions: [{ type: 'Ready', status: 'True', reason: 'Ready' }] } };
    expect(judge(namespaceRequest('UPDATE', alice, readyNow, old, 'status'), ADMIN_GRANTS).message).toContain('may not change the Ready condition of namespace "team-a"');
    expect(judge(namespaceRequest('UPDATE', RECONCILER, readyNow, old, 'status')).allowed).toBe(true);
    const otherCondition = { ...old, status: { phase: 'Active', conditions: [...old.status.conditions, { type: 'Other', status: 'True' }] } };
    expect(judge(namespaceRequest('UPDATE', alice, otherCondition, old, 'status')).allowed).toBe(true);
    // The server keeps a second Ready condition (a PUT of namespaces/status): adding one is a change too.
    const second = { ...old, status: { phase: 'Active', conditions: [...old.status.conditions, { type: 'Ready', status: 'True', reason: 'Ready' }] } };
    expect(judge(namespaceRequest('UPDATE', alice, second, old, 'status'), ADMIN_GRANTS).message).toContain('may not change the Ready condition of namespace "team-a"');
    // kubectl wait --for=condition=Ready takes the type in any case: so does the rule.
    for (const type of ['ready', 'READY', 'rEaDy']) {
      const cased = { ...old, status: { phase: 'Active', conditions: [...old.status.conditions, { type, status: 'True' }] } };
      expect([type, judge(namespaceRequest('UPDATE', alice, cased, old, 'status'), ADMIN_GRANTS).message]).toEqual([type, expect.stringContaining('may not change the Ready condition of namespace "team-a"')]);
    }
  });
});

describe('furnish-opt-out', () => {
  it('refuses opting out without optout, at CREATE and UPDATE; allows with it, and for auto-opt-out principals at CREATE', () => {
    const optedOut = mutated(settings, 'CREATE', alice, namespace({ name: 'team-c', annotations: { [KEY.optOut]: 'true' } }));
    expect(judge(namespaceRequest('CREATE', alice, optedOut)).message).toContain(`user "alice" may not opt namespace "team-c" out of NamespaceTemplates (annotation ${KEY.optOut}="true"): needs verb "optout"`);
    expect(judge(namespaceRequest('CREATE', alice, optedOut), [{ user: 'alice', verb: 'optout', resource: 'namespacetemplates' }]).allowed).toBe(true);
    expect(judge(namespaceRequest('CREATE', ci, mutated(settings, 'CREATE', ci, namespace({ name: 'ci-2' })))).allowed).toBe(true);
    const old = created();
    expect(judge(namespaceRequest('UPDATE', ci, update(old, { annotations: { [KEY.optOut]: 'true' } }), old, 'finalize')).message).toContain('may not opt namespace "team-a" out');
  });
});

describe('furnish-initializer-keys', () => {
  const old = update(created(), { annotations: { [INIT]: 'furnish,vault' } });
  const vaultGrant: Grant[] = [{ user: 'alice', verb: 'initialize', resource: 'namespaces', name: 'team-a' }];

  it('allows the first initializer removing itself (with initialize on that namespace); refuses edits and out-of-order removal', () => {
    const removed = update(old, { annotations: { [INIT]: 'vault' } });
    expect(judge(namespaceRequest('UPDATE', alice, removed, old), vaultGrant).allowed).toBe(true);
    expect(judge(namespaceRequest('UPDATE', alice, removed, old)).message).toContain('may not remove initializer "furnish" from namespace "team-a": needs verb "initialize" on namespaces, resourceName "team-a"');
    // initialize on another namespace does not count
    expect(judge(namespaceRequest('UPDATE', alice, removed, old), [{ ...vaultGrant[0]!, name: 'other' }]).allowed).toBe(false);
    for (const [list, sub] of [['furnish', undefined], ['vault,furnish', 'status'], ['furnish,vault,evil', 'finalize'], [null, undefined]] as const) {
      const verdict = judge(namespaceRequest('UPDATE', alice, update(old, { annotations: { [INIT]: list } }), old, sub), vaultGrant);
      expect(verdict.message).toContain(`may not change annotation ${INIT} of namespace "team-a" from "furnish,vault"`);
    }
  });

  it('accepts a failure report only from the working initializer, holding initialize; none at creation', () => {
    const report = (value: string) => update(old, { annotations: { [INITIALIZER_KEY.initializerFailed]: value } });
    expect(judge(namespaceRequest('UPDATE', alice, report('furnish: broken'), old), vaultGrant).allowed).toBe(true);
    expect(judge(namespaceRequest('UPDATE', alice, report('vault: broken'), old), vaultGrant).message).toContain('may not report initializer "vault" failed on namespace "team-a": the working initializer is "furnish"');
    expect(judge(namespaceRequest('UPDATE', alice, report('no colon'), old), vaultGrant).message).toContain('it must read "<initializer>: <reason>"');
    expect(judge(namespaceRequest('UPDATE', alice, report('furnish: broken'), old)).message).toContain('needs verb "initialize"');
    const atCreate = update(created(), { annotations: { [INITIALIZER_KEY.initializerFailed]: 'furnish: x' } });
    expect(judge(namespaceRequest('CREATE', alice, atCreate), vaultGrant).message).toContain('at creation: only a working initializer reports failure');
  });

  it('lets only holders of initialize change Furnish\'s failure record', () => {
    const failed = update(old, { labels: { [KEY.phase]: PHASE.failed }, annotations: { [KEY.failure]: 'template t: x' } });
    const cleared = update(failed, { annotations: { [KEY.failure]: null } });
    expect(judge(namespaceRequest('UPDATE', alice, cleared, failed, 'status')).message).toContain(`may not change annotation ${KEY.failure} of namespace "team-a" to null: needs verb "initialize"`);
  });
});
