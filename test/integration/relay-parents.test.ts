// The relay watches every namespace's ApplySet parent (ConfigMap furnish-applyset, label
// applyset.kubernetes.io/id) and sends each write of one, the reconciler's own included, as one
// reconcile of its namespace at the parent's resourceVersion: the reconcile then plans from
// templates listed at or after that version. Run as deployed: the relay as furnish-relay, the
// parent written as furnish-reconciler, each with infra/'s RBAC. On kube-sim, or on the cluster
// FURNISH_TEST_KUBECONFIG names (both must serve fieldSelector=metadata.name on configmaps).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Identities } from '../../scripts/start/identities.ts';
import { createRelay, type Relay } from '../../functions/watch-relay/lib/relay.ts';
import { createMemoryBus } from '../../shared/bus/memory.ts';
import { decodeMessage, type ReconcileMessage } from '../../shared/bus/envelope.ts';
import { FIELD_MANAGER, KEY } from '../../shared/keys.ts';
import { applyObject, CONFIGMAPS } from '../../shared/kube/api.ts';
import { connect, createKubeClient, type KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { silentLogger } from '../../shared/log.ts';
import { APPLYSET_PARENT_NAME, applySetParent } from '../../shared/render/applyset.ts';
import { ensureCrd } from '../../scripts/start.ts';
import { componentIdentities, useTestCluster, type TestCluster } from '../support/cluster.ts';
import { clientFor, CONFIGMAP, createNamespace, tearDown, waitFor, type Created } from './helpers.ts';

const run = `${process.pid % 1000}-${Date.now().toString(36).slice(-4)}`;
const NS = `parents-${run}`;
let cluster: TestCluster;
let admin: KubeClient;
let identities: Identities | undefined;
let relayKube: KubeClient;
let reconciler: KubeClient;
let relay: Relay;
const created: Created = { namespaces: [], templates: [] };
/** Namespace messages about NS, as published. */
const received: ReconcileMessage[] = [];

beforeAll(async () => {
  cluster = await useTestCluster();
  admin = await clientFor(cluster.kubeconfigPath, cluster.isSimulated ? cluster.users.admin!.context : undefined);
  // The relay watches NamespaceTemplates too.
  await ensureCrd(admin, silentLogger);
  identities = await componentIdentities(cluster);
  relayKube = createKubeClient(await connect(identities.relay.credentials));
  reconciler = createKubeClient(await connect(identities.reconciler.credentials));
  await createNamespace(admin, NS);
  created.namespaces.push(NS);
  const bus = createMemoryBus();
  bus.subscribe('ns', async (d) => {
    const m = decodeMessage(d.data);
    if (m.ok && m.message.name === NS) received.push(m.message);
  });
  relay = createRelay({ kube: relayKube, bus, config: { cluster: 'c', resyncSeconds: 0, watchTimeoutSeconds: 60, pageSize: 100, topics: { namespaces: 'ns', templates: 'tpl' } }, log: silentLogger });
  await relay.start();
  await waitFor('the relay listed and watching', async () => relay.ready());
  // The namespace's own SYNC from the first list.
  await waitFor('the first list published', async () => received.length >= 1);
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  relayKube?.close();
  reconciler?.close();
  identities?.remove();
  await tearDown({ cluster, admin, created });
});

/** What arrives within a quiet second after `act` (the write's own message, and nothing more). */
async function messagesOf(act: () => Promise<string>): Promise<{ messages: ReconcileMessage[]; resourceVersion: string }> {
  const from = received.length;
  const resourceVersion = await act();
  await waitFor('a message', async () => received.length > from || undefined, 10_000).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 1000));
  return { messages: received.slice(from), resourceVersion };
}

async function applyAs(kube: KubeClient, obj: KubeObject, fieldManager: string): Promise<string> {
  const res = await applyObject(kube, CONFIGMAPS, obj, { fieldManager });
  if (!res.ok) throw new Error(`apply ${obj.metadata.name} as ${fieldManager}: HTTP ${res.status} ${res.error ?? ''}`);
  return res.data!.metadata.resourceVersion!;
}

describe('the relay and the namespaces\' ApplySet parents', () => {
  it("a parent written by the reconciler's identity is exactly one Namespace message at the parent's resourceVersion", async () => {
    const { messages, resourceVersion } = await messagesOf(() => applyAs(reconciler, applySetParent(NS, [{ group: '', kind: 'ConfigMap' }]), FIELD_MANAGER));
    expect(messages.map((m) => ({ kind: m.kind, name: m.name, type: m.type, uid: m.uid, resourceVersion: m.resourceVersion, organizations: m.organizations }))).toEqual([
      { kind: 'Namespace', name: NS, type: 'MODIFIED', uid: '', resourceVersion, organizations: [] },
    ]);
  }, 30_000);

  it('a change of the parent by someone else is one message too; its deletion as well', async () => {
    const changed = await messagesOf(async () => {
      const res = await admin.call<KubeObject>({ method: 'PATCH', path: CONFIGMAP(NS, APPLYSET_PARENT_NAME), contentType: 'application/merge-patch+json', body: { metadata: { annotations: { note: 'by hand' } } } });
      if (!res.ok) throw new Error(`patch: HTTP ${res.status}`);
      return res.data!.metadata.resourceVersion!;
    });
    expect(changed.messages.map((m) => `${m.type} ${m.resourceVersion}`)).toEqual([`MODIFIED ${changed.resourceVersion}`]);
    const deleted = await messagesOf(async () => {
      const res = await admin.call<KubeObject>({ method: 'DELETE', path: CONFIGMAP(NS, APPLYSET_PARENT_NAME) });
      if (!res.ok) throw new Error(`delete: HTTP ${res.status}`);
      return '';
    });
    expect(deleted.messages).toHaveLength(1);
    expect(deleted.messages[0]).toMatchObject({ kind: 'Namespace', name: NS, type: 'MODIFIED' });
    // The deletion's own version, past the last write's.
    expect(BigInt(deleted.messages[0]!.resourceVersion!)).toBeGreaterThan(BigInt(changed.resourceVersion));
  }, 30_000);

  it('other ConfigMaps send nothing: one with the ApplySet label but another name, one named as the parent without the label', async () => {
    const other: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'not-the-parent', namespace: NS, labels: { [KEY.applySetId]: 'x' } }, data: { a: '1' } };
    const unlabelled: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: APPLYSET_PARENT_NAME, namespace: NS }, data: { a: '1' } };
    const { messages } = await messagesOf(async () => {
      await applyAs(admin, other, 'test');
      return applyAs(admin, unlabelled, 'test');
    });
    expect(messages).toEqual([]);
  }, 30_000);
});
