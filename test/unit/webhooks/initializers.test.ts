// The initializer rules of the namespace webhooks, and the handlers as kube-apiserver calls them
// (HANDLERS: the decorators around mutate-namespace, validate-namespace, guard-initializing and
// validate-template), with the configurations and the stored namespace as static objects.
import { describe, expect, it } from '@jest/globals';
import { decodePatch } from '../../../shared/admission/response.ts';
import type { AdmissionRequest } from '../../../shared/admission/types.ts';
import type { KubeObject, UserInfo } from '../../../shared/kube/types.ts';
import { furnishInitializer, mergeConfigurations } from '../../../shared/initializers/config.ts';
import { HANDLERS } from '../../../shared/webhooks/handlers/index.ts';
import { staticInitializerLookups } from '../../../shared/webhooks/initializer-lookups.ts';
import { failOnReport, pendingWhenRepaired, readyWhenInitialized, recordInitializers } from '../../../shared/webhooks/rules/initializers-mutate.ts';
import { failureReportedByItsInitializer, initializersAsSelected, initializersRemoveThemselvesInOrder } from '../../../shared/webhooks/rules/initializers-validate.ts';
import { writesWaitForInitializers } from '../../../shared/webhooks/rules/initializers-guard.ts';
import type { NamespaceInfo } from '../../../shared/render/types.ts';
import { fakeAuthorizer, testDeps, testSettings } from '../../support/fixtures.ts';
import type { Grant } from '../../support/fixtures.ts';
import { configuration, RECONCILER, SEEDER, SEEDER_SA, VAULT } from '../initializers/helpers.ts';

const CONFIGS = [configuration('10-init', [SEEDER, VAULT])];
const configured = mergeConfigurations(CONFIGS).initializers;
const known = [furnishInitializer([RECONCILER]), ...configured];
const settings = testSettings();
const seeder: UserInfo = { username: SEEDER_SA, groups: ['system:serviceaccounts'] };
const alice: UserInfo = { username: 'alice', groups: ['dev'] };
const LIST = 'furnish.dev/initializers';

function ns(annotations: Record<string, string>, phase = 'pending', labels: Record<string, string> = {}): NamespaceInfo {
  return { name: 'team-a', labels: { 'furnish.dev/phase': phase, 'kubernetes.io/metadata.name': 'team-a', ...labels }, annotations: { 'furnish.dev/creator': 'alice', ...annotations } };
}

function update(user: UserInfo, before: NamespaceInfo, after: NamespaceInfo) {
  return { operation: 'UPDATE' as const, user, old: before, namespace: after, settings, known, configured };
}

describe('mutate-namespace initializer rules', () => {
  it('record-initializers replaces whatever the request carries with the selected initializers', () => {
    const create = { operation: 'CREATE' as const, user: alice, settings, configured };
    expect(recordInitializers({ ...create, namespace: ns({ [LIST]: '' }, 'pending', { vault: 'on' }) })).toEqual({
      rule: 'record-initializers', reason: 'furnish.dev/initializers=furnish,secret-seeder,vault', annotations: { [LIST]: 'furnish,secret-seeder,vault' },
    });
    expect(recordInitializers({ ...create, namespace: ns({ 'furnish.dev/opt-out': 'true', [LIST]: 'forged' }) })).toMatchObject({ annotations: { [LIST]: null } });
    expect(recordInitializers({ ...create, namespace: { name: 'furnish-system', labels: {}, annotations: {} } })).toMatchObject({ skip: 'no initializer: opted out' });
  });

  it('ready-when-initialized sets ready on the update that empties the list', () => {
    expect(readyWhenInitialized(update(seeder, ns({ [LIST]: 'secret-seeder' }), ns({ [LIST]: '' })))).toMatchObject({ labels: { 'furnish.dev/phase': 'ready' } });
    expect(readyWhenInitialized(update(seeder, ns({ [LIST]: 'furnish,secret-seeder' }), ns({ [LIST]: 'secret-seeder' })))).toMatchObject({ skip: expect.any(String) });
  });

  it('pending-when-repaired: a failed namespace whose failure record is removed is pending again; nothing else moves it', () => {
    const failed = ns({ [LIST]: 'secret-seeder', 'furnish.dev/failure': 'secret-seeder: vault sealed' }, 'failed');
    expect(pendingWhenRepaired(update(alice, failed, ns({ [LIST]: 'secret-seeder' }, 'failed')))).toMatchObject({ labels: { 'furnish.dev/phase': 'pending' } });
    expect(pendingWhenRepaired(update(alice, failed, ns({ [LIST]: 'secret-seeder', 'furnish.dev/failure': 'other' }, 'failed')))).toMatchObject({ skip: expect.any(String) });
    // A requester who sets the phase itself is judged by validate-namespace, not helped here.
    expect(pendingWhenRepaired(update(alice, failed, ns({ [LIST]: 'secret-seeder' }, 'ready')))).toMatchObject({ skip: expect.any(String) });
    expect(readyWhenInitialized(update(seeder, ns({ [LIST]: 'secret-seeder' }), ns({ [LIST]: '' }, 'failed')))).toMatchObject({ skip: expect.any(String) });
  });

  it('fail-on-report marks the namespace failed with the report', () => {
    expect(failOnReport(update(seeder, ns({ [LIST]: 'secret-seeder' }), ns({ [LIST]: 'secret-seeder', 'furnish.dev/initializer-failed': 'secret-seeder: vault sealed' })))).toMatchObject({
      labels: { 'furnish.dev/phase': 'failed' }, annotations: { 'furnish.dev/failure': 'secret-seeder: vault sealed' },
    });
  });
});

