// shared/bus/bounded.ts: a publish that throws (the encoder, or a bus that rejects instead of
// answering) is given up like a failed one, and the items waiting behind it still go out; one
// ordering key's messages keep their order across retries; drain stops at the first failure.
import { describe, expect, it } from '@jest/globals';
import { boundedPublisher } from '../../../shared/bus/bounded.ts';
import type { Envelope } from '../../../shared/bus/envelope.ts';
import type { Bus } from '../../../shared/bus/types.ts';

describe('boundedPublisher', () => {
  it('gives up an item whose publish throws, and starts the one waiting behind it', async () => {
    const published: string[] = [];
    const failed: Array<[string, string | undefined]> = [];
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    const bus = {
      async publish(_topic: string, envelope: Envelope) {
        const name = (envelope as unknown as { name: string }).name;
        if (name === 'bus-throws') { await held; throw new Error('socket hang up'); }
        return { ok: true };
      },
    } as unknown as Bus;
    const publisher = boundedPublisher<string>({
      bus, maxInFlight: 1, sleep: async () => {},
      encode: (item) => {
        if (item === 'encoder-throws') throw new Error('cannot encode');
        return { topic: 'namespaces', envelope: { name: item, orderingKey: item } as unknown as Envelope };
      },
      published: (item) => { published.push(item); },
      failed: (item, _topic, error) => { failed.push([item, error]); },
    });
    const first = publisher.publish('bus-throws');
    const behind = [publisher.publish('encoder-throws'), publisher.publish('after')];
    release();
    await Promise.all([first, ...behind]);
    expect(failed).toEqual([['bus-throws', 'socket hang up'], ['encoder-throws', 'cannot encode']]);
    expect(published).toEqual(['after']);
    await expect(publisher.drain()).resolves.toBeUndefined();
  });

  /** Items `key:name`; the bus records each attempt and answers what `answer` says. */
  function harness(opts: { maxInFlight: number; answer: (name: string, attempt: number) => Promise<boolean> }) {
    const attempts: string[] = [];
    const published: string[] = [];
    const failed: Array<[string, string | undefined, string | undefined]> = [];
    const encoded: string[] = [];
    const tries = new Map<string, number>();
    const bus = {
      async publish(_topic: string, envelope: Envelope) {
        const name = (envelope as unknown as { name: string }).name;
        const attempt = (tries.get(name) ?? 0) + 1;
        tries.set(name, attempt);
        attempts.push(`${name}#${attempt}`);
        return (await opts.answer(name, attempt)) ? { ok: true, id: name } : { ok: false, error: 'unavailable' };
      },
    } as unknown as Bus;
    const backoffs: Array<() => void> = [];
    const publisher = boundedPublisher<string>({
      bus, maxInFlight: opts.maxInFlight,
      sleep: () => new Promise<void>((r) => backoffs.push(r)),
      encode: (item) => {
        encoded.push(item);
        return { topic: 'namespaces', envelope: { name: item, orderingKey: item.split(':')[0] } as unknown as Envelope };
      },
      published: (item) => { published.push(item); },
      failed: (item, topic, error) => { failed.push([item, topic, error]); },
    });
    return { publisher, attempts, published, failed, encoded, backoffs };
  }

  const settle = () => new Promise<void>((r) => setImmediate(r));

  it('publishes one key\'s items side by side while none has failed', async () => {
    const answers: Array<(ok: boolean) => void> = [];
    const h = harness({ maxInFlight: 8, answer: () => new Promise<boolean>((r) => answers.push(r)) });
    const all = [h.publisher.publish('a:created'), h.publisher.publish('a:updated')];
    await settle();
    expect(h.attempts).toEqual(['a:created#1', 'a:updated#1']);
    answers.forEach((answer) => answer(true));
    await Promise.all(all);
    expect(h.published).toEqual(['a:created', 'a:updated']);
  });

  it('a later item of a key waits for the earlier one\'s retry, and other keys go past its backoff', async () => {
    const h = harness({ maxInFlight: 8, answer: async (name, attempt) => !(name === 'a:created' && attempt === 1) });
    const first = h.publisher.publish('a:created');
    await settle();
    // a:created failed once and waits out its backoff; what comes now of key a must not overtake it.
    expect(h.backoffs).toHaveLength(1);
    const later = [h.publisher.publish('a:deleted'), h.publisher.publish('b:created')];
    await settle();
    expect(h.attempts).toEqual(['a:created#1', 'b:created#1']);
    expect(h.published).toEqual(['b:created']);
    h.backoffs[0]!();
    await Promise.all([first, ...later]);
    expect(h.attempts).toEqual(['a:created#1', 'b:created#1', 'a:created#2', 'a:deleted#1']);
    expect(h.published).toEqual(['b:created', 'a:created', 'a:deleted']);
    expect(h.failed).toEqual([]);
  });

  it('a key whose publish is given up lets the next of the key go', async () => {
    const h = harness({ maxInFlight: 8, answer: async (name) => name !== 'a:created' });
    const first = h.publisher.publish('a:created');
    await settle();
    const next = h.publisher.publish('a:updated');
    for (let i = 0; i < 10 && h.failed.length === 0; i += 1) {
      h.backoffs.splice(0).forEach((wake) => wake());
      await settle();
    }
    await Promise.all([first, next]);
    expect(h.failed).toEqual([['a:created', 'namespaces', 'unavailable']]);
    expect(h.published).toEqual(['a:updated']);
    expect(h.attempts.at(-1)).toBe('a:updated#1');
  });

  it('drain publishes what is in flight or waiting, one attempt each, until one fails: the rest are given up without one', async () => {
    const answers: Array<(ok: boolean) => void> = [];
    const h = harness({ maxInFlight: 2, answer: (name) => (name.startsWith('b:') ? new Promise<boolean>((r) => answers.push(r)) : Promise.resolve(true)) });
    const all = ['a:created', 'b:created', 'b:updated', 'c:created', 'd:created'].map((item) => h.publisher.publish(item));
    await settle();
    // a went out; b's two are attempting (the bus holds them); c and d wait for room.
    expect(h.published).toEqual(['a:created']);
    expect(h.attempts).toEqual(['a:created#1', 'b:created#1', 'b:updated#1']);
    const drained = h.publisher.drain();
    answers.forEach((answer) => answer(false));
    await drained;
    await Promise.all(all);
    expect(h.attempts).toHaveLength(3);
    expect(h.failed.slice(0, 2)).toEqual([['b:created', 'namespaces', 'unavailable'], ['b:updated', 'namespaces', 'unavailable']]);
    expect(h.failed.slice(2)).toEqual(['c:created', 'd:created'].map((item) => [item, 'namespaces', 'given up at drain: a publish had failed']));
    expect(h.backoffs).toEqual([]);
  });
});
