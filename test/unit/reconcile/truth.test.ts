// The pure decisions behind a truthful status: what a namespace says after a reconcile, how a
// template's status is counted, which changes the relay's drift watches pass on, and the
// coalescing of status recounts. (Drift itself, by field ownership: plan.test.ts, drift.test.ts.)
import { describe, it, expect } from '@jest/globals';
import { KEY } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { matchTemplates } from '../../../shared/render/index.ts';
import { emptyTokenProblems } from '../../../shared/render/empty-tokens.ts';
import { tokenValues } from '../../../shared/render/tokens.ts';
import type { NamespaceInfo, NamespaceTemplate } from '../../../shared/render/types.ts';
import { coalescer } from '../../../shared/reconcile/concurrency.ts';
import { recountInterval } from '../../../shared/reconcile/runtime.ts';
import { DEFAULT_DRIFT_RESOURCES, driftedNamespace, driftPath } from '../../../functions/watch-relay/lib/drift-watch.ts';
import { lastWrittenByFurnish } from '../../../shared/kube/managed-fields.ts';
import { decidePhase, failureLineFor, failureText } from '../../../shared/reconcile/phase.ts';
import { statusDiffers, templateStatus, withProgress } from '../../../shared/reconcile/report.ts';
import { addLive, holdsCurrent, tallyTemplate } from '../../../shared/reconcile/template-status.ts';
import { renderContextOf } from '../../../shared/reconcile/plan.ts';
import { renderNamespace } from '../../../shared/render/index.ts';

const ns = (labels: Record<string, string> = {}, annotations: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels, annotations } });
const failure = (template: string, message = 'subjects[0].name: Required value') => ({ template, key: `rbac.authorization.k8s.io/RoleBinding/team-a/${template}`, hash: 'h', status: 422, reason: 'Invalid', message });

describe('decidePhase', () => {
  it('failed with one line per template, sorted, and a patch only when the namespace says something else', () => {
    const d = decidePhase(ns({ [KEY.phase]: 'pending' }), [failure('b'), failure('a', 'x\n  y'), failure('a', 'second')]);
    expect(d.phase).toBe('failed');
    expect(d.failure).toBe('template a: rbac.authorization.k8s.io/RoleBinding/team-a/a: Invalid (HTTP 422): x y\ntemplate b: rbac.authorization.k8s.io/RoleBinding/team-a/b: Invalid (HTTP 422): subjects[0].name: Required value');
    expect(d.patch).toEqual({ metadata: { labels: { [KEY.phase]: 'failed' }, annotations: { [KEY.failure]: d.failure } } });
    expect(d.newFailure).toBe(true);
    const again = decidePhase(ns({ [KEY.phase]: 'failed' }, { [KEY.failure]: d.failure! }), [failure('b'), failure('a', 'x\n  y')]);
    expect(again).toMatchObject({ patch: null, newFailure: false });
  });

  it('ready removes the reason; ready and reasonless writes nothing; readyDespiteFailures keeps the reason', () => {
    expect(decidePhase(ns({ [KEY.phase]: 'failed' }, { [KEY.failure]: 'old' }), []).patch).toEqual({ metadata: { labels: { [KEY.phase]: 'ready' }, annotations: { [KEY.failure]: null } } });
    expect(decidePhase(ns({ [KEY.phase]: 'ready' }), []).patch).toBeNull();
    expect(decidePhase(ns({ [KEY.phase]: 'pending' }), [failure('a')], true)).toMatchObject({ phase: 'ready', failure: expect.stringContaining('template a:') });
  });

  it('finds the line of one template', () => {
    const text = failureText([failure('a'), failure('ab')]);
    expect(failureLineFor(text, 'a')).toMatch(/^template a: /);
    expect(failureLineFor(text, 'ab')).toMatch(/^template ab: /);
    expect(failureLineFor(text, 'c')).toBeUndefined();
  });
});

describe('empty tokens', () => {
  it('a value made only of tokens that render empty is a problem with its path; partly empty values are not', () => {
    const values = tokenValues({ namespace: 'team-a', creator: '', organization: '' });
    const raw = { subjects: [{ name: '$(CREATOR)' }], data: { who: 'owner-$(CREATOR)', org: '$(ORGANIZATION)$(CREATOR)' } };
    expect(emptyTokenProblems(raw, values, 'spec.templates[0]').map((p) => p.path)).toEqual(['spec.templates[0].subjects[0].name', 'spec.templates[0].data.org']);
    expect(emptyTokenProblems(raw, tokenValues({ namespace: 'team-a', creator: 'alice', organization: '' }), '')).toEqual([]);
  });
});

