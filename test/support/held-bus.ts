// A bus that holds every publish until the test lets it through (a slow Pub/Sub): what a
// publisher sends at once, and in which order.
import { emptyStats, type Bus, type PublishResult } from '../../shared/bus/types.ts';

/** A bus that holds every publish until the test lets it through, one at a time. */
export function heldBus(name: (data: Record<string, unknown>) => string = (d) => String(d.name)) {
  const held: (() => void)[] = [];
  const sent: string[] = [];
  let outstanding = 0;
  let most = 0;
  const bus: Bus = {
    stats: emptyStats(),
    flush: async () => {},
    close: async () => {},
    publish(_topic, envelope) {
      outstanding += 1;
      most = Math.max(most, outstanding);
      sent.push(name(JSON.parse(envelope.data.toString()) as Record<string, unknown>));
      return new Promise<PublishResult>((resolve) =>
        held.push(() => {
          outstanding -= 1;
          resolve({ ok: true, id: String(sent.length) });
        }),
      );
    },
  };
  return { bus, held, sent, most: () => most };
}

/** Lets every promise already resolved run on. */
export const settle = () => new Promise((r) => setImmediate(r));
