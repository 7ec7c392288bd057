// Namespace revisions compared, and what the next true-up of an organization must read at least.
import { describe, expect, it } from '@jest/globals';
import { isRevision, newerRevision, newestRevision, writtenAfter } from '../../../shared/kube/revisions.ts';
import { PendingRevisions } from '../../../shared/org/versions.ts';

describe('namespace revisions', () => {
  it('are positive decimals; anything else is not comparable', () => {
    expect(['1', '216', '18446744073709551615'].every(isRevision)).toBe(true);
    expect(['', '0', '012', 'abc', '1e3', undefined].some(isRevision)).toBe(false);
  });

  it('compare as numbers, not as text', () => {
    expect(newerRevision('999', '1000')).toBe('1000');
    expect(newerRevision('1000', '999')).toBe('1000');
    expect(newerRevision('1234', '1243')).toBe('1243');
    expect(newestRevision([undefined, '98', 'x', '100', '99'])).toBe('100');
    expect(newestRevision([undefined, ''])).toBeUndefined();
  });

  it('tell an object written after a list (by number), and take one that cannot be compared as written after, to be safe', () => {
    expect(writtenAfter('1000', '999')).toBe(true);
    expect(writtenAfter('999', '1000')).toBe(false);
    expect(writtenAfter('1000', '1000')).toBe(false);
    expect(writtenAfter(undefined, '5')).toBe(true);
    expect(writtenAfter('abc', '5')).toBe(true);
  });
});

describe('PendingRevisions', () => {
  it('folds the events noted before a pass into the newest, and forgets them once taken', () => {
    const pending = new PendingRevisions();
    pending.note('acme', '20');
    pending.note('acme', '100');
    pending.note('acme', '30');
    pending.note('globex', '5');
    expect(pending.take('acme')).toBe('100');
    expect(pending.take('acme')).toBeUndefined();
    expect(pending.take('globex')).toBe('5');
  });

  it('an event without a revision makes its pass read etcd, whatever else was noted', () => {
    const pending = new PendingRevisions();
    pending.note('acme', '20');
    pending.note('acme', undefined);
    pending.note('acme', '30');
    expect(pending.take('acme')).toBeUndefined();
    pending.note('acme', '40');
    expect(pending.take('acme')).toBe('40');
  });
});