describe('validate-namespace initializer rules', () => {
  it('an initializer removes itself when first, with initialize', () => {
    expect(initializersRemoveThemselvesInOrder(update(seeder, ns({ [LIST]: 'secret-seeder' }), ns({ [LIST]: '' })))).toEqual({
      rule: 'initializers-remove-themselves-in-order', refused: 'remove initializer "secret-seeder" from namespace "team-a"',
      requires: { user: seeder, verb: 'initialize', group: '', resource: 'namespaces', name: 'team-a' },
    });
  });

  it('refuses skipping the order', () => {
    expect(initializersRemoveThemselvesInOrder(update(seeder, ns({ [LIST]: 'furnish,secret-seeder' }), ns({ [LIST]: 'furnish' })))).toMatchObject({
      deny: `user "${SEEDER_SA}" may not remove initializer "secret-seeder" from namespace "team-a": initializer "furnish" runs before it and has not finished (furnish.dev/initializers="furnish,secret-seeder")`,
    });
  });

  it('refuses removing another initializer', () => {
    expect(initializersRemoveThemselvesInOrder(update(seeder, ns({ [LIST]: 'furnish,secret-seeder' }), ns({ [LIST]: 'secret-seeder' })))).toMatchObject({
      deny: `user "${SEEDER_SA}" may not remove initializer "furnish" from namespace "team-a": only its principals may (${RECONCILER})`,
    });
  });

  it('refuses any other edit of the list', () => {
    expect(initializersRemoveThemselvesInOrder(update(alice, ns({ [LIST]: 'furnish,secret-seeder' }), ns({ [LIST]: '' })))).toMatchObject({
      deny: 'user "alice" may not change annotation furnish.dev/initializers of namespace "team-a" from "furnish,secret-seeder" to "": an initializer may only remove itself, when it is first',
    });
  });

  // Issue 29: with in-tree policies mutate-namespace fails open, so a CREATE can arrive with a list
  // the requester wrote; one that skips a configured initializer is refused.
  it('at CREATE a list given is exactly the selected one; absent, or a namespace not governed, is left alone', () => {
    const create = (namespace: NamespaceInfo) => initializersAsSelected({ operation: 'CREATE', user: alice, namespace, settings, known });
    expect(create(ns({ [LIST]: 'furnish,secret-seeder,vault' }, 'pending', { vault: 'on' }))).toMatchObject({ allow: expect.any(String) });
    expect(create(ns({ [LIST]: 'furnish' }, 'pending', { vault: 'on' }))).toMatchObject({
      deny: 'user "alice" may not create namespace "team-a" with annotation furnish.dev/initializers="furnish": its initializers are "furnish,secret-seeder,vault", those whose selectors match its labels (mutate-namespace records them)',
    });
    expect(create(ns({ [LIST]: 'furnish,vault,secret-seeder' }, 'pending', { vault: 'on' }))).toMatchObject({ deny: expect.any(String) });
    expect(create(ns({}, 'pending'))).toMatchObject({ allow: 'no initializer list given' });
    expect(create(ns({ [LIST]: 'anything', 'furnish.dev/opt-out': 'true' }))).toMatchObject({ allow: 'not pending: no initializer runs' });
    expect(create(ns({ [LIST]: 'anything' }, 'ready'))).toMatchObject({ allow: 'not pending: no initializer runs' });
    expect(initializersAsSelected(update(alice, ns({ [LIST]: 'furnish' }), ns({ [LIST]: 'furnish' })))).toMatchObject({ allow: expect.any(String) });
  });

  it('a failure is reported only by the working initializer\'s principals, in the right form', () => {
    const report = (user: UserInfo, value: string, list = 'secret-seeder') => failureReportedByItsInitializer(update(user, ns({ [LIST]: list }), ns({ [LIST]: list, 'furnish.dev/initializer-failed': value })));
    expect(report(seeder, 'secret-seeder: vault sealed')).toMatchObject({ requires: { verb: 'initialize' } });
    expect(report(alice, 'secret-seeder: no')).toMatchObject({ deny: `user "alice" may not report initializer "secret-seeder" failed on namespace "team-a": only its principals may (ServiceAccount secret-seeder/seeder)` });
    expect(report(seeder, 'secret-seeder: early', 'furnish,secret-seeder')).toMatchObject({ deny: `user "${SEEDER_SA}" may not report initializer "secret-seeder" failed on namespace "team-a": the working initializer is "furnish"` });
    expect(report(seeder, 'broken')).toMatchObject({ deny: `user "${SEEDER_SA}" may not set annotation furnish.dev/initializer-failed="broken" on namespace "team-a": it must read "<initializer>: <reason>"` });
  });
});

