// kube-sim's namespace controller: the deletion conditions it writes through namespaces/status and
// its backoff while admission refuses its writes (as kube-controller-manager's, seen in the audit
// logs of 1.26.3 and 1.32.0-rc.0).
import { describe, expect, it } from '@jest/globals';
import { refusalBackoffMs, withDeletionConditions } from '../../support/kube-sim/controllers.ts';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:00:05Z';

describe('withDeletionConditions', () => {
  it('keeps the other conditions first, then its five in the controller\'s order, each new one stamped now', () => {
    const ready = { type: 'Ready', status: 'True', reason: 'Populated', message: 'ok', lastTransitionTime: T0 };
    const conditions = withDeletionConditions([ready], T1);
    expect(conditions[0]).toBe(ready);
    expect(conditions.slice(1).map((c) => [c.type, c.status, c.reason, c.lastTransitionTime])).toEqual([
      ['NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered', T1],
      ['NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions', T1],
      ['NamespaceDeletionContentFailure', 'False', 'ContentDeleted', T1],
      ['NamespaceContentRemaining', 'False', 'ContentRemoved', T1],
      ['NamespaceFinalizersRemaining', 'False', 'ContentHasNoFinalizers', T1],
    ]);
  });

  it('changes nothing the second time (no second status write), and restamps only a condition that changed', () => {
    const first = withDeletionConditions([], T0);
    expect(withDeletionConditions(first, T1)).toEqual(first);
    const failing = first.map((c) => (c.type === 'NamespaceContentRemaining' ? { ...c, status: 'True', reason: 'SomeResourcesRemain' } : c));
    const again = withDeletionConditions(failing, T1);
    expect(again.map((c) => c.lastTransitionTime)).toEqual([T0, T0, T0, T1, T0]);
  });
});

describe('refusalBackoffMs', () => {
  it('starts at 5 ms and doubles at each refusal, up to 5 s', () => {
    expect([1, 2, 3, 10, 11, 12, 100].map(refusalBackoffMs)).toEqual([5, 10, 20, 2560, 5000, 5000, 5000]);
  });
});
