// Billing end to end on the test cluster (kube-sim, or the real one FURNISH_TEST_KUBECONFIG
// names): watch relays with the billing tap, record-billing's push handler, SQLite sinks.
// Two pipelines watch the same namespaces at once: a clean one (every message delivered once, in
// order) and a noisy one whose messages are duplicated, shuffled and replayed, whose relay is
// killed mid-stream (its unsent messages lost) and restarted after two namespaces were deleted, one
// created and one transferred while it was down. Of the two deleted, one's `created` reached
// record-billing before the restarted relay's snapshot (the snapshot's diff closes it), the other's
// only after it (late, as a redelivery or another ordering key brings it: recorded with its
// deletion at the snapshot's time). Their reports must be the same.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeBillingMessage } from '../../shared/billing/event.ts';
import { handleBillingEnvelope } from '../../shared/billing/function.ts';
import type { RecordDeps } from '../../shared/billing/record.ts';
import { namespaceDays, type ReportGrouping } from '../../shared/billing/report.ts';
import type { BillingSink } from '../../shared/billing/sink.ts';
import { openSqliteSink } from '../../shared/billing/sqlite.ts';
import { createBillingTap, type BillingTap } from '../../shared/billing/tap.ts';
import type { BillingEventMessage, BillingMessage, SnapshotEndMessage } from '../../shared/billing/types.ts';
import { emptyStats, type Bus } from '../../shared/bus/types.ts';
import { KEY } from '../../shared/keys.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/log.ts';
import type { Envelope } from '../../shared/bus/envelope.ts';
import { createRelay, type Relay } from '../../functions/watch-relay/lib/relay.ts';
import { billingObserver } from '../../functions/watch-relay/lib/wiring.ts';
import { ensureCrd } from '../../scripts/start.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { clientFor, createNamespace, get, patchNamespace, waitFor } from './helpers.ts';

const TOPIC = 'furnish-billing';
const CLUSTER = 'it';
/** Same machine, but creationTimestamp has whole seconds: judge only namespaces older than this. */
const GRACE_MS = 2500;

/** Records what is published to the billing topic; delivery is the test's to script. */
class RecordingBus implements Bus {
  readonly log: Envelope[] = [];
  readonly stats = emptyStats();
  async publish(topic: string, envelope: Envelope) {
    if (topic === TOPIC) this.log.push(envelope);
    this.stats.published += 1;
    return { ok: true as const, id: String(this.stats.published) };
  }
  async flush() {}
  async close() {}
}

interface Pipeline {
  bus: RecordingBus;
  sink: BillingSink;
  deps: RecordDeps;
  relay?: Relay;
  tap?: BillingTap;
  kube?: KubeClient;
}

let cluster: TestCluster;
let admin: KubeClient;
let dir: string;
const run = `${process.pid % 1000}-${Date.now().toString(36).slice(-4)}`;
const ns = (n: string) => `bill-${run}-${n}`;
const created: string[] = [];
let clean: Pipeline;
let noisy: Pipeline;

async function pipeline(file: string): Promise<Pipeline> {
  const sink = await openSqliteSink(join(dir, file));
  // No Organization kind on the test cluster: namespaces carry their own billing fields or none.
  return { bus: new RecordingBus(), sink, deps: { sink, log: silentLogger, now: () => new Date(), organizationBilling: async () => ({}), snapshotGraceMs: GRACE_MS } };
}

async function startRelay(p: Pipeline): Promise<void> {
  p.kube = await clientFor(cluster.kubeconfigPath, cluster.isSimulated ? cluster.users.admin!.context : undefined);
  p.tap = createBillingTap({ kube: p.kube, bus: p.bus, config: { cluster: CLUSTER, topic: TOPIC, snapshotSeconds: 0, pageSize: 50 }, log: silentLogger });
  p.relay = createRelay({ kube: p.kube, bus: p.bus, config: { cluster: CLUSTER, resyncSeconds: 0, watchTimeoutSeconds: 5, pageSize: 50, topics: { namespaces: 'ns', templates: 'tpl' } }, log: silentLogger, observers: [billingObserver(p.tap)] });
  await p.relay.start();
}

async function stopRelay(p: Pipeline): Promise<void> {
  await p.relay?.stop();
  p.kube?.close();
}

/** Pub/Sub push, as record-billing receives it. */
async function deliver(p: Pipeline, envelopes: readonly Envelope[]): Promise<void> {
  for (const e of envelopes) {
    const answer = await handleBillingEnvelope(p.deps, { message: { data: e.data.toString('base64'), attributes: e.attributes, messageId: 'm' }, subscription: 'projects/p/subscriptions/record-billing' });
    expect(answer.status).toBe(200);
  }
}

