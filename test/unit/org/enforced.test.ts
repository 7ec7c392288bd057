// The Enforced condition: an Organization created while the organization rules are off says so in
// its status (issue 28: it was accepted and silently did nothing), written by reconcile-organization.
import { describe, expect, it } from '@jest/globals';
import type { KubeCall, KubeResult } from '../../../shared/kube/http.ts';
import { ENFORCED, withEnforcement } from '../../../shared/org/enforced.ts';
import { rulesEnforced } from '../../../shared/org/function.ts';
import { reconcileOrganization, reconcileOrganizations } from '../../../shared/org/reconcile.ts';
import { memoryOrganizations } from '../../../shared/org/source.ts';
import { namespaceObject, organization } from '../../support/organizations.ts';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const AT = '2026-11-22T12:00:00Z';

const noNamespaces = async <T,>(_call: KubeCall): Promise<KubeResult<T>> => ({ ok: true, status: 200, data: { items: [] } as T });

describe('the Enforced condition of an Organization', () => {
  it('rules off: False, reason RulesOff, naming the setting; rules on: True, RulesOn', () => {
    const off = withEnforcement({ namespaces: 0 }, false, NOW)!;
    expect(off.conditions).toEqual([{ type: ENFORCED, status: 'False', reason: 'RulesOff', message: expect.stringContaining('FURNISH_ORGANIZATIONS'), lastTransitionTime: AT }]);
    expect(off.conditions![0]!.message).toContain('decides nothing');
    expect(off.namespaces).toBe(0);
    expect(withEnforcement(undefined, true, NOW)!.conditions).toEqual([expect.objectContaining({ type: ENFORCED, status: 'True', reason: 'RulesOn' })]);
  });

  it('writes nothing when the condition already says so, or when the reconciler was not told', () => {
    const off = withEnforcement({}, false, NOW)!;
    expect(withEnforcement(off, false, NOW + 60_000)).toBeUndefined();
    expect(withEnforcement({}, undefined, NOW)).toBeUndefined();
    expect(withEnforcement(off, undefined, NOW)).toBeUndefined();
  });

  it('turning the rules on flips it (new transition time) and keeps the other conditions', () => {
    const other = { type: 'Other', status: 'True' as const, reason: 'X', message: 'x', lastTransitionTime: '2026-01-01T00:00:00Z' };
    const off = withEnforcement({ conditions: [other] }, false, NOW)!;
    const on = withEnforcement(off, true, NOW + 60_000)!;
    expect(on.conditions).toEqual([other, expect.objectContaining({ type: ENFORCED, status: 'True', lastTransitionTime: '2026-11-22T12:01:00Z' })]);
  });

  it('reads FURNISH_ORGANIZATIONS when set, and nothing when unset (the rules may be on in the webhooks\' file)', () => {
    expect(rulesEnforced({ FURNISH_ORGANIZATIONS: 'false' })).toBe(false);
    expect(rulesEnforced({ FURNISH_ORGANIZATIONS: 'true' })).toBe(true);
    expect(rulesEnforced({})).toBeUndefined();
    expect(() => rulesEnforced({ FURNISH_ORGANIZATIONS: 'yes' })).toThrow(/FURNISH_ORGANIZATIONS/);
  });

  it('reconcile-organization writes it on a resync and on a namespace event, even when the count is unchanged', async () => {
    const api = memoryOrganizations([organization('acme', [], { status: { namespaces: 0, reservations: [] } }), organization('globex', [], { status: { namespaces: 0, reservations: [] } })]);
    await expect(reconcileOrganizations(api, noNamespaces, () => NOW)).resolves.toMatchObject({ updated: [] });
    await expect(reconcileOrganizations(api, noNamespaces, () => NOW, false)).resolves.toMatchObject({ updated: ['acme', 'globex'] });
    expect(api.organizations.get('acme')!.status).toEqual({ namespaces: 0, reservations: [], conditions: [expect.objectContaining({ type: ENFORCED, status: 'False', reason: 'RulesOff' })] });
    await expect(reconcileOrganizations(api, noNamespaces, () => NOW, false)).resolves.toMatchObject({ updated: [] });
    const one = async <T,>(_call: KubeCall): Promise<KubeResult<T>> => ({ ok: true, status: 200, data: { items: [namespaceObject('acme-1', { 'furnish.dev/organization': 'acme' })] } as T });
    await expect(reconcileOrganization(api, one, 'acme', () => NOW, {}, true)).resolves.toMatchObject({ updated: ['acme'] });
    expect(api.organizations.get('acme')!.status).toMatchObject({ namespaces: 1, conditions: [expect.objectContaining({ status: 'True', reason: 'RulesOn' })] });
  });
});
