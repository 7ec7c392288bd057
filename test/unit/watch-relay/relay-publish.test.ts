// The relay's publisher: a watch cannot wait for room, so a burst beyond the bound on publishes
// in flight waits as changes, in order, and never reaches the bus more than the bound at once.
import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../../../shared/log.ts';
import { createPublisher } from '../../../functions/watch-relay/lib/relay-publish.ts';
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
});
