// reconcile-organization's handler: which namespace messages it acts on, and that a skipped one
// costs no API call.
import { describe, expect, it } from '@jest/globals';
import type { ReconcileMessage } from '../../../shared/bus/envelope.ts';
import { concernsOrganizations, reconcileOrganizationsOf } from '../../../shared/org/function.ts';
import type { Runtime } from '../../../shared/reconcile/runtime.ts';

const message = (type: ReconcileMessage['type']): ReconcileMessage => ({ v: 1, cluster: 'local', kind: 'Namespace', name: 'team-a', type });

describe('reconcile-organization', () => {
  it('acts on every namespace event but a template fan-out', () => {
    for (const type of ['ADDED', 'MODIFIED', 'DELETED', 'SYNC'] as const) expect(concernsOrganizations(message(type))).toBe(true);
    expect(concernsOrganizations(message('FANOUT'))).toBe(false);
  });

  it('acknowledges a fan-out without asking the API server anything', async () => {
    let asked = 0;
    const rt = { config: { cluster: 'local' }, cluster: async () => { asked += 1; throw new Error('no cluster should be needed'); } } as unknown as Runtime;
    await expect(reconcileOrganizationsOf(rt, message('FANOUT'))).resolves.toEqual({ skipped: 'a template fan-out changes no organization membership' });
    expect(asked).toBe(0);
    await expect(reconcileOrganizationsOf(rt, message('MODIFIED'))).rejects.toThrow(/no cluster should be needed/);
    expect(asked).toBe(1);
  });
});