const tpl = (spec: Partial<NamespaceTemplate['spec']> = {}, meta: Partial<NamespaceTemplate['metadata']> = {}): NamespaceTemplate => ({
  apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: 't', generation: 2, creationTimestamp: '2026-01-01T00:00:10Z', ...meta },
  spec: { namespaces: { labelSelector: {} }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { v: '2' } }], ...spec },
});
const info = (name: string, created?: string): NamespaceInfo => ({ name, labels: {}, annotations: { [KEY.creator]: 'alice' }, ...(created ? { created } : {}) });

describe('existingNamespaces', () => {
  it('Ignore skips namespaces created before the template (same second counts as after); Adopt and admission (no timestamp) match', () => {
    const ignore = tpl({ existingNamespaces: 'Ignore' });
    expect(matchTemplates(info('old', '2026-01-01T00:00:09Z'), [ignore]).skipped).toEqual([{ template: 't', code: 'existed-before-template', message: expect.stringContaining('existingNamespaces: Ignore') }]);
    expect(matchTemplates(info('same', '2026-01-01T00:00:10Z'), [ignore]).matched).toHaveLength(1);
    expect(matchTemplates(info('new'), [ignore]).matched).toHaveLength(1);
    expect(matchTemplates(info('old', '2026-01-01T00:00:09Z'), [tpl()]).matched).toHaveLength(1);
  });
});

/** The hash the namespace's own reconcile applies (plan.ts renderContextOf, from the namespace object). */
const planHash = (t: NamespaceTemplate, ns: NamespaceInfo) => renderNamespace([t], renderContextOf({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns.name, labels: ns.labels, annotations: ns.annotations } })).objects[0]!.hash;

describe('template status', () => {
  const t = tpl();
  const live = (hashOf: (name: string) => string) => new Map(['a', 'b'].map((n) => [`/ConfigMap/${n}/c`, hashOf(n)]));
  const current = (n: string) => renderNamespace([t], { namespace: n, creator: 'alice', organization: '' }).objects[0]!.hash;
  const parents = [{ namespace: 'a', applied: ['t'], failed: [] }, { namespace: 'b', applied: ['t'], failed: [] }, { namespace: 'c', applied: [], failed: ['t'] }];
  const namespaces = [info('a'), info('b'), { ...info('c'), annotations: { [KEY.failure]: 'template t: /ConfigMap/c/c: Invalid (HTTP 422): nope' } }];

  it('counts a namespace as applied only when it holds this generation\'s objects', () => {
    expect(holdsCurrent(t, info('a'), live(current))).toBe(true);
    expect(holdsCurrent(t, info('a'), live(() => 'older'))).toBe(false);
    expect(holdsCurrent({ ...t, spec: { ...t.spec, mode: 'CreateOnly' } }, info('a'), live(() => 'older'))).toBe(true);
    const tally = tallyTemplate(t, namespaces, parents, live((n) => (n === 'a' ? current(n) : 'older')));
    expect(tally).toMatchObject({ generation: 2, matched: 3, applied: 1, failed: 1 });
    expect(tally.failures).toEqual([{ namespace: 'c', object: '/ConfigMap/c/c', reason: 'Invalid (HTTP 422): nope' }]);
  });

  it('renders for the count what the namespace renders: its annotations too ($(ANNOTATION:key|default))', () => {
    const byAnnotation = tpl({ templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { pods: '$(ANNOTATION:example.com/pods|5)' } }] });
    const annotated: NamespaceInfo = { ...info('a'), annotations: { ...info('a').annotations, 'example.com/pods': '10' } };
    const applied = planHash(byAnnotation, annotated);
    expect(holdsCurrent(byAnnotation, annotated, new Map([['/ConfigMap/a/c', applied]]))).toBe(true);
    // What the default renders is not what this namespace holds.
    expect(holdsCurrent(byAnnotation, annotated, new Map([['/ConfigMap/a/c', planHash(byAnnotation, info('a'))]]))).toBe(false);
  });

  it('Ready is True only when all matched namespaces are applied and no fan-out is still publishing', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const done = templateStatus(undefined, { generation: 2, matched: 2, applied: 2, failed: 0 }, now);
    expect(done.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', observedGeneration: 2 });
    const publishing = withProgress(done, 2, { published: 1, total: 2, done: false }, now);
    expect(publishing.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Progressing' });
    expect(publishing).toMatchObject({ matched: 2, applied: 2 });
    // Done, the fan-out leaves Ready to the recount: a report never makes it True from counts it did not take.
    const fresh = withProgress(undefined, 1, { published: 3, total: 3, done: true }, now);
    expect(fresh.conditions?.map((c) => c.type)).toEqual(['Propagated']);
  });

  it('is compared as a value: keys in another order (as the server returns them) are no change', () => {
    const s = templateStatus(undefined, { generation: 1, matched: 1, applied: 1, failed: 0 }, new Date());
    const sorted = JSON.parse(JSON.stringify(s, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v)));
    expect(JSON.stringify(sorted)).not.toBe(JSON.stringify(s));
    expect(statusDiffers(sorted, s)).toBe(false);
    expect(statusDiffers(sorted, { ...s, applied: 0 })).toBe(true);
  });

  it('addLive keys objects as render does', () => {
    const live = new Map<string, string>();
    addLive(live, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'a', annotations: { [KEY.appliedHash]: 'h' } } });
    expect([...live]).toEqual([['/ConfigMap/a/c', 'h']]);
  });
});

