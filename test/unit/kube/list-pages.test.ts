// listPages (shared/kube/api.ts): every page in order, each let go before the wait its handler
// asks for, so that a list with backpressure (the relay's resync) never holds a page across it.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from '@jest/globals';
import { listEach, listPages } from '../../../shared/kube/api.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** A client serving `pages` pages of `size` namespaces, fresh objects each call, and the queries it got. */
function pagedClient(pages: number, size: number): { kube: KubeClient; continues: (string | undefined)[] } {
  const continues: (string | undefined)[] = [];
  const call = async (req: { query?: Record<string, unknown> }) => {
    const cont = req.query?.continue as string | undefined;
    continues.push(cont);
    const at = cont ? Number(cont) : 0;
    const items = Array.from({ length: size }, (_, i) => ({ metadata: { name: `ns-${at}-${i}`, annotations: { big: 'x'.repeat(1000) } } }));
    return { ok: true, status: 200, data: { items, metadata: { resourceVersion: String(100 + at), continue: at + 1 < pages ? String(at + 1) : undefined } } };
  };
  return { kube: { call } as unknown as KubeClient, continues };
}

describe('listPages', () => {
  it('hands every page over in order, with the last resourceVersion and the count', async () => {
    const { kube, continues } = pagedClient(3, 4);
    const seen: string[][] = [];
    const r = await listPages(kube, '/api/v1/namespaces', { limit: 4 }, (items) => void seen.push(items.map((o) => o.metadata.name ?? '')));
    expect(r).toEqual({ ok: true, status: 200, resourceVersion: '102', count: 12 });
    expect(continues).toEqual([undefined, '1', '2']);
    expect(seen.map((p) => p[0])).toEqual(['ns-0-0', 'ns-1-0', 'ns-2-0']);
  });

  it('lets go of a page while waiting for what its handler returned', async () => {
    const { kube } = pagedClient(2, 50);
    let first: WeakRef<KubeObject> | undefined;
    let release!: () => void;
    let waiting!: () => void;
    const isWaiting = new Promise<void>((r) => (waiting = r));
    const done = listPages(kube, '/api/v1/namespaces', {}, (items) => {
      if (first) return undefined;
      first = new WeakRef(items[0]!);
      waiting();
      return new Promise<void>((r) => (release = r));
    });
    await isWaiting;
    await new Promise((r) => setImmediate(r));
    gc();
    expect(first!.deref()).toBeUndefined();
    release();
    expect((await done).count).toBe(100);
  });

  it('stops at a failed page, saying how many came before', async () => {
    let calls = 0;
    const kube = { call: async () => (++calls === 1 ? { ok: true, status: 200, data: { items: [{ metadata: { name: 'a' } }], metadata: { continue: 'x' } } } : { ok: false, status: 410, error: 'expired', reason: 'Expired' }) } as unknown as KubeClient;
    expect(await listEach(kube, '/api/v1/namespaces', {}, () => undefined)).toEqual({ ok: false, status: 410, resourceVersion: '', error: 'expired', reason: 'Expired', count: 1 });
  });
});
