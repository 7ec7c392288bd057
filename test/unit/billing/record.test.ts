// record-billing's push handling on a real SQLite sink: the status code is the ack, a duplicate
// delivery stores nothing, billing fields fall back to the Organization's, failures are retried.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { createPushVerifier } from '../../../shared/auth/oidc.ts';
import { encodeBillingMessage, eventId, impliedDeletionId } from '../../../shared/billing/event.ts';
import { handleBillingEnvelope, handleBillingPush, type BillingRuntime } from '../../../shared/billing/function.ts';
import { organizationBillingReader, type RecordDeps } from '../../../shared/billing/record.ts';
import type { BillingSink } from '../../../shared/billing/sink.ts';
import { openSqliteSink } from '../../../shared/billing/sqlite.ts';
import type { BillingMessage } from '../../../shared/billing/types.ts';
import { createKubeClient, type KubeRequest } from '../../../shared/kube/client.ts';
import { TransientError } from '../../../shared/kube/errors.ts';
import { collectingLogger } from '../../../shared/log.ts';
import { message, row } from './helpers.ts';

const NOW = new Date('2026-03-02T12:00:00.000Z');
let dir: string;
let sink: BillingSink;
let deps: RecordDeps;
let orgReads: string[];

const push = (m: BillingMessage | Record<string, unknown>) => ({ message: { data: Buffer.from(JSON.stringify(m)).toString('base64'), messageId: '1', attributes: {} }, subscription: 'projects/p/subscriptions/record-billing' });
const allRows = () => sink.reportRows('2000-01-01', '2999-12-31');

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'furnish-record-'));
  sink = await openSqliteSink(join(dir, 'b.sqlite'));
  orgReads = [];
  deps = {
    sink,
    log: collectingLogger(),
    now: () => NOW,
    organizationBilling: async (_cluster, org) => {
      orgReads.push(org);
      return org === 'acme' ? { costCenter: '4711' } : ({} as Record<string, string>);
    },
  };
});
afterEach(async () => {
  await sink.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('record-billing: one row per message', () => {
  it('writes the row, with the Organization\'s billing map when the namespace has none', async () => {
    const m = message('created', 'a', '2026-03-01T10:00:00.000Z');
    const answer = await handleBillingEnvelope(deps, push(m));
    expect(answer).toEqual({ status: 200, body: { acknowledged: true, rows: 1, inserted: 1, duplicates: 0, refused: 0, eventId: eventId(m) } });
    expect(await allRows()).toEqual([{ ...row('created', 'a', '2026-03-01T10:00:00.000Z', { recorded: NOW.toISOString() }), billing: { costCenter: '4711' } }]);
    expect(orgReads).toEqual(['acme']);
  });

  it('the namespace\'s own billing fields (from its LNamespace) win, without reading the Organization', async () => {
    await handleBillingEnvelope(deps, push(message('created', 'a', '2026-03-01T10:00:00.000Z', { billing: { costCenter: '1' } })));
    expect((await allRows())[0]!.billing).toEqual({ costCenter: '1' });
    expect(orgReads).toEqual([]);
  });

  it('a duplicate delivery, or the same event republished later, stores nothing more', async () => {
    await handleBillingEnvelope(deps, push(message('created', 'a', '2026-03-01T10:00:00.000Z')));
    const again = await handleBillingEnvelope(deps, { ...push({ ...message('created', 'a', '2026-03-01T10:00:00.000Z'), resourceVersion: '555' }) });
    expect(again.body).toMatchObject({ inserted: 0, duplicates: 1 });
    expect(await allRows()).toHaveLength(1);
  });

  it('a snapshot end records the deletion of namespaces it no longer lists, once', async () => {
    await handleBillingEnvelope(deps, push(message('created', 'a', '2026-03-01T10:00:00.000Z')));
    await handleBillingEnvelope(deps, push(message('created', 'b', '2026-03-01T10:00:00.000Z')));
    const end = { v: 1, type: 'snapshot-end', cluster: 'c1', takenAt: '2026-03-02T11:00:00.000Z', uids: ['uid-a'] };
    expect((await handleBillingEnvelope(deps, push(end))).body).toMatchObject({ rows: 1, inserted: 1 });
    expect((await handleBillingEnvelope(deps, push(end))).body).toMatchObject({ rows: 0, inserted: 0 });
    const deleted = (await allRows()).filter((r) => r.event === 'deleted');
    expect(deleted).toEqual([expect.objectContaining({ namespace: 'b', event_time: '2026-03-02T11:00:00.000Z', event_id: impliedDeletionId('c1', 'uid-b', end.takenAt), billing: { costCenter: '4711' } })]);
  });

  it('acknowledges (204) and logs a message that can never be processed', async () => {
    const answer = await handleBillingEnvelope(deps, push({ v: 1, type: 'event', event: 'renamed' }));
    expect(answer.status).toBe(204);
    expect(answer.body.error).toContain('billing message: cluster: expected a non-empty string');
    expect(await handleBillingEnvelope(deps, { nope: 1 })).toMatchObject({ status: 400 });
  });

  it('503 when the Organization cannot be read now (Pub/Sub redelivers), 500 on a bug', async () => {
    deps.organizationBilling = async () => {
      throw new TransientError('reading organization acme: HTTP 503', { status: 503 });
    };
    expect(await handleBillingEnvelope(deps, push(message('created', 'a', '2026-03-01T10:00:00.000Z')))).toMatchObject({ status: 503 });
    deps.organizationBilling = async () => {
      throw new Error('boom');
    };
    expect(await handleBillingEnvelope(deps, push(message('created', 'a', '2026-03-01T10:00:00.000Z')))).toMatchObject({ status: 500 });
    expect(await allRows()).toEqual([]);
  });

  it('503 while the sink still fails a row after its retries; 200 when it refuses the row for good', async () => {
    const failing = (retryable: boolean): BillingSink => ({ ...sink, insert: async (rows) => ({ inserted: 0, duplicates: 0, failed: rows.map((r) => ({ row: r, reason: 'x', retryable })) }) });
    expect(await handleBillingEnvelope({ ...deps, sink: failing(true) }, push(message('created', 'a', '2026-03-01T10:00:00.000Z')))).toMatchObject({ status: 503 });
    expect(await handleBillingEnvelope({ ...deps, sink: failing(false) }, push(message('created', 'a', '2026-03-01T10:00:00.000Z')))).toMatchObject({ status: 200, body: { refused: 1 } });
  });
});

describe('record-billing push authentication', () => {
  let rt: BillingRuntime;
  let token: string;
  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k', alg: 'RS256' };
    const settings = { mode: 'oidc' as const, issuer: 'https://accounts.google.com', audience: 'https://f/record-billing', jwksUrl: 'https://unused.invalid', serviceAccountEmail: 'push@p.iam.gserviceaccount.com' };
    rt = { verify: createPushVerifier(settings, createLocalJWKSet({ keys: [jwk] })), deps: undefined as never };
    token = await new SignJWT({ email: settings.serviceAccountEmail, email_verified: true }).setProtectedHeader({ alg: 'RS256', kid: 'k' }).setIssuer(settings.issuer).setAudience(settings.audience).setIssuedAt().setExpirationTime('5m').sign(privateKey);
  });

  it('refuses a delivery without a valid OIDC token, storing nothing', async () => {
    expect(await handleBillingPush({ ...rt, deps }, undefined, push(message('created', 'a', '2026-03-01T10:00:00.000Z')))).toMatchObject({ status: 401 });
    expect(await allRows()).toEqual([]);
    expect(await handleBillingPush({ ...rt, deps }, `Bearer ${token}`, push(message('created', 'a', '2026-03-01T10:00:00.000Z')))).toMatchObject({ status: 200 });
    expect(await allRows()).toHaveLength(1);
  });

  it('the relay\'s encoding is what record-billing decodes', async () => {
    const env = encodeBillingMessage(message('created', 'a', '2026-03-01T10:00:00.000Z'));
    expect(await handleBillingEnvelope(deps, { message: { data: env.data.toString('base64'), attributes: env.attributes } })).toMatchObject({ status: 200 });
  });
});

