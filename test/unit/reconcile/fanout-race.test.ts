// A template change racing a namespace reconcile in flight: the reconcile listed the templates
// before the change and writes after the fan-out read which namespaces hold the template. Each
// interleaving is forced by holding requests in the in-memory API; the fan-out's messages are then
// answered as the runtime answers them, each after the reconcile already in flight (Pub/Sub
// delivers one ordering key's messages one at a time).
import { describe, it, expect } from '@jest/globals';
import { createMemoryBus } from '../../../shared/bus/memory.ts';
import { decodeMessage, type ReconcileMessage } from '../../../shared/bus/envelope.ts';
import { KEY } from '../../../shared/keys.ts';
import type { KubeRequest } from '../../../shared/kube/client.ts';
import { ResourceResolver } from '../../../shared/kube/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { silentLogger } from '../../../shared/log.ts';
import { reconcileNamespace, type NamespaceDeps } from '../../../shared/reconcile/namespace.ts';
import { reconcileBatch } from '../../../shared/reconcile/namespace-batch.ts';
import { reconcileTemplate } from '../../../shared/reconcile/template.ts';
import { memoryApi, type MemoryApi } from './memory-api.ts';

const TEMPLATE_PATH = '/apis/furnish.dev/v1alpha1/namespacetemplates/t';
const ns = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.metadataName]: name, [KEY.phase]: 'pending', team: 'x' }, annotations: { [KEY.creator]: 'alice' } } });
const tpl = (team: string): NamespaceTemplate => ({
  apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: 't' },
  spec: { namespaces: { labelSelector: { matchLabels: { team } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 't-cm' }, data: { a: '1' } }] },
});

/** A request held until `open()`; `reached` resolves when the first one arrives. */
function gate(match: (req: KubeRequest) => boolean): { hold: (req: KubeRequest) => Promise<void> | undefined; reached: Promise<void>; open: () => void } {
  let open!: () => void;
  let reach!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const reached = new Promise<void>((r) => (reach = r));
  return { hold: (req) => (match(req) ? (reach(), opened) : undefined), reached, open };
}

interface Sent {
  message: ReconcileMessage;
  topic: string;
  key: string;
}

/** The fan-out's messages, collected rather than delivered, with their topics and ordering keys. */
async function fanOut(api: MemoryApi, deps: NamespaceDeps): Promise<Sent[]> {
  const bus = createMemoryBus();
  const out: Sent[] = [];
  for (const topic of ['ns', 'ns-pending']) {
    bus.subscribe(topic, async (d) => {
      const m = decodeMessage(d.data);
      if (m.ok) out.push({ message: m.message, topic, key: d.orderingKey });
    });
  }
  await reconcileTemplate({ kube: api.client, resolver: deps.resolver, bus, cluster: 'local', namespaceTopic: 'ns', pendingTopic: 'ns-pending', log: silentLogger, messagesPerSecond: 1e6 }, 't');
  await bus.idle();
  return out;
}

/** As the runtime answers a namespace message. */
function answer(deps: NamespaceDeps, m: ReconcileMessage): Promise<unknown> {
  return m.targets && m.template ? reconcileBatch(deps, { template: m.template, templates: m.templates, targets: m.targets }) : reconcileNamespace(deps, m.name, { fanout: m.type === 'FANOUT', templates: m.templates });
}

function setup(): { api: MemoryApi; deps: NamespaceDeps } {
  const api = memoryApi();
  api.put(ns('a'));
  api.put(tpl('x'));
  return { api, deps: { kube: api.client, resolver: new ResourceResolver(api.client), log: silentLogger } };
}

const changes: [string, (api: MemoryApi) => Promise<unknown>][] = [
  ['stops selecting it', async (api) => api.put(tpl('y'))],
  ['is deleted', (api) => api.client.call({ method: 'DELETE', path: TEMPLATE_PATH })],
];

describe('a template change while a namespace\'s first population is in flight', () => {
  it.each(changes)('a template that %s while it is being written leaves nothing of itself in the namespace', async (_what, change) => {
    const { api, deps } = setup();
    // The first population lists the templates (t selects a) and is held at its first write, the ApplySet parent.
    const writes = gate((req) => req.method !== 'GET' && req.path.startsWith('/api/v1/namespaces/a/'));
    api.hold = writes.hold;
    const first = reconcileNamespace(deps, 'a');
    await writes.reached;
    await change(api);
    const messages = await fanOut(api, deps);
    writes.open();
    expect((await first).result).toBe('converged');
    expect(api.get('v1', 'ConfigMap', 'a', 't-cm')).toBeDefined();
    for (const { message } of messages) await answer(deps, message);
    expect(api.get('v1', 'ConfigMap', 'a', 't-cm')).toBeUndefined();
    expect(api.get('v1', 'ConfigMap', 'a', 'furnish-applyset')?.metadata.annotations?.[KEY.appliedTemplates]).toBe('');
    // The namespace was messaged alone, on the relay's topic for pending namespaces under its own
    // ordering key (so after the reconcile in flight), without the fan-out's digest: it lists the
    // templates as they are when it runs.
    const mine = messages.filter(({ message }) => message.name === 'a' || message.targets?.some((t) => t.n === 'a'));
    expect(mine.map(({ message, topic, key }) => ({ topic, key, type: message.type, templates: message.templates, targets: message.targets }))).toEqual([{ topic: 'ns-pending', key: 'local/Namespace/a', type: 'FANOUT', templates: undefined, targets: undefined }]);
  });

  it('a namespace that becomes ready between the fan-out\'s two lists is found by its ApplySet parent', async () => {
    const { api, deps } = setup();
    const writes = gate((req) => req.method !== 'GET' && req.path.startsWith('/api/v1/namespaces/a/'));
    // The fan-out lists the parents before the namespace is written, and the namespaces after it is ready.
    const namespaces = gate((req) => req.method === 'GET' && req.path === '/api/v1/namespaces' && req.query?.labelSelector === undefined);
    api.hold = (req) => writes.hold(req) ?? namespaces.hold(req);
    const first = reconcileNamespace(deps, 'a');
    await writes.reached;
    await api.client.call({ method: 'DELETE', path: TEMPLATE_PATH });
    const fanout = fanOut(api, deps);
    await namespaces.reached;
    while (!api.requests.some((r) => r.path === '/api/v1/configmaps')) await new Promise((r) => setImmediate(r));
    writes.open();
    expect((await first).result).toBe('converged');
    expect(api.get('v1', 'Namespace', undefined, 'a')?.metadata.labels?.[KEY.phase]).toBe('ready');
    namespaces.open();
    const messages = await fanout;
    expect(messages.flatMap(({ message }) => message.targets?.map((t) => t.n) ?? [message.name])).toEqual(['a']);
    for (const { message } of messages) await answer(deps, message);
    expect(api.get('v1', 'ConfigMap', 'a', 't-cm')).toBeUndefined();
  });
});
