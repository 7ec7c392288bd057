// ResourceResolver (shared/kube/resources.ts): discovery says "not served" only when the server
// answered so; a failure a retry may mend (no answer, a 503, a call past its delivery's time)
// rejects, and is not remembered: a lookup deliveries share must not fail another one for good.
import { describe, expect, it } from '@jest/globals';
import { withCause } from '../../../shared/kube/cause.ts';
import { createKubeClient, type KubeRequest } from '../../../shared/kube/client.ts';
import { TransientError } from '../../../shared/kube/errors.ts';
import { ResourceResolver } from '../../../shared/kube/resources.ts';

const WIDGETS = { resources: [{ name: 'widgets', kind: 'Widget', namespaced: true }, { name: 'widgets/status', kind: 'Widget', namespaced: true }] };

function resolverWith(answer: (req: KubeRequest) => { status: number; data: unknown }) {
  const sent: string[] = [];
  const kube = createKubeClient({ server: 'http://127.0.0.1:1', headers: async () => ({}) }, {
    retry: { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 },
    sleep: async () => {},
    transport: async (req) => {
      sent.push(req.path);
      return answer(req);
    },
  });
  return { resolver: new ResourceResolver(kube), sent };
}

describe('ResourceResolver', () => {
  it('finds a kind by discovery, and says null when the server does not serve it', async () => {
    const { resolver } = resolverWith((req) => (req.path === '/apis/example.com' ? { status: 200, data: { preferredVersion: { version: 'v1' } } } : req.path === '/apis/example.com/v1' ? { status: 200, data: WIDGETS } : { status: 404, data: { kind: 'Status', code: 404, reason: 'NotFound' } }));
    expect(await resolver.forGroupKind('example.com', 'Widget')).toEqual({ group: 'example.com', version: 'v1', plural: 'widgets', namespaced: true });
    expect(await resolver.forGroupKind('example.com', 'Gadget')).toBeNull();
    expect(await resolver.forGroupKind('other.io', 'Widget')).toBeNull();
  });

  it('a failure a retry may mend rejects as transient, and the next lookup asks again', async () => {
    let down = true;
    const { resolver, sent } = resolverWith((req) => (down ? { status: 503, data: { kind: 'Status', code: 503, reason: 'ServiceUnavailable' } } : req.path === '/apis/example.com/v1' ? { status: 200, data: WIDGETS } : { status: 200, data: { preferredVersion: { version: 'v1' } } }));
    await expect(resolver.forGroupKind('example.com', 'Widget')).rejects.toBeInstanceOf(TransientError);
    down = false;
    expect(await resolver.forGroupKind('example.com', 'Widget')).toMatchObject({ plural: 'widgets' });
    expect(sent).toEqual(['/apis/example.com', '/apis/example.com', '/apis/example.com/v1']);
  });

  it("a lookup started by a delivery past its time for calls fails the deliveries that joined it as transient, never as not served", async () => {
    const { resolver, sent } = resolverWith((req) => (req.path === '/apis/example.com/v1' ? { status: 200, data: WIDGETS } : { status: 200, data: { preferredVersion: { version: 'v1' } } }));
    const late = withCause({ kind: 'Namespace', name: 'a', callsUntil: performance.now() - 1 }, () => resolver.forObject('example.com/v1', 'Widget'));
    const joined = withCause({ kind: 'Namespace', name: 'b', callsUntil: performance.now() + 60_000 }, () => resolver.forObject('example.com/v1', 'Widget'));
    await expect(late).rejects.toThrow(/not sent: Namespace\/a's delivery is past its time for calls/);
    await expect(joined).rejects.toBeInstanceOf(TransientError);
    expect(sent).toEqual([]);
    expect(await resolver.forObject('example.com/v1', 'Widget')).toMatchObject({ plural: 'widgets' });
  });
});