describe('coalescer', () => {
  /** A clock that only moves when the coalescer sleeps or a run says it took time. */
  const fakeClock = () => {
    const clock = { t: 0, waits: [] as number[], now: () => clock.t, sleep: async (ms: number) => { clock.waits.push(ms); clock.t += ms; } };
    return clock;
  };

  it('folds a burst into one more run that starts after the last call, at most one per interval', async () => {
    const clock = fakeClock();
    const runs: number[] = [];
    const once = coalescer<number>({ intervalMs: 1000, sleep: clock.sleep, now: clock.now });
    let n = 0;
    const fn = async () => { runs.push(++n); await new Promise((r) => setTimeout(r, 5)); return n; };
    const first = once('t', fn);
    const burst = [once('t', fn), once('t', fn), once('t', fn)];
    expect(await first).toBe(1);
    expect(await Promise.all(burst)).toEqual([2, 2, 2]);
    expect(runs).toEqual([1, 2]);
    expect(clock.waits).toEqual([1000]);
    // Another key is independent.
    expect(await coalescer<number>()('u', async () => 7)).toBe(7);
  });

  it('an interval that follows the last run\'s duration: an expensive run makes the next wait longer', async () => {
    const clock = fakeClock();
    const once = coalescer<number>({ intervalMs: (h) => Math.max(10, 5 * h.lastMs), sleep: clock.sleep, now: clock.now });
    await once('t', async () => { clock.t += 60; return 1; });
    await once('t', async () => 2);
    // The first run took 60 ms: the next started 5 × that after it began.
    expect(clock.waits).toEqual([240]);
  });

  it('a failed run may lengthen the interval, never shorten it', async () => {
    const clock = fakeClock();
    const once = coalescer<number>({ intervalMs: (h) => 5 * h.lastMs, sleep: clock.sleep, now: clock.now });
    await once('t', async () => { clock.t += 60; return 1; });
    await expect(once('t', async () => { clock.t += 1; throw new Error('refused'); })).rejects.toThrow('refused');
    await once('t', async () => 3);
    // 5 × 60 after each start: the quick failure did not make the next wait 5 × 1.
    expect(clock.waits).toEqual([240, 299]);
    await expect(once('t', async () => { clock.t += 500; throw new Error('timed out'); })).rejects.toThrow('timed out');
    await once('t', async () => 5);
    expect(clock.waits.at(-1)).toBe(2000);
  });

  it('a recount interval never exceeds its ceiling (half a delivery\'s time for calls: a queued recount runs within the time of the delivery that queued it)', () => {
    const capped = recountInterval(1000, 144_000);
    expect(capped({ lastMs: 58_000, shortestMs: 58_000, quiet: false })).toBe(144_000);
    expect(capped({ lastMs: 10, shortestMs: 10, quiet: false })).toBe(1000);
    expect(capped({ lastMs: 20_000, shortestMs: 20_000, quiet: true })).toBe(100_000);
  });

  // A recount measured beside a fan-out took 2.6 s, and the recount ending that fan-out waited 13 s.
  const share = recountInterval(0);
  /** Runs of 10 ms (idle), then 1,000 ms (under load) during which two calls queue a third: when does it start? */
  const afterSlowRun = async (opts: { quietMs?: number; callWhileWaiting?: (t: number) => boolean; joinWhileWaiting?: (t: number) => boolean }) => {
    const clock = fakeClock();
    const once = coalescer<string>({ intervalMs: share, quietMs: opts.quietMs, now: clock.now, sleep: async (ms) => {
      await clock.sleep(ms);
      if (opts.callWhileWaiting?.(clock.t)) void once('t', third);
      // The runtime acknowledges a STATUS message that a queued recount answers without waiting.
      if (opts.joinWhileWaiting?.(clock.t)) expect(once.join('t')).toBe(true);
    } });
    let thirdAt = -1;
    const third = async () => { thirdAt = clock.t; return 'third'; };
    await once('t', async () => { clock.t += 10; return 'idle'; });
    let during: Array<Promise<string>> = [];
    await once('t', async () => { clock.t += 1000; during = [once('t', third), once('t', third)]; return 'loaded'; });
    expect(await Promise.all(during)).toEqual(['third', 'third']);
    return thirdAt;
  };

  it('once callers go quiet, the run that ends a burst waits by what a run costs alone, not by the slow one before it', async () => {
    // The slow run started at 50 and ended at 1,050 with the last call; quiet at 1,150, then 5 × 10 ms since 50 has passed.
    expect(await afterSlowRun({ quietMs: 100 })).toBe(1150);
    // Without a quiet period: 5 × 1,000 ms after the slow run began.
    expect(await afterSlowRun({})).toBe(5050);
  });

  it('while calls keep arriving, the slow run still sets the interval (runs take a bounded share of the time)', async () => {
    expect(await afterSlowRun({ quietMs: 100, callWhileWaiting: (t) => t < 6000 })).toBe(5050);
    // Calls that join the queued run count the same.
    expect(await afterSlowRun({ quietMs: 100, joinWhileWaiting: (t) => t < 6000 })).toBe(5050);
  });

  it('says when a run is queued (a later caller may acknowledge without waiting)', async () => {
    const once = coalescer<number>();
    let release!: () => void;
    const first = once('t', () => new Promise<number>((r) => (release = () => r(1))));
    expect(once.join('t')).toBe(false);
    const second = once('t', async () => 2);
    expect(once.join('t')).toBe(true);
    release();
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(once.join('t')).toBe(false);
  });
});

