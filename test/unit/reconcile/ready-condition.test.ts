// The namespace's Ready condition (kubectl wait --for=condition=Ready namespace/x): decided from
// the phase, the failure and the initializers the namespace will have once a patch is applied.
import { describe, expect, it } from '@jest/globals';
import { KEY } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { readyCondition, withReadyCondition } from '../../../shared/reconcile/phase.ts';

const NOW = new Date('2026-11-27T10:00:00.123Z');
const ns = (labels: Record<string, string>, annotations: Record<string, string> = {}, conditions?: object[]): KubeObject => ({
  apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels, annotations }, ...(conditions ? { status: { phase: 'Active', conditions } } : {}),
});

describe('readyCondition', () => {
  it('is True when ready, False with reason Pending or Failed otherwise, and absent without a phase', () => {
    expect(readyCondition({ [KEY.phase]: 'ready' }, {})).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(readyCondition({ [KEY.phase]: 'pending' }, {})).toEqual({ type: 'Ready', status: 'False', reason: 'Pending', message: 'being furnished' });
    expect(readyCondition({ [KEY.phase]: 'pending' }, { 'furnish.dev/initializers': 'vault,seeder' })).toMatchObject({ reason: 'Pending', message: 'waiting for initializer vault (then seeder)' });
    expect(readyCondition({ [KEY.phase]: 'failed' }, { [KEY.failure]: 'template a: x: Invalid (HTTP 422): bad' })).toMatchObject({ status: 'False', reason: 'Failed', message: 'template a: x: Invalid (HTTP 422): bad' });
    expect(readyCondition({}, {})).toBeUndefined();
  });

  it('keeps its message short: the full failure stays in the annotation', () => {
    expect(readyCondition({ [KEY.phase]: 'failed' }, { [KEY.failure]: 'x'.repeat(5000) })!.message.length).toBeLessThanOrEqual(1024);
  });
});

describe('withReadyCondition', () => {
  it('adds the condition the patched namespace calls for to the same patch', () => {
    const patch = { metadata: { labels: { [KEY.phase]: 'ready' } } };
    expect(withReadyCondition(ns({ [KEY.phase]: 'pending' }), patch, NOW)).toEqual({
      ...patch,
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: expect.any(String), lastTransitionTime: '2026-11-27T10:00:00Z' }] },
    });
  });

  it('writes nothing when the namespace already says it, and the condition alone when only it is missing (an upgrade)', () => {
    const said = readyCondition({ [KEY.phase]: 'ready' }, {})!;
    expect(withReadyCondition(ns({ [KEY.phase]: 'ready' }, {}, [{ ...said, lastTransitionTime: '2026-01-01T00:00:00Z' }]), null, NOW)).toBeNull();
    expect(withReadyCondition(ns({ [KEY.phase]: 'ready' }), null, NOW)).toEqual({ metadata: {}, status: { conditions: [{ ...said, lastTransitionTime: '2026-11-27T10:00:00Z' }] } });
  });

  it('moves the transition time only when the status changes', () => {
    const pending = { ...readyCondition({ [KEY.phase]: 'pending' }, { 'furnish.dev/initializers': 'furnish,vault' })!, lastTransitionTime: '2026-01-01T00:00:00Z' };
    const nextInitializer = withReadyCondition(ns({ [KEY.phase]: 'pending' }, { 'furnish.dev/initializers': 'furnish,vault' }, [pending]), { metadata: { annotations: { 'furnish.dev/initializers': 'vault' } } }, NOW);
    expect(nextInitializer?.status?.conditions[0]).toMatchObject({ status: 'False', message: 'waiting for initializer vault', lastTransitionTime: '2026-01-01T00:00:00Z' });
    const failed = withReadyCondition(ns({ [KEY.phase]: 'pending' }, {}, [pending]), { metadata: { labels: { [KEY.phase]: 'failed' }, annotations: { [KEY.failure]: 'boom' } } }, NOW);
    expect(failed?.status?.conditions[0]).toMatchObject({ status: 'False', reason: 'Failed', message: 'boom', lastTransitionTime: '2026-01-01T00:00:00Z' });
    const ready = withReadyCondition(ns({ [KEY.phase]: 'pending' }, {}, [pending]), { metadata: { labels: { [KEY.phase]: 'ready' } } }, NOW);
    expect(ready?.status?.conditions[0]).toMatchObject({ status: 'True', lastTransitionTime: '2026-11-27T10:00:00Z' });
  });

  it('collapses several Ready conditions (written before furnish-phase-and-ready judged them all) into one, transitioned now, even when the first already says it', () => {
    const said = { ...readyCondition({ [KEY.phase]: 'ready' }, {})!, lastTransitionTime: '2026-01-01T00:00:00Z' };
    const forged = { type: 'Ready', status: 'False', reason: 'Pending', message: 'forged' };
    expect(withReadyCondition(ns({ [KEY.phase]: 'ready' }, {}, [said, { type: 'Other' }, forged]), null, NOW)).toEqual({
      metadata: {},
      status: { conditions: [{ type: 'Ready', $patch: 'delete' }, { ...said, lastTransitionTime: '2026-11-27T10:00:00Z' }] },
    });
    // A forged first one that happens to say it keeps no time of its own either.
    const forgedFirst = { ...said, lastTransitionTime: '2000-01-01T00:00:00Z' };
    expect(withReadyCondition(ns({ [KEY.phase]: 'ready' }, {}, [forgedFirst, forged]), null, NOW)?.status?.conditions.at(-1)).toMatchObject({ status: 'True', lastTransitionTime: '2026-11-27T10:00:00Z' });
    expect(withReadyCondition(ns({ [KEY.phase]: 'ready' }, {}, [said, { type: 'Other' }]), null, NOW)).toBeNull();
  });

  it('leaves a namespace without a phase alone', () => {
    expect(withReadyCondition(ns({}), null, NOW)).toBeNull();
  });
});
