// One kind's stream (relay-stream.ts): a stop that lands while it relists (after the watchdog or a
// 410) ends it there; a watch opened after stop() would hold the relay's shutdown for its timeout.
import { describe, expect, it } from '@jest/globals';
import type { KubeClient, KubeRequest } from '../../../shared/kube/client.ts';
import { silentLogger } from '../../../shared/log.ts';
import { WatchStream } from '../../../functions/watch-relay/lib/relay-stream.ts';

describe('WatchStream', () => {
  it('stopped while it lists, it opens no watch after', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    let listing!: () => void;
    const listed = new Promise<void>((r) => { listing = r; });
    const watches: KubeRequest[] = [];
    const kube = {
      async call() {
        listing();
        await gate;
        return { ok: true, status: 200, data: { items: [], metadata: { resourceVersion: '5' } }, attempts: 1 };
      },
      watch(req: KubeRequest) {
        watches.push(req);
        // A quiet watch: it ends only when stopped.
        let end!: (r: unknown) => void;
        return { done: new Promise((r) => { end = r; }), stop: () => end({ ok: true, status: 200, attempts: 1 }) };
      },
    } as unknown as KubeClient;
    const counters = { eventsSeen: 0, bookmarks: 0, relists: 0, gone: 0, watches: 0, reconnects: 0, silentRelists: 0 };
    const sink = { seen: () => null, send: () => {}, room: () => undefined, gone: () => {} };
    const stream = new WatchStream('Namespace', '/api/v1/namespaces', { kube, log: silentLogger, counters, pageSize: 10, watchTimeoutSeconds: 300, watchSilenceSeconds: 0, now: () => 0, sleep: async () => {}, sink });
    const running = stream.run();
    await listed;
    stream.stop();
    release();
    await running;
    expect(watches).toEqual([]);
  });
});
