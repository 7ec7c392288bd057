// The relay's publisher: a watch cannot wait for room, so a burst beyond the bound on publishes
// in flight waits as changes, in order, and never reaches the bus more than the bound at once.
import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../../../shared/log.ts';
import { createPublisher, mergeChanges } from '../../../functions/watch-relay/lib/relay-publish.ts';
import { heldBus, settle } from '../../support/held-bus.ts';

describe('relay publisher', () => {
  it('a watch burst beyond the bound waits as changes: at most the bound reach the bus at once, every one is published, in order', async () => {
    const { bus, held, sent, most } = heldBus();
    const counters = { published: 0, publishFailed: 0 };
    const publisher = createPublisher({ bus, cluster: 'c', topics: { namespaces: 'ns', templates: 't' }, log: silentLogger, counters, sleep: async () => {}, maxInFlight: 4 });
    const names = Array.from({ length: 20 }, (_, i) => `ns-${i}`);
    for (const [i, name] of names.entries()) publisher.publish('Namespace', { name, uid: `uid-${name}`, resourceVersion: String(i + 1), type: 'MODIFIED' });
    await settle();
    expect(sent).toEqual(names.slice(0, 4));
    expect(publisher.room()).toBeDefined();
    while (held.length > 0) {
      held.shift()!();
      await settle();
    }
    expect(most()).toBe(4);
    expect(sent).toEqual(names);
    expect(counters.published).toBe(20);
    expect(publisher.room()).toBeUndefined();
  });

  it('drain waits for the changes still waiting too', async () => {
    const { bus, held, sent } = heldBus();
    const counters = { published: 0, publishFailed: 0 };
    const publisher = createPublisher({ bus, cluster: 'c', topics: { namespaces: 'ns', templates: 't' }, log: silentLogger, counters, sleep: async () => {}, maxInFlight: 2 });
    for (let i = 0; i < 5; i++) publisher.publish('Namespace', { name: `ns-${i}`, uid: '', resourceVersion: String(i + 1), type: 'SYNC' });
    let drained = false;
    const draining = publisher.drain().then(() => (drained = true));
    const release = setInterval(() => held.shift()?.(), 1);
    await draining;
    clearInterval(release);
    expect(drained).toBe(true);
    expect(sent).toHaveLength(5);
    expect(counters.published).toBe(5);
  });

  it('changes of one object waiting for the bus wait as one (a long outage: bounded by the objects, not by how often they change), asking for all they asked', async () => {
    const { bus, held, sent } = heldBus((d) => `${String(d.type)} ${String(d.name)}@${String(d.resourceVersion)}${d.organizations ? ` ${JSON.stringify(d.organizations)}` : ''}`);
    const counters = { published: 0, publishFailed: 0 };
    const publisher = createPublisher({ bus, cluster: 'c', topics: { namespaces: 'ns', templates: 't' }, log: silentLogger, counters, sleep: async () => {}, maxInFlight: 1 });
    publisher.publish('Namespace', { name: 'busy', uid: 'u0', resourceVersion: '1', type: 'MODIFIED', organizations: ['a'] });
    for (let rv = 2; rv <= 1000; rv++) publisher.publish('Namespace', { name: 'team-a', uid: 'u1', resourceVersion: String(rv), type: 'MODIFIED', organizations: [rv % 2 ? 'b' : 'a'] });
    publisher.publish('Namespace', { name: 'team-b', uid: 'u2', resourceVersion: '1001', type: 'MODIFIED', organizations: [] });
    // A template changed, then a resync: its fan-out is still asked for.
    publisher.publish('NamespaceTemplate', { name: 'quotas', uid: 'u3', resourceVersion: '1002', type: 'MODIFIED' });
    publisher.publish('NamespaceTemplate', { name: 'quotas', uid: 'u3', resourceVersion: '1003', type: 'SYNC' });
    // A resync of team-b: every organization is recounted.
    publisher.publish('Namespace', { name: 'team-b', uid: 'u2', resourceVersion: '1004', type: 'SYNC', organizations: [] });
    while (held.length > 0) {
      held.shift()!();
      await settle();
    }
    expect(sent).toEqual(['MODIFIED busy@1 ["a"]', 'MODIFIED team-a@1000 ["a","b"]', 'MODIFIED team-b@1004', 'MODIFIED quotas@1003']);
    expect(counters.published).toBe(4);
  });
});

describe('mergeChanges', () => {
  it('the newer change, its type unless a SYNC follows a change; organizations united, or every one when either is not narrowed', () => {
    const c = (type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'SYNC', rv: string, organizations?: string[]) => ({ name: 'n', uid: `u${rv}`, resourceVersion: rv, type, ...(organizations ? { organizations } : {}) });
    expect(mergeChanges(c('DELETED', '1', ['a']), c('ADDED', '2', ['b']))).toEqual(c('ADDED', '2', ['a', 'b']));
    expect(mergeChanges(c('MODIFIED', '1', ['a']), c('SYNC', '2', ['a']))).toEqual(c('MODIFIED', '2'));
    expect(mergeChanges(c('SYNC', '1'), c('MODIFIED', '2', ['b']))).toEqual(c('MODIFIED', '2'));
    expect(mergeChanges(c('MODIFIED', '1'), c('MODIFIED', '2', []))).toEqual(c('MODIFIED', '2'));
    expect(mergeChanges(c('MODIFIED', '1', []), c('MODIFIED', '2', []))).toEqual(c('MODIFIED', '2', []));
    // A parent's message at 520 waiting, then the namespace's own at 500 (another watch): 520 stays.
    expect(mergeChanges(c('MODIFIED', '520', []), c('MODIFIED', '500', []))).toEqual({ ...c('MODIFIED', '500', []), resourceVersion: '520' });
  });
});
