// What the local stack installs as its components' identities (scripts/start/identities.ts):
// infra/'s ServiceAccounts of the reconciler, the webhooks and the relay, the bindings that name
// them and the roles those bind; nothing infra/ offers administrators to grant to users.
import { describe, expect, it } from '@jest/globals';
import { identityObjects } from '../../../scripts/start/identities.ts';
import { loadKustomization } from '../../../shared/install/manifests.ts';

const names = (kind: string) => identityObjects().filter((o) => o.kind === kind).map((o) => o.metadata.name).sort();

describe('identityObjects', () => {
  it('the three ServiceAccounts in furnish-system, first', () => {
    const objects = identityObjects();
    expect(names('ServiceAccount')).toEqual(['furnish-reconciler', 'furnish-relay', 'furnish-webhook']);
    expect(objects.filter((o) => o.kind === 'ServiceAccount').every((o) => o.metadata.namespace === 'furnish-system')).toBe(true);
    expect(objects.slice(0, 3).map((o) => o.kind)).toEqual(['ServiceAccount', 'ServiceAccount', 'ServiceAccount']);
  });

  it('every binding names a component; every role is bound to one', () => {
    const objects = identityObjects();
    const bindings = objects.filter((o) => o.kind.endsWith('Binding'));
    for (const b of bindings) {
      expect((b.subjects as Array<{ kind: string; namespace?: string }>).some((s) => s.kind === 'ServiceAccount' && s.namespace === 'furnish-system')).toBe(true);
    }
    const bound = new Set(bindings.map((b) => (b.roleRef as { name: string }).name));
    expect(names('ClusterRole').every((n) => bound.has(n!))).toBe(true);
    expect(names('ClusterRole')).toEqual(expect.arrayContaining(['furnish-reconciler', 'furnish-reconciler-bind', 'furnish-reconciler-lnamespaces', 'furnish-relay', 'furnish-webhook']));
  });

  it('leaves out what infra/ grants users (the LNamespace requester binding of system:authenticated, furnish:optout)', () => {
    const all = loadKustomization().map((o) => o.metadata.name);
    expect(all).toEqual(expect.arrayContaining(['furnish:lnamespace-requester', 'furnish:optout']));
    const installed = identityObjects().map((o) => o.metadata.name);
    expect(installed).not.toContain('furnish:lnamespace-requester');
    expect(installed).not.toContain('furnish:optout');
  });

  it('fills infra/\'s variables: no ${FURNISH_*} is left', () => {
    expect(JSON.stringify(identityObjects())).not.toMatch(/\$\{FURNISH_/);
  });
});
