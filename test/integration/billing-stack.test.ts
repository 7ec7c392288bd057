// The billing guide's walk-through (docs/guide/billing.md), as a test: the local stack (`npm start`) records billing rows into
// SQLite as namespaces come and go, and `furnish billing report` reads them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { openSqliteSink } from '../../shared/billing/sqlite.ts';
import type { BillingRow } from '../../shared/billing/types.ts';
import { KEY } from '../../shared/keys.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/log.ts';
import { startLocalStack, type LocalStack } from '../../scripts/start.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { runFurnish } from '../unit/cli/spawn.ts';
import { clientFor, createNamespace, waitFor } from './helpers.ts';

let cluster: TestCluster;
let stack: LocalStack;
let admin: KubeClient;
let dir: string;
let db: string;
const name = `walk-${process.pid % 1000}-${Date.now().toString(36).slice(-4)}`;

async function rows(): Promise<BillingRow[]> {
  const sink = await openSqliteSink(db);
  try {
    return (await sink.reportRows('2000-01-01', '2999-12-31')).filter((r) => r.namespace === name);
  } finally {
    await sink.close();
  }
}

beforeAll(async () => {
  cluster = await useTestCluster();
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  admin = await clientFor(cluster.kubeconfigPath, context);
  dir = mkdtempSync(join(tmpdir(), 'furnish-walk-'));
  db = join(dir, 'billing.sqlite');
  stack = await startLocalStack({ kubeconfigPath: cluster.kubeconfigPath, context, port: 0, relayPort: 0, webhooks: false, resyncSeconds: 0, log: silentLogger, env: { FURNISH_BILLING: `sqlite:${db}`, FURNISH_WATCH_TIMEOUT_SECONDS: '5' } });
}, 60_000);

afterAll(async () => {
  if (cluster && !cluster.isSimulated) await admin?.call({ method: 'DELETE', path: `/api/v1/namespaces/${name}` });
  await stack?.stop();
  admin?.close();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('npm start records billing', () => {
  it('create and delete a namespace, then furnish billing report', async () => {
    await createNamespace(admin, name, { [KEY.organization]: 'acme' }, { 'furnish.dev/billing.costCenter': '4711' });
    await waitFor('created row', async () => (await rows()).some((r) => r.event === 'created'));
    const [createdRow] = await rows();
    expect(createdRow).toMatchObject({ cluster: 'local', organization: 'acme', creator: 'alice', billing: { costCenter: '4711' } });
    await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${name}` });
    await waitFor('deleted row', async () => (await rows()).some((r) => r.event === 'deleted'), 60_000, 200);

    const today = new Date().toISOString().slice(0, 10);
    const run = await runFurnish(['billing', 'report', '--from', today, '--to', today, '--by', 'cost-center', '-o', 'csv', '--sink', `sqlite:${db}`]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^organization,cost_center,namespaces,namespace_days\n/);
    expect(run.stdout).toContain('\nacme,4711,1,1\n');
  }, 90_000);
});
