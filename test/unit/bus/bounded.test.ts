// shared/bus/bounded.ts: a publish that throws (the encoder, or a bus that rejects instead of
// answering) is given up like a failed one, and the items waiting behind it still go out.
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
        return { topic: 'namespaces', envelope: { name: item } as unknown as Envelope };
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
});
