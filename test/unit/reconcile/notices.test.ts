// A fan-out's namespaces tell reconcile-template together: one STATUS message per template for
// the notices an instance gathers in a window, not one per namespace.
import { describe, expect, it } from '@jest/globals';
import { gatherNotices } from '../../../shared/reconcile/concurrency.ts';

describe('gatherNotices', () => {
  it('sends the notices of one window once, the union of their templates, caused by the first namespace', async () => {
    const sent: [string, string[]][] = [];
    const notify = gatherNotices(20, async (cause, templates) => void sent.push([cause, templates]));
    await Promise.all([notify('team-a', ['quota', 'rbac']), notify('team-b', ['quota']), notify('team-c', ['net'])]);
    expect(sent).toEqual([['namespace/team-a+2', ['net', 'quota', 'rbac']]]);
  });

  it('a notice after the window was sent opens a new one', async () => {
    const sent: [string, string[]][] = [];
    const notify = gatherNotices(5, async (cause, templates) => void sent.push([cause, templates]));
    await notify('team-a', ['quota']);
    await notify('team-b', ['rbac']);
    expect(sent).toEqual([['namespace/team-a', ['quota']], ['namespace/team-b', ['rbac']]]);
  });

  it('every namespace of the window hears that the send failed', async () => {
    const notify = gatherNotices(5, async () => {
      throw new Error('2 of 2 STATUS publishes failed');
    });
    const results = await Promise.allSettled([notify('team-a', ['quota']), notify('team-b', ['rbac'])]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