describe('guard-initializing initializer rule', () => {
  it('has no opinion on a namespace without a list', () => {
    expect(writesWaitForInitializers({ user: alice, namespace: ns({}), known })).toBeUndefined();
  });
  it('keeps a failed namespace closed to all but holders of initialize', () => {
    expect(writesWaitForInitializers({ user: alice, namespace: ns({ 'furnish.dev/failure': 'vault: did not finish' }, 'failed'), known })).toMatchObject({
      refused: 'write into namespace "team-a", which failed to initialize (vault: did not finish)', requires: { verb: 'initialize' },
      advice: 'waiting will not help: a holder of verb "initialize" on namespace "team-a" repairs it, then removes its annotation furnish.dev/failure (Furnish then sets phase pending again)',
    });
  });

  it('a namespace a template failed: the denial says which template to fix, never "pending" or "retry"', async () => {
    const failed = ns({ [LIST]: 'furnish', 'furnish.dev/failure': 'template stall: example.com/Widget/team-a/w: NotFound (HTTP 404): not served' }, 'failed');
    const response = await HANDLERS['guard-initializing'](writeInto('team-a', alice), deps([failed]));
    expect(response).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(response.status!.message).toBe(
      'user "alice" may not write into namespace "team-a", which failed to initialize (template stall: example.com/Widget/team-a/w: NotFound (HTTP 404): not served): needs verb "initialize" on namespaces, resourceName "team-a"; '
        + 'fix NamespaceTemplate "stall" (kubectl edit namespacetemplate stall), or ask its owner to; Furnish applies the namespace\'s templates again when a template changes, and the namespace leaves phase failed once all of them apply',
    );
    expect(response.status!.message).not.toMatch(/pending|retry|few seconds/);
  });
  it('never opens a failed namespace to an initializer whose turn has not come', () => {
    const failed = ns({ [LIST]: 'furnish,secret-seeder', 'furnish.dev/failure': 'template stall: example.com/Widget/team-a/w: NotFound (HTTP 404): not served' }, 'failed');
    expect(writesWaitForInitializers({ user: seeder, namespace: failed, known })).toEqual({
      rule: 'writes-wait-for-initializers',
      deny: 'namespace "team-a" failed to initialize (template stall: example.com/Widget/team-a/w: NotFound (HTTP 404): not served): user "system:serviceaccount:secret-seeder:seeder" may not write into it as initializer "secret-seeder", whose turn comes after "furnish"',
    });
    // Anyone else still needs initialize, as before.
    expect(writesWaitForInitializers({ user: alice, namespace: failed, known })).toMatchObject({ requires: { verb: 'initialize' } });
  });
});

