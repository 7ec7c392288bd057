// The Organization rules on an LNamespace (issue 25, findings 2, 3 and 9): its organization change
// judged as a transfer of its namespace, its CREATE taking a real quota slot (also under
// concurrency), its billing fields judged like the namespace annotations they become.
import { describe, expect, it } from '@jest/globals';
import type { AdmissionRequest } from '../../../shared/admission/types.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { mutateLNamespace } from '../../../shared/webhooks/handlers/mutate-lnamespace.ts';
import { lnamespaceAsk, lnamespaceAskChanged, lnamespaceTransfer, namespaceAsked } from '../../../shared/webhooks/rules/organization-lnamespace.ts';
import type { NamespaceSource } from '../../../shared/webhooks/deps.ts';
import { namespaceObject, organization, orgDeps } from '../../support/organizations.ts';

const ORG = 'furnish.dev/organization';
const lns = (name: string, labels: Record<string, string> = {}, billing?: Record<string, string>): KubeObject => ({
  apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', metadata: { name, labels, annotations: { 'furnish.dev/creator': 'alice' } }, spec: billing ? { billing } : {},
});

let uids = 0;
function request(operation: 'CREATE' | 'UPDATE', object: KubeObject, old?: KubeObject, user = 'alice', groups: string[] = []): AdmissionRequest {
  return {
    uid: `lns-${++uids}`, operation, name: object.metadata.name,
    kind: { group: 'furnish.dev', version: 'v1alpha1', kind: 'LNamespace' },
    resource: { group: 'furnish.dev', version: 'v1alpha1', resource: 'lnamespaces' },
    userInfo: { username: user, groups: ['system:authenticated', ...groups] },
    object, ...(old ? { oldObject: old } : {}),
  } as AdmissionRequest;
}

const absent: NamespaceSource = { exists: async () => false, state: async () => ({}) };
/** acme: alice (default), carol; globex: alice, bob. The namespace `shop` is acme's. */
function deps(options: { globexQuota?: number; acmeQuota?: number; shopIn?: string; privileged?: string[]; allowedAnnotations?: string[] } = {}) {
  const organizations = [
    organization('acme', [{ kind: 'User', name: 'alice', default: true }, { kind: 'User', name: 'carol' }], { quota: options.acmeQuota ?? 5, status: { namespaces: 1 } }),
    organization('globex', [{ kind: 'User', name: 'alice' }, { kind: 'User', name: 'bob' }], { quota: options.globexQuota ?? 5, status: { namespaces: 0 } }),
    organization('initech', [], { status: { namespaces: 0 } }),
  ];
  const d = orgDeps({ organizations, namespaces: [namespaceObject('shop', { [ORG]: options.shopIn ?? 'acme' })], settings: { ...(options.privileged ? { privileged: options.privileged } : {}), ...(options.allowedAnnotations ? { allowedAnnotations: options.allowedAnnotations } : {}) } });
  return { ...d, namespaces: absent };
}
const reservations = (d: ReturnType<typeof deps>, org: string) => d.organizations.organizations.get(org)!.status!.reservations ?? [];

describe('finding 2: an LNamespace\'s organization change is a transfer of its namespace', () => {
  it('a member of both moves it, taking a slot in the new organization keyed by the request', async () => {
    const d = deps();
    const relabel = request('UPDATE', lns('shop', { [ORG]: 'globex' }), lns('shop', { [ORG]: 'acme' }));
    expect((await mutateLNamespace(relabel, d)).allowed).toBe(true);
    expect(reservations(d, 'globex')).toEqual([{ uid: relabel.uid, namespace: 'shop', expires: expect.any(String) }]);
  });

  it('a manager who is not a member of the new organization, or of the old, is refused', async () => {
    const carol = await mutateLNamespace(request('UPDATE', lns('shop', { [ORG]: 'globex' }), lns('shop', { [ORG]: 'acme' }), 'carol'), deps());
    expect(carol.status).toMatchObject({ code: 403, message: 'the namespace of LNamespace "shop": user "carol" may not move namespace "shop" into organization "globex": not a member; ask an administrator to add you to the Organization\'s spec.members (kind User, Group or ServiceAccount)' });
    const bob = await mutateLNamespace(request('UPDATE', lns('shop', { [ORG]: 'globex' }), lns('shop', { [ORG]: 'acme' }), 'bob'), deps());
    expect(bob.status?.message).toBe('the namespace of LNamespace "shop": user "bob" may not move namespace "shop" from organization "acme" to "globex": not a member of "acme"; a transfer needs membership of both organizations');
  });

  it('a full organization refuses the transfer', async () => {
    const d = deps({ globexQuota: 0 });
    const r = await mutateLNamespace(request('UPDATE', lns('shop', { [ORG]: 'globex' }), lns('shop', { [ORG]: 'acme' })), d);
    expect(r.status?.message).toBe('the namespace of LNamespace "shop": organization "globex" has 0 of 0 namespaces');
  });

  it('judged from where the namespace really is: an LNamespace that never named one moves its namespace out of its creator\'s default', async () => {
    const r = await mutateLNamespace(request('UPDATE', lns('shop', { [ORG]: 'globex' }), lns('shop'), 'bob'), deps());
    expect(r.status?.message).toContain('from organization "acme" to "globex": not a member of "acme"');
  });

  it('removing the label is refused like removing it from the namespace; a relabel through a dry run takes no slot', async () => {
    const removed = await mutateLNamespace(request('UPDATE', lns('shop'), lns('shop', { [ORG]: 'acme' })), deps());
    expect(removed.status?.message).toContain('user "alice" may not remove label furnish.dev/organization="acme" from namespace "shop"');
    const d = deps();
    expect((await mutateLNamespace({ ...request('UPDATE', lns('shop', { [ORG]: 'globex' }), lns('shop', { [ORG]: 'acme' })), dryRun: true }, d)).allowed).toBe(true);
    expect(reservations(d, 'globex')).toEqual([]);
  });

  it('pure: from the namespace\'s organization (else the old label) to the new label (else unchanged, unless removed)', () => {
    const ask = (organization?: string) => ({ organization, billing: {} });
    expect(lnamespaceTransfer(ask('acme'), ask('globex'), 'acme')).toEqual({ from: 'acme', to: 'globex' });
    expect(lnamespaceTransfer(ask(), ask('globex'), 'acme')).toEqual({ from: 'acme', to: 'globex' });
    expect(lnamespaceTransfer(ask('acme'), ask('globex'), undefined)).toEqual({ from: 'acme', to: 'globex' });
    expect(lnamespaceTransfer(ask(), ask(), 'acme')).toEqual({ from: 'acme', to: 'acme' });
    expect(lnamespaceTransfer(ask('acme'), ask(), 'acme')).toEqual({ from: 'acme', to: undefined });
    expect(lnamespaceAskChanged(lnamespaceAsk(lns('a', { [ORG]: 'x' }, { p: '1' })), lnamespaceAsk(lns('a', { [ORG]: 'x' }, { p: '1' })))).toBe(false);
    expect(lnamespaceAskChanged(lnamespaceAsk(lns('a', {}, { p: '1' })), lnamespaceAsk(lns('a', {}, { p: '2' })))).toBe(true);
  });
});

