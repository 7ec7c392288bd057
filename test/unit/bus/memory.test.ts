import { describe, it, expect } from '@jest/globals';
import { createMemoryBus } from '../../../shared/bus/memory.ts';
import { encodeMessage } from '../../../shared/bus/envelope.ts';

const env = (name: string, rv: string) => encodeMessage({ v: 1, cluster: 'c', kind: 'Namespace', name, resourceVersion: rv, type: 'MODIFIED' });

describe('in-process bus', () => {
  it('delivers the messages of one ordering key one at a time, in publish order', async () => {
    const bus = createMemoryBus();
    const order: string[] = [];
    let concurrentSameKey = 0;
    let maxSameKey = 0;
    bus.subscribe('t', async (d) => {
      concurrentSameKey += 1;
      maxSameKey = Math.max(maxSameKey, concurrentSameKey);
      await new Promise((r) => setTimeout(r, 2));
      order.push(`${d.orderingKey}:${JSON.parse(d.data.toString()).resourceVersion}`);
      concurrentSameKey -= 1;
    }, { concurrency: 8 });
    for (let i = 1; i <= 5; i++) await bus.publish('t', env('a', String(i)));
    await bus.idle();
    expect(order).toEqual(['c/Namespace/a:1', 'c/Namespace/a:2', 'c/Namespace/a:3', 'c/Namespace/a:4', 'c/Namespace/a:5']);
    expect(maxSameKey).toBe(1);
  });

  it('redelivers a failed message with backoff, then dead-letters it after maxAttempts', async () => {
    const bus = createMemoryBus();
    const attempts: number[] = [];
    bus.subscribe('t', async (d) => {
      attempts.push(d.attempt);
      if (d.attempt < 3) throw new Error('transient');
    }, { minBackoffMs: 1, maxBackoffMs: 2 });
    await bus.publish('t', env('a', '1'));
    await bus.idle();
    expect(attempts).toEqual([1, 2, 3]);
    expect(bus.stats).toMatchObject({ published: 1, delivered: 1, redelivered: 2, deadLettered: 0 });
    bus.subscribe('u', async () => { throw new Error('permanent bug'); }, { maxAttempts: 2, minBackoffMs: 1, maxBackoffMs: 1 });
    await bus.publish('u', env('b', '1'));
    await bus.idle();
    expect(bus.stats.deadLettered).toBe(1);
  });

  it('bounds concurrency across keys', async () => {
    const bus = createMemoryBus();
    let inFlight = 0;
    let peak = 0;
    bus.subscribe('t', async () => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 1));
      inFlight -= 1;
    }, { concurrency: 3 });
    for (let i = 0; i < 20; i++) await bus.publish('t', env(`n${i}`, '1'));
    await bus.idle();
    expect(peak).toBe(3);
  });
});

describe('in-process bus backpressure', () => {
  it('publish waits while maxPending deliveries are queued, so a burst cannot grow memory without bound', async () => {
    const bus = createMemoryBus({ maxPending: 5 });
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let peakQueued = 0;
    bus.subscribe('t', async () => {
      await gate;
    }, { concurrency: 2 });
    const publishes = Array.from({ length: 20 }, (_, i) => bus.publish('t', env(`n${i}`, '1')).then(() => (peakQueued = Math.max(peakQueued, bus.stats.published))));
    await new Promise((r) => setTimeout(r, 20));
    expect(bus.stats.published).toBe(5);
    release();
    await Promise.all(publishes);
    await bus.idle();
    expect(bus.stats).toMatchObject({ published: 20, delivered: 20 });
  });

  it('backpressure is per topic: a full topic (a resync in flight) never holds up a publish to another topic', async () => {
    const bus = createMemoryBus({ maxPending: 3 });
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const order: string[] = [];
    bus.subscribe('resync', async (d) => {
      await gate;
      order.push(d.orderingKey.split('/')[2]!);
    }, { concurrency: 1 });
    bus.subscribe('pending', async (d) => {
      order.push(d.orderingKey.split('/')[2]!);
    });
    const resync = Array.from({ length: 10 }, (_, i) => bus.publish('resync', env(`r${i}`, '1')));
    await new Promise((r) => setTimeout(r, 20));
    expect(bus.stats.published).toBe(3);
    // The resync topic is full and blocked; the pending topic still takes and delivers at once.
    expect(await bus.publish('pending', env('new', '1'))).toMatchObject({ ok: true });
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual(['new']);
    release();
    await Promise.all(resync);
    await bus.idle();
    expect(order.indexOf('new')).toBe(0);
    expect(order).toHaveLength(11);
  });
});