/** A fixed shuffle (mulberry32), each message twice. */
function noisyOrder(envelopes: readonly Envelope[], seed: number): Envelope[] {
  let s = seed;
  const rand = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...envelopes, ...envelopes];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function messages(p: Pipeline): BillingMessage[] {
  return p.bus.log.map((e) => {
    const d = decodeBillingMessage(e.data);
    if (!d.ok) throw new Error(d.reason);
    return d.message;
  });
}

/** Messages about one namespace (its events). */
const about = (name: string) => (e: Envelope) => {
  const d = decodeBillingMessage(e.data);
  return d.ok && d.message.type === 'event' && d.message.namespace === name;
};

const published = (p: Pipeline, event: string, name: string) => messages(p).some((m) => m.type === 'event' && m.event === event && m.namespace === name);

/** Namespace-days of this run's namespaces, today and tomorrow (UTC). */
async function report(p: Pipeline, by: ReportGrouping = 'organization') {
  const today = new Date().toISOString().slice(0, 10);
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  const rows = (await p.sink.reportRows(today, tomorrow)).filter((r) => r.namespace.startsWith(`bill-${run}-`));
  return namespaceDays(rows, today, tomorrow, by);
}

async function create(name: string, org: string, billing: Record<string, string> = {}): Promise<void> {
  created.push(name);
  await createNamespace(admin, name, { [KEY.organization]: org }, Object.fromEntries(Object.entries(billing).map(([k, v]) => [`furnish.dev/billing.${k}`, v])));
}