describe('organizationBillingReader', () => {
  const reader = (answer: (req: KubeRequest) => { status: number; data: unknown }, requests: string[] = []) => {
    const kube = createKubeClient({ server: 'https://memory.invalid', agent: undefined as never, headers: async () => ({}) }, { transport: async (req) => (requests.push(req.path), answer(req)), retry: { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 }, sleep: async () => {} });
    return organizationBillingReader(async () => kube, collectingLogger(), 30_000, () => 0);
  };

  it('reads spec.billing (strings only), once per organization while cached', async () => {
    const requests: string[] = [];
    const read = reader(() => ({ status: 200, data: { spec: { billing: { costCenter: '4711', budget: 5 } } } }), requests);
    expect(await read('c1', 'acme')).toEqual({ costCenter: '4711' });
    expect(await read('c1', 'acme')).toEqual({ costCenter: '4711' });
    expect(requests).toEqual(['/apis/furnish.dev/v1alpha1/organizations/acme']);
  });

  it('an absent Organization (or kind) bills no fields; an unavailable API server is retried', async () => {
    expect(await reader(() => ({ status: 404, data: { kind: 'Status', reason: 'NotFound' } }))('c1', 'acme')).toEqual({});
    await expect(reader(() => ({ status: 503, data: {} }))('c1', 'acme')).rejects.toThrow(TransientError);
  });
});
