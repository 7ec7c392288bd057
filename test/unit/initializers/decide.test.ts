import { describe, expect, it } from '@jest/globals';
import { furnishInitializer, mergeConfigurations } from '../../../shared/initializers/config.ts';
import { furnishCompletion, guardWhileInitializing, listChange, parseFailureReport, pendingInitializers, phaseFromUpdate, timedOut } from '../../../shared/initializers/decide.ts';
import { configuration, RECONCILER, SEEDER, SEEDER_SA, VAULT } from './helpers.ts';

const list = (v: string) => ({ 'furnish.dev/initializers': v });
const known = [furnishInitializer([RECONCILER]), ...mergeConfigurations([configuration('c', [SEEDER, VAULT])]).initializers];

describe('the pending list', () => {
  it('reads absent as "no list" and empty as done', () => {
    expect(pendingInitializers({})).toBeUndefined();
    expect(pendingInitializers(list(''))).toEqual([]);
    expect(pendingInitializers(list('furnish, secret-seeder'))).toEqual(['furnish', 'secret-seeder']);
  });

  it('judges each change: only the first entry may go', () => {
    expect(listChange(list('furnish,secret-seeder'), list('furnish,secret-seeder'))).toEqual({ kind: 'unchanged' });
    expect(listChange(list('furnish,secret-seeder'), list('secret-seeder'))).toEqual({ kind: 'completed', initializer: 'furnish', rest: ['secret-seeder'] });
    expect(listChange(list('secret-seeder'), {})).toEqual({ kind: 'completed', initializer: 'secret-seeder', rest: [] });
    expect(listChange(list('furnish,secret-seeder'), list('furnish'))).toEqual({ kind: 'out-of-order', initializer: 'secret-seeder', current: 'furnish' });
    expect(listChange(list('furnish,secret-seeder'), list(''))).toEqual({ kind: 'edited' });
    expect(listChange(list('furnish,secret-seeder'), list('secret-seeder,furnish'))).toEqual({ kind: 'edited' });
    expect(listChange(list('furnish'), list('furnish,vault'))).toEqual({ kind: 'edited' });
    expect(listChange({}, list('furnish'))).toEqual({ kind: 'edited' });
  });

  it('phaseFromUpdate: the phase Furnish gives for what the update does to the annotations', () => {
    const at = (phase: string, annotations: Record<string, string>) => ({ labels: { 'furnish.dev/phase': phase }, annotations });
    expect(phaseFromUpdate(at('pending', list('secret-seeder')), list(''))).toBe('ready');
    expect(phaseFromUpdate(at('pending', list('furnish,secret-seeder')), list('secret-seeder'))).toBeUndefined();
    expect(phaseFromUpdate(at('failed', list('secret-seeder')), list(''))).toBeUndefined();
    expect(phaseFromUpdate(at('pending', list('secret-seeder')), { ...list('secret-seeder'), 'furnish.dev/initializer-failed': 'secret-seeder: sealed' })).toBe('failed');
    expect(phaseFromUpdate(at('failed', { ...list('secret-seeder'), 'furnish.dev/failure': 'secret-seeder: sealed' }), list('secret-seeder'))).toBe('pending');
    // Nothing about the phase itself: the requester who only writes the label gets no derived phase.
    expect(phaseFromUpdate(at('pending', list('furnish,secret-seeder')), list('furnish,secret-seeder'))).toBeUndefined();
  });
});

describe('failure reports', () => {
  it('read "<initializer>: <reason>"', () => {
    expect(parseFailureReport('vault: unreachable: 503')).toEqual({ initializer: 'vault', reason: 'unreachable: 503' });
    expect(parseFailureReport('vault')).toBeUndefined();
    expect(parseFailureReport(': x')).toBeUndefined();
  });
});

describe('guardWhileInitializing', () => {
  it('lets the working initializer\'s principals write', () => {
    expect(guardWhileInitializing({ username: SEEDER_SA }, 'team-a', ['secret-seeder', 'vault'], known)).toEqual({ allow: 'ServiceAccount secret-seeder/seeder is a principal of initializer "secret-seeder", which is working now' });
  });

  it('refuses a later initializer and users, naming the one still working', () => {
    expect(guardWhileInitializing({ username: SEEDER_SA }, 'team-a', ['furnish', 'secret-seeder'], known)).toEqual({
      deny: `namespace "team-a" is still being furnished; retry in a few seconds (user "${SEEDER_SA}" may not write into it while initializer "furnish" is working (pending: furnish,secret-seeder): only its principals may (${RECONCILER}))`,
    });
    expect(guardWhileInitializing({ username: 'alice' }, 'team-a', ['gone'], known)).toEqual({
      deny: 'namespace "team-a" is still being furnished; retry in a few seconds (user "alice" may not write into it while initializer "gone" is working (pending: gone): no configuration defines it any more: only an administrator can finish it)',
    });
  });
});

describe('timedOut', () => {
  const created = '2026-01-01T00:00:00Z';
  it('fails the working initializer once its timeout has passed since creation', () => {
    expect(timedOut(created, ['vault'], known, new Date('2026-01-01T00:00:59Z'))).toBeUndefined();
    expect(timedOut(created, ['vault'], known, new Date('2026-01-01T00:01:00Z'))).toEqual({ initializer: 'vault', reason: 'did not finish within 60s of the namespace\'s creation' });
  });
  it('never for an initializer without timeout, nor a later one', () => {
    expect(timedOut(created, ['secret-seeder', 'vault'], known, new Date('2027-01-01T00:00:00Z'))).toBeUndefined();
  });
});

describe('furnishCompletion', () => {
  it('removes furnish from the front, with a resourceVersion precondition', () => {
    expect(furnishCompletion({ resourceVersion: '7', labels: { 'furnish.dev/phase': 'pending' }, annotations: list('furnish,secret-seeder') })).toEqual({
      metadata: { resourceVersion: '7', annotations: { 'furnish.dev/initializers': 'secret-seeder' } },
    });
  });
  it('sets ready when furnish was the last, or when the namespace has no list', () => {
    expect(furnishCompletion({ annotations: list('furnish') })).toEqual({ metadata: { annotations: { 'furnish.dev/initializers': '' }, labels: { 'furnish.dev/phase': 'ready' } } });
    expect(furnishCompletion({ labels: { 'furnish.dev/phase': 'pending' } })).toEqual({ metadata: { labels: { 'furnish.dev/phase': 'ready' } } });
  });
  it('writes nothing once furnish is done or the namespace failed', () => {
    expect(furnishCompletion({ annotations: list('secret-seeder') })).toBeUndefined();
    expect(furnishCompletion({ labels: { 'furnish.dev/phase': 'failed' }, annotations: list('furnish') })).toBeUndefined();
  });
});

describe('malformed values (never from a real API server) are judged, not crashed on', () => {
  const odd = { 'furnish.dev/initializers': 5, 'furnish.dev/initializer-failed': ['x'] } as unknown as Record<string, string>;
  it('a list that is not a string is no list; a report that is not a string is malformed', () => {
    expect(pendingInitializers(odd)).toBeUndefined();
    expect(listChange(list('furnish'), odd)).toEqual({ kind: 'completed', initializer: 'furnish', rest: [] });
    expect(parseFailureReport(odd['furnish.dev/initializer-failed'])).toBeUndefined();
  });
});
