// The namespace write after a reconcile when pluggable initializers are on: failures make it
// `failed` (decidePhase), success ends Furnish's own initializer and nothing else.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { decideAfterReconcile } from '../../../shared/reconcile/phase.ts';
import type { ObjectFailure } from '../../../shared/reconcile/report.ts';

const ns = (phase: string, annotations: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', resourceVersion: '42', labels: { 'furnish.dev/phase': phase }, annotations },
});
const failure: ObjectFailure = { template: 'stall', key: 'example.com/Widget/team-a/w', hash: '', status: 404, reason: 'NotFound', message: 'not served' };

describe('decideAfterReconcile', () => {
  it('removes furnish from the front, compare-and-swap, and leaves the phase pending while others follow', () => {
    expect(decideAfterReconcile(ns('pending', { 'furnish.dev/initializers': 'furnish,vault' }), [])).toEqual({
      phase: 'pending', failure: null, newFailure: false,
      patch: { metadata: { resourceVersion: '42', annotations: { 'furnish.dev/initializers': 'vault' } } },
    });
  });

  it('makes the namespace ready when furnish was the last initializer', () => {
    expect(decideAfterReconcile(ns('pending', { 'furnish.dev/initializers': 'furnish' }), []).patch).toEqual({
      metadata: { resourceVersion: '42', annotations: { 'furnish.dev/initializers': '' }, labels: { 'furnish.dev/phase': 'ready' } },
    });
  });

  it('recovers from an earlier Furnish failure: the reason is cleared, the phase back to pending', () => {
    const failed = ns('failed', { 'furnish.dev/initializers': 'furnish,vault', 'furnish.dev/failure': 'template stall: ...' });
    expect(decideAfterReconcile(failed, []).patch).toEqual({
      metadata: { resourceVersion: '42', annotations: { 'furnish.dev/initializers': 'vault', 'furnish.dev/failure': null }, labels: { 'furnish.dev/phase': 'pending' } },
    });
  });

  it('writes nothing while another initializer works, or after it failed', () => {
    expect(decideAfterReconcile(ns('pending', { 'furnish.dev/initializers': 'vault' }), []).patch).toBeNull();
    expect(decideAfterReconcile(ns('failed', { 'furnish.dev/initializers': 'vault', 'furnish.dev/failure': 'vault: timed out' }), []).patch).toBeNull();
  });

  it('under readyDespiteFailures, ends furnish\'s turn and records the reason all the same (template status reads it)', () => {
    const text = 'template stall: example.com/Widget/team-a/w: NotFound (HTTP 404): not served';
    expect(decideAfterReconcile(ns('pending', { 'furnish.dev/initializers': 'furnish' }), [failure], true)).toEqual({
      phase: 'ready', failure: text, newFailure: true,
      patch: { metadata: { resourceVersion: '42', annotations: { 'furnish.dev/initializers': '', 'furnish.dev/failure': text }, labels: { 'furnish.dev/phase': 'ready' } } },
    });
    // Recorded already: nothing more to say about it.
    expect(decideAfterReconcile(ns('pending', { 'furnish.dev/initializers': 'furnish,vault', 'furnish.dev/failure': text }), [failure], true)).toEqual({
      phase: 'pending', failure: text, newFailure: false, patch: { metadata: { resourceVersion: '42', annotations: { 'furnish.dev/initializers': 'vault' } } },
    });
  });

  it('marks a failure failed whatever the list says, and without a list behaves as decidePhase', () => {
    const withList = decideAfterReconcile(ns('pending', { 'furnish.dev/initializers': 'furnish,vault' }), [failure]);
    expect(withList).toMatchObject({ phase: 'failed', newFailure: true, patch: { metadata: { labels: { 'furnish.dev/phase': 'failed' } } } });
    expect(decideAfterReconcile(ns('pending'), [])).toMatchObject({ phase: 'ready', patch: { metadata: { labels: { 'furnish.dev/phase': 'ready' } } } });
  });
});
