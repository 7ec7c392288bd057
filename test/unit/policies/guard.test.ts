// furnish-guard: writes into a namespace that is not furnished yet, as guard-initializing judges them.
import { describe, expect, it } from '@jest/globals';
import { defaultPolicySettings } from '../../../shared/config/types.ts';
import { INITIALIZER_KEY } from '../../../shared/initializers/keys.ts';
import { KEY, PHASE } from '../../../shared/keys.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { GUARDED_RESOURCES } from '../../../shared/policies/guard.ts';
import { judgeWith, namespace, writeInto, type Grant } from './harness.ts';

const settings = defaultPolicySettings();
const judge = judgeWith(settings);
const alice = { username: 'alice', groups: ['dev'] };
const RECONCILER = { username: settings.guard.reconciler[0]! };
const pending = namespace({ name: 'team-a', labels: { [KEY.phase]: PHASE.pending } });
const failed = namespace({ name: 'team-a', labels: { [KEY.phase]: PHASE.failed }, annotations: { [KEY.failure]: 'template net: networking.k8s.io/NetworkPolicy/team-a/deny: Invalid (HTTP 422): bad\ntemplate q: x' } });
const initialize: Grant[] = [{ user: 'alice', verb: 'initialize', resource: 'namespaces', name: 'team-a' }];

describe('furnish-guard', () => {
  it.each(['CREATE', 'UPDATE', 'DELETE'] as const)('refuses a tenant writing into its pending namespace before it is furnished (%s)', (op) => {
    expect(judge(writeInto(op, alice, pending)).message).toContain('namespace "team-a" is still being furnished; retry in a few seconds (user "alice" may not write into namespace "team-a" until it is furnished: needs verb "initialize" on namespaces, resourceName "team-a")');
  });

  it('refuses writes into a failed namespace, quoting its failure on one line', () => {
    const { message } = judge(writeInto('CREATE', alice, failed));
    expect(message).toContain('user "alice" may not write into namespace "team-a", which failed to initialize (template net: networking.k8s.io/NetworkPolicy/team-a/deny: Invalid (HTTP 422): bad; template q: x)');
    expect(message).not.toContain('\n');
    // Pending initializers do not open a failed namespace.
    expect(judge(writeInto('CREATE', alice, { ...failed, metadata: { ...failed.metadata, annotations: { ...failed.metadata.annotations, [INITIALIZER_KEY.initializers]: 'vault' } } })).allowed).toBe(false);
  });

  it('allows the reconciler, the system controllers, and holders of initialize on that namespace only', () => {
    expect(judge(writeInto('CREATE', RECONCILER, pending)).allowed).toBe(true);
    expect(judge(writeInto('DELETE', { username: 'system:serviceaccount:kube-system:namespace-controller' }, failed)).allowed).toBe(true);
    expect(judge(writeInto('CREATE', { username: 'system:node:n1', groups: ['system:nodes'] }, pending)).allowed).toBe(true);
    expect(judge(writeInto('UPDATE', alice, failed), initialize).allowed).toBe(true);
    expect(judge(writeInto('UPDATE', alice, failed), [{ ...initialize[0]!, name: 'other' }]).allowed).toBe(false);
  });

  it('leaves writes into a pending namespace with pending initializers to guard-initializing (whose turn it is is state)', () => {
    const initializing = namespace({ name: 'team-a', labels: { [KEY.phase]: PHASE.pending }, annotations: { [INITIALIZER_KEY.initializers]: 'furnish,vault' } });
    expect(judge(writeInto('CREATE', alice, initializing)).allowed).toBe(true);
    const emptied = namespace({ name: 'team-a', labels: { [KEY.phase]: PHASE.pending }, annotations: { [INITIALIZER_KEY.initializers]: ' , ' } });
    expect(judge(writeInto('CREATE', alice, emptied)).allowed).toBe(false);
  });

  it('judges the subresources that act on a workload or issue a credential (eviction, ephemeral containers, a token, scale) in pending namespaces, as guard-initializing does; not status', () => {
    const sub = (resource: string, subResource: string, operation: 'CREATE' | 'UPDATE', ns = failed) => ({ ...writeInto(operation, alice, ns), resource: { group: '', version: 'v1', resource }, subResource });
    for (const [resource, subResource, operation] of [['pods', 'eviction', 'CREATE'], ['pods', 'ephemeralcontainers', 'UPDATE'], ['serviceaccounts', 'token', 'CREATE'], ['replicationcontrollers', 'scale', 'UPDATE']] as const) {
      expect([subResource, judge(sub(resource, subResource, operation, pending)).message]).toEqual([subResource, expect.stringContaining('namespace "team-a" is still being furnished')]);
      // In a failed namespace, what already runs keeps running: add-ons' evictions, scaling, tokens (subresourceLeftOpen).
      expect([subResource, judge(sub(resource, subResource, operation)).allowed]).toEqual([subResource, true]);
    }
    // The kubelet's token requests go on (a system principal); status is not judged.
    expect(judge({ ...sub('serviceaccounts', 'token', 'CREATE', pending), userInfo: { username: 'system:node:n1', groups: ['system:nodes'] } }).allowed).toBe(true);
    expect(judge(sub('pods', 'status', 'UPDATE', pending)).allowed).toBe(true);
    const registration = parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'infra', 'webhooks', 'guard-initializing.yaml'), 'utf8')) as { webhooks: Array<{ rules: Array<{ resources: string[] }> }> };
    expect(registration.webhooks[0]!.rules.map((r) => r.resources)).toEqual([[...GUARDED_RESOURCES]]);
  });

  it('does not judge furnished namespaces, or ones without the phase label', () => {
    for (const labels of [{ [KEY.phase]: PHASE.ready }, {}] as Record<string, string>[]) expect(judge(writeInto('CREATE', alice, namespace({ name: 'b', labels }))).allowed).toBe(true);
  });
});
