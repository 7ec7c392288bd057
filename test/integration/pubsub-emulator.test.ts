// The real Pub/Sub emulator between a publisher (shared/bus/pubsub.ts, ordering keys on) and the
// reconcile-namespace HTTP function (Functions Framework) through a push subscription: the push
// envelope decodes, a transient failure answers 503 and the emulator redelivers until the
// namespace converges, a permanent failure is acknowledged once.
import { it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Server } from 'node:http';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import type { Bus } from '../../shared/bus/types.ts';
import { KEY } from '../../shared/keys.ts';
import { reconcileConfig } from '../../shared/reconcile/config.ts';
import { useRuntime } from '../../shared/reconcile/functions.ts';
import { collectingLogger } from '../../shared/log.ts';
import { encodeMessage } from '../../shared/bus/envelope.ts';
import { createRuntime } from '../../shared/reconcile/runtime.ts';
import { describeWithTool } from '../support/tools.ts';
import { startPubSubEmulator, type PubSubEmulator } from '../support/pubsub-emulator.ts';
import { memoryApi, type MemoryApi } from '../unit/reconcile/memory-api.ts';
import { waitFor } from './helpers.ts';
import '../../functions/reconcile-namespace/index.ts';

const describeGcloud = describeWithTool('gcloud', 'the Pub/Sub emulator runs through `gcloud beta emulators pubsub`', ['--version']);
let emulator: PubSubEmulator;
let server: Server;
let bus: Bus;
let api: MemoryApi;
let patchFailures = 0;
const pushes: number[] = [];

beforeAll(async () => {
  emulator = await startPubSubEmulator('furnish-it');
  process.env.PUBSUB_EMULATOR_HOST = emulator.host;
  api = memoryApi((req) => (req.method === 'PATCH' && patchFailures-- > 0 ? { status: 503, error: 'injected' } : undefined));
  const config = { ...reconcileConfig({ FURNISH_PUSH_AUTH: 'off' }), pubsubProject: emulator.project };
  useRuntime('reconcile-namespace', createRuntime({ config, log: collectingLogger(), bus: async () => bus, kubeFor: async () => api.client }));
  const fn = getTestServer('reconcile-namespace');
  const listener = fn.listeners('request')[0] as (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void;
  const { createServer } = await import('node:http');
  server = createServer((req, res) => {
    res.on('finish', () => pushes.push(res.statusCode));
    listener(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  await emulator.createTopic('furnish-namespaces');
  // Where reconcile-namespace tells reconcile-template that a template's status needs a recount.
  await emulator.createTopic('furnish-templates');
  await emulator.createPushSubscription('reconcile-namespace', 'furnish-namespaces', `http://127.0.0.1:${port}/`, { minBackoffSeconds: 1, maxBackoffSeconds: 2 });
  const { createPubSubBus } = await import('../../shared/bus/pubsub.ts');
  bus = await createPubSubBus({ projectId: emulator.project, maxMilliseconds: 5 });
}, 90_000);

afterAll(async () => {
  await bus?.close();
  if (server) await new Promise((r) => server.close(r));
  await emulator?.stop();
  delete process.env.PUBSUB_EMULATOR_HOST;
});

const ns = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.phase]: 'pending' }, annotations: { [KEY.creator]: 'alice' } } });
const template = { apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: 'base' }, spec: { namespaces: { labelSelector: {} }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' }, data: { owner: '$(CREATOR)' } }] } };

describeGcloud('Pub/Sub emulator → push → reconcile-namespace', () => {
  it('a published message is pushed, decoded and reconciled', async () => {
    api.put(template);
    api.put(ns('team-a'));
    const r = await bus.publish('furnish-namespaces', encodeMessage({ v: 1, cluster: 'local', kind: 'Namespace', name: 'team-a', type: 'ADDED' }));
    expect(r.ok).toBe(true);
    await waitFor('team-a ready', async () => api.get('v1', 'Namespace', undefined, 'team-a')?.metadata.labels?.[KEY.phase] === 'ready', 30_000);
    expect(api.get('v1', 'ConfigMap', 'team-a', 'owner')?.data).toEqual({ owner: 'alice' });
    // The answer follows the phase write (reconcile-template is told first), so wait for it.
    await waitFor('the push answered 200', async () => pushes.includes(200), 10_000);
  }, 40_000);

  it('a transient failure answers 503 and the emulator redelivers until it converges', async () => {
    api.put(ns('team-b'));
    patchFailures = 6; // more than one delivery's retries (4 attempts)
    const before = pushes.length;
    await bus.publish('furnish-namespaces', encodeMessage({ v: 1, cluster: 'local', kind: 'Namespace', name: 'team-b', type: 'ADDED' }));
    await waitFor('team-b ready', async () => api.get('v1', 'Namespace', undefined, 'team-b')?.metadata.labels?.[KEY.phase] === 'ready', 30_000);
    // The last delivery's answer follows the phase write: wait for it.
    await waitFor('the redelivery answered 200', async () => pushes.slice(before).includes(200), 10_000);
    const statuses = pushes.slice(before);
    expect(statuses).toContain(503);
    expect(statuses[statuses.length - 1]).toBe(200);
  }, 40_000);

  it('an undecodable message is acknowledged once, not redelivered', async () => {
    const before = pushes.length;
    await bus.publish('furnish-namespaces', { data: Buffer.from('not json'), attributes: {}, orderingKey: 'junk' });
    await waitFor('the push', async () => pushes.length > before, 20_000);
    await new Promise((r) => setTimeout(r, 2500));
    expect(pushes.slice(before)).toEqual([204]);
  }, 40_000);
});