// ---- the handlers, as kube-apiserver calls them ------------------------------------------------

function namespaceObject(info: NamespaceInfo): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: info.name, labels: info.labels, annotations: info.annotations } };
}

function namespaceRequest(operation: 'CREATE' | 'UPDATE', user: UserInfo, after: NamespaceInfo, before?: NamespaceInfo): AdmissionRequest {
  return {
    uid: 'u1', kind: { group: '', version: 'v1', kind: 'Namespace' }, resource: { group: '', version: 'v1', resource: 'namespaces' },
    name: after.name, operation, userInfo: user, object: namespaceObject(after), oldObject: before ? namespaceObject(before) : null,
  };
}

function writeInto(namespace: string, user: UserInfo): AdmissionRequest {
  return {
    uid: 'u2', kind: { group: '', version: 'v1', kind: 'Secret' }, resource: { group: '', version: 'v1', resource: 'secrets' },
    name: 'app', namespace, operation: 'CREATE', userInfo: user, object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'app', namespace } },
  };
}

function deps(stored: NamespaceInfo[] = [], grants: Grant[] = []) {
  return { ...testDeps({ grants }), initializers: staticInitializerLookups([...CONFIGS, ...stored.map(namespaceObject)]) };
}

describe('the namespace webhooks with initializers', () => {
  it('mutate-namespace records the initializers at CREATE, replacing a forged list', async () => {
    const response = await HANDLERS['mutate-namespace'](namespaceRequest('CREATE', alice, { name: 'team-a', labels: { vault: 'on' }, annotations: { [LIST]: 'nothing' } }), deps());
    expect(response.allowed).toBe(true);
    const ops = decodePatch(response);
    expect(ops).toContainEqual({ op: 'replace', path: '/metadata/annotations/furnish.dev~1initializers', value: 'furnish,secret-seeder,vault' });
    expect(ops).toContainEqual({ op: 'add', path: '/metadata/labels/furnish.dev~1phase', value: 'pending' });
    expect(response.auditAnnotations?.initializers).toBe('furnish.dev/initializers=furnish,secret-seeder,vault');
  });

  it('validate-namespace refuses a CREATE whose hand-written list skips a configured initializer (mutate-namespace did not run)', async () => {
    const forged = await HANDLERS['validate-namespace'](namespaceRequest('CREATE', alice, { name: 'team-a', labels: { 'furnish.dev/phase': 'pending', vault: 'on' }, annotations: { [LIST]: 'furnish' } }), deps());
    expect(forged).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(forged.status!.message).toContain('its initializers are "furnish,secret-seeder,vault"');
    const recorded = await HANDLERS['validate-namespace'](namespaceRequest('CREATE', alice, { name: 'team-a', labels: { 'furnish.dev/phase': 'pending', vault: 'on' }, annotations: { [LIST]: 'furnish,secret-seeder,vault' } }), deps());
    expect(recorded).toMatchObject({ allowed: true });
  });

  it('mutate-namespace refuses with 503 when the configurations cannot be read (fails closed)', async () => {
    const broken = { ...deps(), initializers: { configurations: () => Promise.reject(new Error('HTTP 500')), namespace: async () => undefined } };
    expect(await HANDLERS['mutate-namespace'](namespaceRequest('CREATE', alice, { name: 'x', labels: {}, annotations: {} }), broken)).toMatchObject({
      allowed: false, status: { code: 503, message: 'could not list NamespaceInitializationConfigurations (HTTP 500); retry' },
    });
  });

  it('mutate-namespace sets ready on the update that removes the last initializer', async () => {
    const response = await HANDLERS['mutate-namespace'](namespaceRequest('UPDATE', seeder, ns({ [LIST]: '' }), ns({ [LIST]: 'secret-seeder' })), deps());
    expect(decodePatch(response)).toEqual([{ op: 'replace', path: '/metadata/labels/furnish.dev~1phase', value: 'ready' }]);
  });

  it('validate-namespace lets the seeder remove itself with initialize, refuses it without', async () => {
    const request = namespaceRequest('UPDATE', seeder, ns({ [LIST]: '' }, 'ready'), ns({ [LIST]: 'secret-seeder' }));
    const grant = { user: SEEDER_SA, verb: 'initialize', resource: 'namespaces', name: 'team-a' };
    expect(await HANDLERS['validate-namespace'](request, deps([], [grant]))).toMatchObject({ allowed: true });
    const refused = await HANDLERS['validate-namespace'](request, deps());
    expect(refused).toMatchObject({ allowed: false, status: { code: 403 } });
    // Both the phase change (validate-namespace's own rule) and the removal need initialize: one message each.
    expect(refused.status!.message).toContain(`user "${SEEDER_SA}" may not remove initializer "secret-seeder" from namespace "team-a": needs verb "initialize" on namespaces, resourceName "team-a"`);
  });

  // Issue 25 finding 6: namespaces/status and /finalize keep metadata changes, so they are judged like the namespace.
  it.each(['status', 'finalize'])('validate-namespace judges the list through namespaces/%s: emptying it is refused', async (subResource) => {
    const statusOnly: UserInfo = { username: 'status-writer', groups: ['system:authenticated'] };
    const before = ns({ [LIST]: 'secret-seeder' });
    const request = { ...namespaceRequest('UPDATE', statusOnly, ns({}), before), subResource };
    const refused = await HANDLERS['validate-namespace'](request, deps([], [{ user: 'status-writer', verb: 'initialize' }]));
    expect(refused).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(refused.status!.message).toContain('user "status-writer" may not remove initializer "secret-seeder" from namespace "team-a": only its principals may (ServiceAccount secret-seeder/seeder)');
    // The initializer removing itself through the subresource gets `ready` there too.
    const own = { ...namespaceRequest('UPDATE', seeder, ns({ [LIST]: '' }), before), subResource };
    expect(decodePatch(await HANDLERS['mutate-namespace'](own, deps()))).toEqual([{ op: 'replace', path: '/metadata/labels/furnish.dev~1phase', value: 'ready' }]);
  });

  // Issue 25 finding 7: `initialize` does not set the phase; an initializer whose turn has not come cannot open the namespace.
  it.each([undefined, 'status'])('validate-namespace refuses the seeder, holding initialize, setting phase=ready early (subresource %s)', async (subResource) => {
    const before = ns({ [LIST]: 'furnish,secret-seeder' });
    const request = { ...namespaceRequest('UPDATE', seeder, ns({ [LIST]: 'furnish,secret-seeder' }, 'ready'), before), ...(subResource ? { subResource } : {}) };
    const refused = await HANDLERS['validate-namespace'](request, deps([], [{ user: SEEDER_SA, verb: 'initialize' }]));
    expect(refused).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(refused.status!.message).toContain(`user "${SEEDER_SA}" may not change label furnish.dev/phase from "pending" to "ready" on namespace "team-a": only Furnish sets the phase`);
    // The reconciler sets it.
    expect(await HANDLERS['validate-namespace']({ ...request, userInfo: { username: RECONCILER } }, deps())).toMatchObject({ allowed: true });
  });

  it('a holder of initialize repairs a failed namespace by removing its failure record: Furnish sets pending', async () => {
    const failed = ns({ [LIST]: 'secret-seeder', 'furnish.dev/failure': 'secret-seeder: vault sealed' }, 'failed');
    const repair = namespaceRequest('UPDATE', alice, ns({ [LIST]: 'secret-seeder' }, 'failed'), failed);
    expect(decodePatch(await HANDLERS['mutate-namespace'](repair, deps()))).toEqual([{ op: 'replace', path: '/metadata/labels/furnish.dev~1phase', value: 'pending' }]);
    const repaired = namespaceRequest('UPDATE', alice, ns({ [LIST]: 'secret-seeder' }, 'pending'), failed);
    expect(await HANDLERS['validate-namespace'](repaired, deps([], [{ user: 'alice', verb: 'initialize' }]))).toMatchObject({ allowed: true });
    expect(await HANDLERS['validate-namespace'](repaired, deps())).toMatchObject({ allowed: false });
    // Straight to ready is not a repair: only Furnish gets it there.
    const skipped = namespaceRequest('UPDATE', alice, ns({ [LIST]: 'secret-seeder' }, 'ready'), failed);
    expect(await HANDLERS['validate-namespace'](skipped, deps([], [{ user: 'alice', verb: 'initialize' }]))).toMatchObject({ allowed: false });
  });

  // Issue 25 finding 10: a namespace that was ready and turned failed keeps its workloads running.
  it('guard-initializing lets the system controllers write into a failed namespace; the tenant stays out', async () => {
    const failed = ns({ [LIST]: '', 'furnish.dev/failure': 'template stall: example.com/Widget/team-a/w: NotFound (HTTP 404): not served' }, 'failed');
    const pod = (user: UserInfo): AdmissionRequest => ({
      ...writeInto('team-a', user), kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' },
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: 'team-a' } },
    });
    const controller = { username: 'system:serviceaccount:kube-system:replicaset-controller', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system'] };
    expect(await HANDLERS['guard-initializing'](pod(controller), deps([failed]))).toMatchObject({ allowed: true });
    expect(await HANDLERS['guard-initializing'](pod({ username: 'system:node:n1', groups: ['system:nodes'] }), deps([failed]))).toMatchObject({ allowed: true });
    expect(await HANDLERS['guard-initializing'](pod(alice), deps([failed]))).toMatchObject({ allowed: false, status: { code: 403 } });
  });

  it('guard-initializing: the working initializer writes, the next one and users wait, the reconciler always', async () => {
    const stored = ns({ [LIST]: 'furnish,secret-seeder' });
    const guard = HANDLERS['guard-initializing'];
    const refused = await guard(writeInto('team-a', seeder), deps([stored]));
    expect(refused).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(refused.status!.message).toContain('while initializer "furnish" is working (pending: furnish,secret-seeder)');
    expect(await guard(writeInto('team-a', { username: RECONCILER }), deps([stored]))).toMatchObject({ allowed: true });
    const next = ns({ [LIST]: 'secret-seeder' });
    expect(await guard(writeInto('team-a', seeder), deps([next]))).toMatchObject({ allowed: true });
    // Even a holder of initialize (an administrator) waits: only the working initializer writes.
    expect(await guard(writeInto('team-a', alice), deps([next], [{ user: 'alice', verb: 'initialize' }]))).toMatchObject({ allowed: false });
  });

  it('guard-initializing falls back to its own rules for a namespace without a list', async () => {
    const response = await HANDLERS['guard-initializing'](writeInto('old', alice), deps([{ name: 'old', labels: { 'furnish.dev/phase': 'pending' }, annotations: {} }]));
    expect(response.status?.message).toBe('namespace "old" is still being furnished; retry in a few seconds (user "alice" may not write into namespace "old" until it is furnished: needs verb "initialize" on namespaces, resourceName "old")');
  });

  it('validate-template refuses an invalid configuration listing every problem with its path', async () => {
    const object = configuration('bad', [{ name: 'furnish', principals: [] }]);
    const request: AdmissionRequest = {
      uid: 'u3', kind: { group: 'furnish.dev', version: 'v1alpha1', kind: 'NamespaceInitializationConfiguration' }, resource: { group: 'furnish.dev', version: 'v1alpha1', resource: 'namespaceinitializationconfigurations' },
      name: 'bad', operation: 'CREATE', userInfo: { username: 'admin' }, object,
    };
    expect(await HANDLERS['validate-template'](request, deps())).toMatchObject({
      allowed: false,
      status: { code: 422, message: 'NamespaceInitializationConfiguration "bad" is invalid (2 problems): spec.initializers[0].name: "furnish" is Furnish\'s own template population, the built-in first initializer; it cannot be redefined; spec.initializers[0].principals: required: at least one User, Group or ServiceAccount that completes this initializer' },
    });
    expect(await HANDLERS['validate-template']({ ...request, object: CONFIGS[0] }, deps())).toMatchObject({ allowed: true });
  });

  it('asks no SubjectAccessReview and reads nothing for a namespace update that leaves the list alone', async () => {
    const authorizer = fakeAuthorizer();
    const lookups = { configurations: () => Promise.reject(new Error('not expected')), namespace: () => Promise.reject(new Error('not expected')) };
    const request = namespaceRequest('UPDATE', alice, ns({ [LIST]: 'furnish', team: 'x' }), ns({ [LIST]: 'furnish' }));
    expect(await HANDLERS['validate-namespace'](request, { ...testDeps({ authorizer }), initializers: lookups })).toMatchObject({ allowed: true });
    expect(authorizer.calls).toEqual([]);
  });
});