describe('finding 3: concurrent LNamespace creates take real quota slots', () => {
  it('10 at once against 3 free slots: exactly 3 admitted, 3 reservations', async () => {
    const d = deps({ acmeQuota: 4 });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => mutateLNamespace(request('CREATE', lns(`shop-${i}`, { [ORG]: 'acme' })), d)));
    expect(answers.filter((a) => a.allowed)).toHaveLength(3);
    expect(new Set(answers.filter((a) => !a.allowed).map((a) => a.status?.message?.replace(/LNamespace "shop-\d+"/, 'LNamespace')))).toEqual(new Set(['the namespace of LNamespace: organization "acme" has 4 of 4 namespaces']));
    expect(reservations(d, 'acme')).toHaveLength(3);
  });

  it('the webhook\'s reinvocation (same uid) reuses its slot', async () => {
    const d = deps({ acmeQuota: 2 });
    const create = request('CREATE', lns('shop-1', { [ORG]: 'acme' }));
    expect((await mutateLNamespace(create, d)).allowed).toBe(true);
    expect((await mutateLNamespace(create, d)).allowed).toBe(true);
    expect(reservations(d, 'acme')).toHaveLength(1);
  });
});

describe('finding 9: an LNamespace\'s billing fields are what its organization allows', () => {
  it('a member may not choose a cost center, at CREATE or later; the Organization\'s billing map is what its namespace gets', async () => {
    const create = await mutateLNamespace(request('CREATE', lns('shop-1', { [ORG]: 'acme' }, { costCenter: '0000' })), deps());
    expect(create.status).toMatchObject({ code: 403, message: expect.stringContaining('the namespace of LNamespace "shop-1": user "alice" may not add, change or remove annotation furnish.dev/billing.costCenter on namespace "shop-1": only privileged principals may') });
    const update = await mutateLNamespace(request('UPDATE', lns('shop', { [ORG]: 'acme' }, { costCenter: '0000' }), lns('shop', { [ORG]: 'acme' })), deps());
    expect(update.status?.message).toContain('may not add, change or remove annotation furnish.dev/billing.costCenter on namespace "shop"');
  });

  it('allowed where the namespace annotation is: allowlisted keys, privileged requesters; unchanged fields stay', async () => {
    expect((await mutateLNamespace(request('CREATE', lns('shop-1', { [ORG]: 'acme' }, { project: 'p' })), deps({ allowedAnnotations: ['furnish.dev/billing.project'] }))).allowed).toBe(true);
    expect((await mutateLNamespace(request('CREATE', lns('shop-1', { [ORG]: 'acme' }, { costCenter: '0000' }), undefined, 'finance', ['billing-admins']), deps({ privileged: ['group:billing-admins'] }))).allowed).toBe(true);
    const kept = lns('shop', { [ORG]: 'acme' }, { costCenter: '4711' });
    const withUser = { ...kept, spec: { billing: { costCenter: '4711' }, users: [{ kind: 'User', name: 'dan' }] } } as KubeObject;
    expect((await mutateLNamespace(request('UPDATE', withUser, kept), deps())).allowed).toBe(true);
    expect(namespaceAsked('shop', 'acme', { costCenter: '4711', 'bad key': 'x' })).toEqual({ name: 'shop', labels: { [ORG]: 'acme' }, annotations: { 'furnish.dev/billing.costCenter': '4711' } });
  });
});
