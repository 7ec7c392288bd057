// furnish-reserved-names and furnish-metadata-allowlist, rendered only when organizations are enabled.
import { describe, expect, it } from '@jest/globals';
import { defaultPolicySettings, type PolicySettings } from '../../../shared/config/types.ts';
import { KEY } from '../../../shared/keys.ts';
import { admissionPolicies } from '../../../shared/policies/index.ts';
import { judgeWith, mutated, namespace, namespaceRequest } from './harness.ts';

const settings: PolicySettings = { ...defaultPolicySettings(), organizations: { enabled: true, privileged: ['group:platform'], reservedNames: ['kube-*', 'team-*-admin'] } };
const judge = judgeWith(settings);
const alice = { username: 'alice', groups: ['dev'] };
const platform = { username: 'pat', groups: ['platform'] };
const RECONCILER = { username: settings.guard.reconciler[0]! };
const create = (user: typeof alice, name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}) =>
  namespaceRequest('CREATE', user, mutated(settings, 'CREATE', user, namespace({ name, labels, annotations })));

describe('organization policies', () => {
  it('are rendered only when organizations are enabled', () => {
    const names = (s: PolicySettings) => admissionPolicies(s).filter((o) => o.kind === 'ValidatingAdmissionPolicy').map((o) => o.metadata.name);
    expect(names(defaultPolicySettings())).not.toContain('furnish-reserved-names');
    expect(names(settings)).toEqual(expect.arrayContaining(['furnish-reserved-names', 'furnish-metadata-allowlist']));
  });

  it('refuses a reserved name to unprivileged principals, naming the pattern; allows privileged ones', () => {
    expect(judge(create(alice, 'kube-mine')).message).toContain('user "alice" may not create namespace "kube-mine": names matching "kube-*" are reserved; choose another name');
    expect(judge(create(alice, 'team-x-admin')).message).toContain('names matching "team-*-admin" are reserved');
    expect(judge(create(alice, 'team-admin')).allowed).toBe(true);
    expect(judge(create(platform, 'kube-mine')).allowed).toBe(true);
  });

  it('refuses keys outside the allowlist (added, changed or removed), on the namespace and its /status', () => {
    expect(judge(create(alice, 'a', { team: 'x', 'app.kubernetes.io/name': 'y', tier: 'gold' })).message).toContain('may not add, change or remove label tier on namespace "a": only privileged principals may');
    const old = mutated(settings, 'CREATE', platform, namespace({ name: 'a', labels: { tier: 'gold' }, annotations: { note: 'x' } }));
    const next = { ...old, metadata: { ...old.metadata, labels: { ...old.metadata.labels }, annotations: { ...old.metadata.annotations, note: 'y' } } };
    delete next.metadata.labels.tier;
    const { message } = judge(namespaceRequest('UPDATE', alice, next, old, 'status'));
    expect(message).toMatch(/label tier, annotation note|annotation note.*label tier/);
    expect(judge(namespaceRequest('UPDATE', platform, next, old)).allowed).toBe(true);
  });

  it('lets Furnish\'s own keys through by their own rules, and Furnish\'s identity write its failure record', () => {
    expect(judge(create(alice, 'b', { team: 'x' })).allowed).toBe(true);
    const old = mutated(settings, 'CREATE', alice, namespace({ name: 'b' }));
    const failure = { ...old, metadata: { ...old.metadata, annotations: { ...old.metadata.annotations, [KEY.failure]: 'template t: x' } } };
    const grant = [{ user: RECONCILER.username, verb: 'initialize', resource: 'namespaces' as const }];
    expect(judge(namespaceRequest('UPDATE', RECONCILER, failure, old), grant).allowed).toBe(true);
    expect(judge(namespaceRequest('UPDATE', alice, failure, old), [{ ...grant[0]!, user: 'alice' }]).message).toContain(`annotation ${KEY.failure}`);
  });

  it('exempts the exempt names', () => {
    expect(judge(create(alice, 'kube-public', { tier: 'x' })).allowed).toBe(true);
  });
});