async function remove(name: string): Promise<void> {
  await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${name}` });
  await waitFor(`namespace ${name} gone`, async () => (await get(admin, `/api/v1/namespaces/${name}`)) === undefined, 60_000, 200);
}

beforeAll(async () => {
  cluster = await useTestCluster();
  admin = await clientFor(cluster.kubeconfigPath, cluster.isSimulated ? cluster.users.admin!.context : undefined);
  // The relay watches NamespaceTemplates too.
  await ensureCrd(admin, silentLogger);
  dir = mkdtempSync(join(tmpdir(), 'furnish-billing-it-'));
  clean = await pipeline('clean.sqlite');
  noisy = await pipeline('noisy.sqlite');
}, 60_000);

afterAll(async () => {
  if (cluster && !cluster.isSimulated) for (const n of created) await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${n}` });
  for (const p of [clean, noisy]) {
    await stopRelay(p);
    await p.sink.close();
  }
  admin?.close();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('billing rows from a live cluster', () => {
  const step = (s: string) => process.env.FURNISH_TEST_LOG && process.stderr.write(`${new Date().toISOString()} ${s}\n`);
  it('a noisy run (duplicates, reordering, replay, relay killed mid-stream, deletion while down) reports what a clean run reports', async () => {
    await startRelay(clean);
    await startRelay(noisy);
    step('namespaces created');
    await create(ns('moved'), 'acme', { costCenter: '100' });
    await create(ns('kept'), 'globex');
    await create(ns('gone'), 'acme', { costCenter: '300' });
    await create(ns('vanished'), 'acme', { costCenter: '300' });
    await create(ns('transferred'), 'acme');
    await patchNamespace(admin, ns('moved'), { metadata: { labels: { [KEY.organization]: 'globex' }, annotations: { 'furnish.dev/billing.costCenter': '200' } } });
    await waitFor('both relays saw the transfer', async () => published(clean, 'updated', ns('moved')) && published(noisy, 'updated', ns('moved')));

    // Killed mid-stream: half of what the relay published never reached record-billing; all of
    // `vanished`'s did, none of `gone`'s (they come late, below).
    await stopRelay(noisy);
    step('noisy relay killed');
    const sent = noisy.bus.log.length;
    const before = noisy.bus.log.slice(0, sent);
    const late = before.filter(about(ns('gone')));
    expect(late.length).toBeGreaterThan(0);
    await deliver(noisy, noisyOrder([...before.slice(0, Math.floor(sent / 2)).filter((e) => !late.includes(e)), ...before.filter(about(ns('vanished')))], 1));

    // While it is down: two deletions, a creation, a transfer.
    await remove(ns('gone'));
    await remove(ns('vanished'));
    step('deleted while down');
    await create(ns('born'), 'acme', { costCenter: '400' });
    await patchNamespace(admin, ns('transferred'), { metadata: { labels: { [KEY.organization]: 'globex' } } });
    await waitFor('the clean relay saw all of it', async () => published(clean, 'deleted', ns('gone')) && published(clean, 'deleted', ns('vanished')) && published(clean, 'created', ns('born')) && published(clean, 'updated', ns('transferred')));
    await new Promise((r) => setTimeout(r, GRACE_MS));

    step('restarting the noisy relay');
    // Restarted: it lists again, republishes, and its snapshot finds the deletion it missed.
    const restartAt = new Date().toISOString();
    await startRelay(noisy);
    await deliver(noisy, noisyOrder(noisy.bus.log.slice(sent), 2));
    const snapshotEnd = messages(noisy).slice(sent).find((m): m is SnapshotEndMessage => m.type === 'snapshot-end')!;
    const goneEvent = messages(noisy).find((m): m is BillingEventMessage => m.type === 'event' && m.namespace === ns('gone'))!;
    expect(snapshotEnd.uids).not.toContain(goneEvent.uid);
    const takenAt = snapshotEnd.takenAt;
    // Its republished `created`s are old by their time, fresh by when it saw them (observedAt): a
    // prompt delivery of them reads no snapshot (test/unit/billing/late-event.test.ts counts it).
    const republished = messages(noisy).slice(sent).filter((m): m is BillingEventMessage => m.type === 'event' && m.event === 'created' && m.namespace.startsWith(`bill-${run}-`));
    expect(republished.length).toBeGreaterThan(0);
    for (const m of republished) expect([m.eventTime < restartAt, m.observedAt! >= restartAt]).toEqual([true, true]);
    const rowsOf = async (name: string) => (await noisy.sink.reportRows('2000-01-01', '2999-12-31')).filter((r) => r.namespace === ns(name)).map((r) => `${r.event}@${r.event_time}`).sort();
    // The snapshot's diff closed `vanished`; it knew nothing of `gone`.
    expect((await rowsOf('vanished')).filter((r) => r.startsWith('deleted'))).toEqual([`deleted@${takenAt}`]);
    expect(await rowsOf('gone')).toEqual([]);
    // `gone`'s created, after the snapshot that lacked it: recorded with its deletion then.
    step('late created delivered');
    await deliver(noisy, noisyOrder(late, 4));
    expect((await rowsOf('gone')).filter((r) => r.startsWith('deleted'))).toEqual([`deleted@${takenAt}`]);
    // A replay of everything ever published changes nothing.
    await deliver(noisy, noisyOrder(noisy.bus.log, 3));
    await deliver(clean, clean.bus.log);

    step('delivered');
    // Today and tomorrow: a namespace deleted today bills one day, a live one two.
    const expected = [
      { organization: 'acme', namespaceDays: 1 + 1 + 2, namespaces: 3 },
      { organization: 'globex', namespaceDays: 2 + 2 + 2, namespaces: 3 },
    ];
    expect(await report(clean)).toEqual(expected);
    expect(await report(noisy)).toEqual(expected);
    expect(await report(clean, 'cost-center')).toEqual([
      { organization: 'acme', costCenter: '300', namespaceDays: 1 + 1, namespaces: 2 },
      { organization: 'acme', costCenter: '400', namespaceDays: 2, namespaces: 1 },
      { organization: 'globex', costCenter: '', namespaceDays: 4, namespaces: 2 },
      { organization: 'globex', costCenter: '200', namespaceDays: 2, namespaces: 1 },
    ]);
    expect(await report(noisy, 'cost-center')).toEqual(await report(clean, 'cost-center'));

    // The deletions the noisy run missed are recorded as noticed by the restarted relay's snapshot, once.
    expect(takenAt >= restartAt).toBe(true);
    for (const name of ['gone', 'vanished']) expect((await rowsOf(name)).filter((r) => r.startsWith('deleted'))).toEqual([`deleted@${takenAt}`]);
    // The noisy sink holds no event twice, and the same created events as the clean one.
    // (A deletion a snapshot implies has an id of its own, not the watched deletion's: compared by namespace.)
    const ids = async (p: Pipeline, event: string, of: 'event_id' | 'namespace_uid' = 'event_id') => (await p.sink.reportRows('2000-01-01', '2999-12-31')).filter((r) => r.namespace.startsWith(`bill-${run}-`) && r.event === event).map((r) => r[of]).sort();
    expect(await ids(noisy, 'created')).toEqual(await ids(clean, 'created'));
    expect(await ids(noisy, 'deleted', 'namespace_uid')).toEqual(await ids(clean, 'deleted', 'namespace_uid'));
  }, 120_000);
});