describe('drift watch decisions', () => {
  const obj = (managers: Array<[string, string]>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'team-a', managedFields: managers.map(([manager, time]) => ({ manager, time, operation: 'Apply' })) } });

  it('a change whose newest write is the reconciler\'s own is not drift; anyone else\'s, or a deletion, is', () => {
    expect(driftedNamespace('MODIFIED', obj([['kubectl-create', '2026-01-01T00:00:00Z'], ['furnish', '2026-01-01T00:00:05Z']]))).toBeNull();
    expect(driftedNamespace('MODIFIED', obj([['furnish', '2026-01-01T00:00:00Z'], ['kubectl-edit', '2026-01-01T00:00:05Z']]))).toBe('team-a');
    // Same second: cannot tell who was last, so it is reconciled (reads only when nothing drifted).
    expect(driftedNamespace('MODIFIED', obj([['furnish', '2026-01-01T00:00:05Z'], ['kubectl-edit', '2026-01-01T00:00:05Z']]))).toBe('team-a');
    expect(driftedNamespace('DELETED', obj([['furnish', '2026-01-01T00:00:05Z']]))).toBe('team-a');
    expect(driftedNamespace('ADDED', obj([['kubectl', '2026-01-01T00:00:05Z']]))).toBeNull();
    expect(lastWrittenByFurnish(obj([]))).toBe(false);
    // A controller writing status (the real server's quota controller, subresource status) is not drift.
    const quota = obj([['furnish', '2026-01-01T00:00:00Z'], ['kube-controller-manager', '2026-01-01T00:00:05Z']]);
    (quota.metadata.managedFields as { subresource?: string }[])[1]!.subresource = 'status';
    expect(driftedNamespace('MODIFIED', quota)).toBeNull();
    (quota.metadata.managedFields as { subresource?: string }[])[1]!.subresource = undefined;
    expect(driftedNamespace('MODIFIED', quota)).toBe('team-a');
  });

  it('resources are spelled `plural` (core) or `plural.group/version`', () => {
    expect(DEFAULT_DRIFT_RESOURCES.map(driftPath)).toContain('/apis/networking.k8s.io/v1/networkpolicies');
    expect(driftPath('configmaps')).toBe('/api/v1/configmaps');
    expect(driftPath('widgets.example.dev/v1beta1')).toBe('/apis/example.dev/v1beta1/widgets');
  });
});
