import { describe, it, expect } from '@jest/globals';
import { VersionIndex } from '../../../functions/watch-relay/lib/versions.ts';

describe('VersionIndex (the relay keeps names and versions only)', () => {
  it('turns watch events into changes and ignores replays of a version it has seen', () => {
    const idx = new VersionIndex();
    expect(idx.observe('ADDED', { name: 'a', uid: 'u1', resourceVersion: '1' })?.type).toBe('ADDED');
    expect(idx.observe('ADDED', { name: 'a', uid: 'u1', resourceVersion: '1' })).toBeNull();
    expect(idx.observe('MODIFIED', { name: 'a', uid: 'u1', resourceVersion: '2' })?.type).toBe('MODIFIED');
    expect(idx.get('a')).toEqual({ uid: 'u1', resourceVersion: '2' });
    expect(idx.observe('DELETED', { name: 'a', uid: 'u1', resourceVersion: '3' })?.type).toBe('DELETED');
    expect(idx.observe('DELETED', { name: 'a', uid: 'u1', resourceVersion: '3' })).toBeNull();
    expect(idx.size).toBe(0);
  });

  it('a recreated object (new uid, same name) is ADDED', () => {
    const idx = new VersionIndex();
    idx.observe('ADDED', { name: 'a', uid: 'u1', resourceVersion: '1' });
    expect(idx.observe('MODIFIED', { name: 'a', uid: 'u2', resourceVersion: '9' })?.type).toBe('ADDED');
  });

  it('a relist after 410 Gone reports only what changed, plus what vanished meanwhile', () => {
    const idx = new VersionIndex();
    for (const [name, rv] of [['a', '1'], ['b', '2'], ['c', '3']] as const) idx.observe('ADDED', { name, uid: name, resourceVersion: rv });
    const relist = idx.relist();
    const changes = [
      relist.listed({ name: 'a', uid: 'a', resourceVersion: '1' }),
      relist.listed({ name: 'b', uid: 'b', resourceVersion: '7' }),
      relist.listed({ name: 'd', uid: 'd', resourceVersion: '8' }),
    ].filter((c) => c !== null);
    expect(changes.map((c) => `${c.type} ${c.name}`)).toEqual(['MODIFIED b', 'ADDED d']);
    expect(relist.finish().map((c) => `${c.type} ${c.name}`)).toEqual(['DELETED c']);
    expect([...idx.names()].sort()).toEqual(['a', 'b', 'd']);
  });
});
