// furnish-organization-metadata by example (agreement.test.ts holds it to the webhook's rules on
// generated writes): rendered only with organizations on, its messages, and its wildcards, which
// become regular expressions whose metacharacters must stay literal.
import { describe, expect, it } from '@jest/globals';
import { defaultPolicySettings, type PolicySettings } from '../../../shared/config/types.ts';
import { KEY } from '../../../shared/keys.ts';
import { admissionPolicies } from '../../../shared/policies/index.ts';
import { judgeWith, namespace, namespaceRequest } from './harness.ts';

const POLICY = 'furnish-organization-metadata';
const settings: PolicySettings = {
  ...defaultPolicySettings(),
  organizations: { enabled: true, allowedLabels: ['team', 'app.kubernetes.io/*', 'cost(center)'], allowedAnnotations: ['a*b.c'], reservedNames: ['kube-*', 'sys.*'] },
};
const judge = judgeWith(settings, [POLICY]);
const alice = { username: 'alice', groups: ['dev'] };
const root = { username: 'root', groups: ['system:masters'] };
const inAcme = (name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}) => namespace({ name, labels: { [KEY.organization]: 'acme', ...labels }, annotations });

describe(POLICY, () => {
  it('is installed only with organizations on', () => {
    expect(admissionPolicies(defaultPolicySettings()).map((o) => o.metadata.name)).not.toContain(POLICY);
    expect(admissionPolicies(settings).filter((o) => o.metadata.name === POLICY).map((o) => o.kind)).toEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
  });

  it('refuses a reserved name in an organization, naming the pattern; not to the privileged, nor outside an organization', () => {
    expect(judge(namespaceRequest('CREATE', alice, inAcme('kube-mine'))).message).toContain('user "alice" may not create namespace "kube-mine": names matching "kube-*" are reserved; choose another name');
    expect(judge(namespaceRequest('CREATE', root, inAcme('kube-mine'))).allowed).toBe(true);
    expect(judge(namespaceRequest('CREATE', alice, namespace({ name: 'kube-mine' }))).allowed).toBe(true);
    // A rename is no UPDATE: a reserved name is judged at CREATE only.
    expect(judge(namespaceRequest('UPDATE', alice, inAcme('kube-mine', { team: 'x' }), inAcme('kube-mine'))).allowed).toBe(true);
  });

  it('keeps the wildcards\' other characters literal', () => {
    expect(judge(namespaceRequest('CREATE', alice, inAcme('sys.x'))).allowed).toBe(false);
    expect(judge(namespaceRequest('CREATE', alice, inAcme('sysXx'))).allowed).toBe(true);
    expect(judge(namespaceRequest('UPDATE', alice, inAcme('n', { 'cost(center)': '1' }), inAcme('n'))).allowed).toBe(true);
    expect(judge(namespaceRequest('UPDATE', alice, inAcme('n', { costcenter: '1' }), inAcme('n'))).allowed).toBe(false);
    expect(judge(namespaceRequest('UPDATE', alice, inAcme('n', {}, { 'aXYZb.c': '1' }), inAcme('n'))).allowed).toBe(true);
    expect(judge(namespaceRequest('UPDATE', alice, inAcme('n', {}, { 'aXYZbXc': '1' }), inAcme('n'))).allowed).toBe(false);
  });

  it('names every key outside the allowlist that changed, added or removed, and what may change', () => {
    const r = judge(namespaceRequest('UPDATE', alice, inAcme('n', { team: 'y', env: 'prod' }, { note: 'x' }), inAcme('n', { team: 'x', tier: 'gold' })));
    expect(r.message).toMatch(/user "alice" may not add, change or remove (label env, label tier|label tier, label env), annotation note on namespace "n": only privileged principals may; others may change labels \["team","app.kubernetes.io\/\*","cost\(center\)"\], annotations \["a\*b.c"\]$/);
  });

  it('judges an own-rule key in the field its rule does not read, like any other key', () => {
    // Label furnish.dev/phase and annotation furnish.dev/creator have rules of their own; the other way round, none.
    expect(judge(namespaceRequest('UPDATE', alice, inAcme('n', {}, { [KEY.phase]: 'ready' }), inAcme('n'))).message).toContain(`annotation ${KEY.phase} on`);
    expect(judge(namespaceRequest('UPDATE', alice, inAcme('n', { [KEY.creator]: 'alice' }), inAcme('n'))).message).toContain(`label ${KEY.creator} on`);
    expect(judge(namespaceRequest('UPDATE', alice, inAcme('n', {}, { [KEY.creator]: 'alice' }), inAcme('n'))).allowed).toBe(true);
  });

  it('judges a namespace leaving its organization by its old label, and none that never named one', () => {
    expect(judge(namespaceRequest('UPDATE', alice, namespace({ name: 'n', labels: { env: 'prod' } }), inAcme('n'))).message).toContain('label env');
    expect(judge(namespaceRequest('UPDATE', alice, namespace({ name: 'n', labels: { env: 'prod' } }), namespace({ name: 'n' }))).allowed).toBe(true);
  });
});
