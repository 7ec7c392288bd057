// The relay's pure decisions: which changes are worth a message, which namespaces are pending and
// which of them are due for a redrive, and which topic a kind's message takes.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { topicFor } from '../../../functions/watch-relay/lib/relay-publish.ts';
import { compactFingerprint, redriveAfter, RelayState } from '../../../functions/watch-relay/lib/relay-state.ts';
import { parentSeen } from '../../../functions/watch-relay/lib/relay.ts';


/** A ready namespace carries the Ready condition the reconciler writes with the phase. */
const ns = (name: string, phase?: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, uid: `uid-${name}`, resourceVersion: '1', labels: phase ? { 'furnish.dev/phase': phase } : {}, ...extra }, ...(phase === 'ready' ? { status: { conditions: [{ type: 'Ready', status: 'True' }] } } : {}) });

describe('RelayState', () => {
  it('a namespace counts as pending until it is ready, deleted or deleting', () => {
    const s = new RelayState(() => 0);
    s.observe('Namespace', ns('a', 'pending'), 'ADDED');
    s.observe('Namespace', ns('b', 'ready'), 'ADDED');
    expect(s.pendingCount).toBe(1);
    s.observe('Namespace', ns('a', 'ready'), 'MODIFIED');
    expect(s.pendingCount).toBe(0);
    s.observe('Namespace', ns('c', 'pending', { deletionTimestamp: '2026-01-01T00:00:00Z' }), 'MODIFIED');
    expect(s.pendingCount).toBe(0);
    s.observe('Namespace', ns('d', 'pending'), 'ADDED');
    expect(s.pendingCount).toBe(1);
    s.forget('Namespace', 'd');
    expect(s.pendingCount).toBe(0);
  });

  it('fingerprints a kind it is handed (LNamespaces), and refuses one it has none for', () => {
    const s = new RelayState(() => 0, { LNamespace: (o) => JSON.stringify(o.spec ?? null) });
    const lns = (spec: unknown): KubeObject => ({ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', metadata: { name: 'l', uid: 'u', resourceVersion: '1' }, spec });
    expect(s.observe('LNamespace', lns({ a: 1 }), 'ADDED')).toBe(true);
    expect(s.observe('LNamespace', { ...lns({ a: 1 }), status: { ready: true } }, 'MODIFIED')).toBe(false);
    expect(s.observe('LNamespace', lns({ a: 2 }), 'MODIFIED')).toBe(true);
    expect(() => new RelayState(() => 0).observe('LNamespace', lns({}), 'ADDED')).toThrow('relay: no fingerprint for kind LNamespace');
  });

  it('suppresses the reconciler\'s own phase=ready write; publishes real changes, and any change while not ready', () => {
    const s = new RelayState(() => 0);
    expect(s.observe('Namespace', ns('a', 'pending'), 'ADDED')).toBe(true);
    expect(s.observe('Namespace', ns('a', 'pending'), 'MODIFIED')).toBe(true); // still not ready
    expect(s.observe('Namespace', ns('a', 'ready'), 'MODIFIED')).toBe(false);
    expect(s.observe('Namespace', { ...ns('a', 'ready'), metadata: { ...ns('a', 'ready').metadata, labels: { 'furnish.dev/phase': 'ready', team: 'x' } } }, 'MODIFIED')).toBe(true);
    // An annotation a template may render ($(ANNOTATION:key|default)), set, changed, removed: a change.
    const annotated = (annotations: Record<string, string>) => ({ ...ns('a', 'ready'), metadata: { ...ns('a', 'ready').metadata, annotations } });
    expect(s.observe('Namespace', annotated({ 'furnish.dev/quota-pods': '200' }), 'MODIFIED')).toBe(true);
    expect(s.observe('Namespace', annotated({ 'furnish.dev/quota-pods': '300' }), 'MODIFIED')).toBe(true);
    // The reconciler's own record and verdict are not.
    expect(s.observe('Namespace', annotated({ 'furnish.dev/quota-pods': '300', 'furnish.dev/applied': '{"v":2}', 'furnish.dev/failure': '' }), 'MODIFIED')).toBe(false);
    // The initializers' progress is: the last one removing itself (mutate-namespace sets phase=ready
    // on that update) must reach the reconciler, the one writer of the Ready condition.
    expect(s.observe('Namespace', annotated({ 'furnish.dev/quota-pods': '300', 'furnish.dev/initializers': 'seeder' }), 'MODIFIED')).toBe(true);
    expect(s.observe('Namespace', annotated({ 'furnish.dev/quota-pods': '300', 'furnish.dev/initializers': '' }), 'MODIFIED')).toBe(true);
    expect(s.observe('Namespace', annotated({}), 'MODIFIED')).toBe(true);
    expect(s.observe('Namespace', ns('a', 'ready'), 'SYNC')).toBe(true);
    // The reconciler's own turn is not: its ready write takes `furnish` off the list (removed or
    // emptied), sets the phase and the Ready condition; no reconcile needs to follow it.
    const first = (name: string, phase: string, initializers?: string): KubeObject => ({ ...ns(name, phase), metadata: { ...ns(name, phase).metadata, annotations: initializers === undefined ? {} : { 'furnish.dev/initializers': initializers } } });
    expect(s.observe('Namespace', first('b', 'pending', 'furnish'), 'ADDED')).toBe(true);
    expect(s.observe('Namespace', first('b', 'ready'), 'MODIFIED')).toBe(false);
    expect(s.observe('Namespace', first('c', 'pending', 'furnish'), 'ADDED')).toBe(true);
    expect(s.observe('Namespace', first('c', 'ready', ''), 'MODIFIED')).toBe(false);
    // Another initializer's turn: its removal of itself (mutate-namespace sets phase=ready) is.
    expect(s.observe('Namespace', first('d', 'pending', 'furnish,seeder'), 'ADDED')).toBe(true);
    expect(s.observe('Namespace', first('d', 'pending', 'seeder'), 'MODIFIED')).toBe(true);
    expect(s.observe('Namespace', first('d', 'ready'), 'MODIFIED')).toBe(true);
    // `furnish` taken off by someone impersonating the reconciler (a stuck namespace released):
    // ready without the Ready condition the reconciler writes with it, so the reconciler is told.
    expect(s.observe('Namespace', first('e', 'pending', 'furnish'), 'ADDED')).toBe(true);
    const releasedByHand = { ...first('e', 'ready'), status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Pending' }] } };
    expect(s.observe('Namespace', releasedByHand, 'MODIFIED')).toBe(true);
    // A failed namespace being deleted: its deletion starting is a change, the steps after it are not.
    const deleting = (status: string) => ({ ...ns('f', 'failed'), metadata: { ...ns('f', 'failed').metadata, deletionTimestamp: '2026-11-23T08:00:00Z' }, status: { phase: status } });
    expect(s.observe('Namespace', ns('f', 'failed'), 'MODIFIED')).toBe(true);
    expect(s.observe('Namespace', deleting('Terminating'), 'MODIFIED')).toBe(true);
    expect(s.observe('Namespace', deleting('Terminating, contents gone'), 'MODIFIED')).toBe(false);
    expect(s.observe('Namespace', { ...deleting('x'), metadata: { ...deleting('x').metadata, annotations: { 'furnish.dev/initializer-failed': 'x: y' } } }, 'MODIFIED')).toBe(false);
    expect(s.observe('Namespace', ns('a', 'ready'), 'DELETED')).toBe(true);
  });

  it('waits longer before a redrive while namespaces take longer to be furnished (a burst queues, it loses nothing), within bounds', () => {
    const at = (ms: number, when = 0) => ({ at: when, ms });
    expect(redriveAfter(40_000, [], 0)).toBe(40_000);
    expect(redriveAfter(40_000, [at(100), at(200), at(150)], 0)).toBe(40_000);
    const burst = Array.from({ length: 100 }, (_, i) => at((i + 1) * 500)); // 0.5 s … 50 s
    expect(redriveAfter(40_000, burst, 0)).toBe(2 * 45_500);
    // At most five periods, whatever held namespaces pending (an outage, a slow initializer).
    expect(redriveAfter(40_000, [at(3_600_000)], 0)).toBe(200_000);
    // Waits older than ten minutes no longer count.
    expect(redriveAfter(40_000, burst, 10 * 60_000)).toBe(2 * 45_500);
    expect(redriveAfter(40_000, burst, 10 * 60_000 + 1)).toBe(40_000);
    let now = 0;
    const s = new RelayState(() => now);
    // Forty namespaces furnished 30 s after they were first seen pending.
    for (let i = 0; i < 40; i++) s.observe('Namespace', ns(`done-${i}`, 'pending'), 'ADDED');
    s.observe('Namespace', ns('late', 'pending'), 'ADDED');
    now = 30_000;
    for (let i = 0; i < 40; i++) s.observe('Namespace', ns(`done-${i}`, 'ready'), 'MODIFIED');
    now = 45_000;
    expect(s.dueForRedrive(40_000, 100)).toEqual([]);
    now = 60_000;
    expect(s.dueForRedrive(40_000, 100).map((c) => c.name)).toEqual(['late']);
    // A namespace deleted while pending says nothing of how long furnishing takes.
    const quick = new RelayState(() => now);
    quick.observe('Namespace', ns('gone', 'pending'), 'ADDED');
    now = 200_000;
    quick.observe('Namespace', ns('gone', 'pending'), 'DELETED');
    quick.observe('Namespace', ns('x', 'pending'), 'ADDED');
    now = 240_000;
    expect(quick.dueForRedrive(40_000, 100).map((c) => c.name)).toEqual(['x']);
  });

  it('re-drives namespaces pending for the period since their last message, at most `limit` per call', () => {
    let now = 1_000;
    const s = new RelayState(() => now);
    for (const n of ['a', 'b', 'c']) s.observe('Namespace', ns(n, 'pending'), 'ADDED');
    s.observe('Namespace', ns('ok', 'ready'), 'ADDED');
    expect(s.dueForRedrive(40_000, 100)).toEqual([]);
    now += 40_000;
    expect(s.dueForRedrive(40_000, 2).map((c) => `${c.type} ${c.name}`)).toEqual(['SYNC a', 'SYNC b']);
    // The next tick takes the one left over; the two just sent wait a full period again.
    expect(s.dueForRedrive(40_000, 2).map((c) => c.name)).toEqual(['c']);
    now += 39_999;
    expect(s.dueForRedrive(40_000, 100)).toEqual([]);
    now += 1;
    expect(s.dueForRedrive(40_000, 100).map((c) => c.name)).toEqual(['a', 'b', 'c']);
  });
});

describe('topicFor', () => {
  const topics = { namespaces: 'ns', templates: 'tpl', lnamespaces: 'lns' };
  it('one topic per kind: every namespace message on the namespaces topic, pending or not (its ordering key serializes it there)', () => {
    expect(topicFor(topics, 'Namespace')).toBe('ns');
    expect(topicFor(topics, 'NamespaceTemplate')).toBe('tpl');
    expect(topicFor(topics, 'LNamespace')).toBe('lns');
  });
});

describe('what the relay keeps per object (memory flat in the number of namespaces)', () => {
  it('keeps 48 bits of a hex fingerprint as a number, and any other fingerprint as it is', () => {
    const digest = 'a1b2c3d4e5f60718';
    expect(compactFingerprint(digest)).toBe(0xa1b2c3d4e5f6);
    expect(compactFingerprint('a1b2c3d4e5f69999')).toBe(compactFingerprint(digest));
    expect(compactFingerprint('a1b2c3d4e5f7ffff')).not.toBe(compactFingerprint(digest));
    expect(compactFingerprint('{"a":1}')).toBe('{"a":1}');
  });

  it('still tells a namespace change its reconciler sees from one it does not', () => {
    const s = new RelayState(() => 0);
    expect(s.observe('Namespace', ns('a', 'ready'), 'ADDED')).toBe(true);
    expect(s.observe('Namespace', ns('a', 'ready', { resourceVersion: '2' }), 'MODIFIED')).toBe(false);
    expect(s.observe('Namespace', ns('a', 'ready', { resourceVersion: '3', annotations: { team: 'x' } }), 'MODIFIED')).toBe(true);
  });

  it("indexes an ApplySet parent by its namespace and resourceVersion, without its uid", () => {
    const parent: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'furnish-applyset', namespace: 'team-a', uid: 'uid-parent', resourceVersion: '7', generation: 1 } };
    expect(parentSeen(parent)).toEqual({ name: 'team-a', uid: '', resourceVersion: '7' });
  });
});
