// Taking a quota slot: read the Organization fresh, plan (ledger.ts), write the status with a
// resourceVersion precondition; on conflict read again and retry, a bounded number of times.
// kube-apiserver's ResourceQuota admission charges quota the same way (batching the requests that
// arrive together), so N concurrent creates against a quota of Q admit exactly Q.
import { planReservation, planReservations, quotaOf, type SlotPlan, type SlotRequest } from './ledger.ts';
import type { OrganizationApi } from './source.ts';

export interface ReserveOptions {
  defaultQuota: number;
  ttlSeconds: number;
  /** Dry run: check the quota, write nothing (the webhooks are `sideEffects: NoneOnDryRun`). */
  dryRun: boolean;
  maxAttempts?: number;
  /**
   * Epoch ms after which no slot is written: the API server has given up on the webhook by then,
   * so a slot written later would be held for a namespace never created (reservationDeadline).
   */
  deadline?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export type ReserveResult =
  | { ok: true; note: string; attempts: number }
  | { ok: false; message: string; unavailable: boolean; attempts: number };

/** Enough attempts for every contender of a burst to see the quota fill up (each conflict means another writer won). */
export const DEFAULT_RESERVE_ATTEMPTS = 64;

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Time kept back from the webhook's timeoutSeconds: the API server started waiting before the
 * handler did (connection, a cold start, reading the body), and the status write takes time too.
 */
export const DEADLINE_MARGIN_MS = 1000;

/** The last moment a webhook started at `startedAt` with `timeoutSeconds` may still write a reservation. */
export function reservationDeadline(startedAt: number, timeoutSeconds: number): number {
  return startedAt + timeoutSeconds * 1000 - DEADLINE_MARGIN_MS;
}

/** Whether a reservation may still be written at `now` (no deadline: always). */
export function mayStillReserve(now: number, deadline: number | undefined): boolean {
  return deadline === undefined || now < deadline;
}

/** A request waiting for its slot, with when it stops being worth writing. */
interface Waiting {
  request: SlotRequest;
  deadline?: number;
  resolve: (result: ReserveResult) => void;
}

/** Per API client and Organization: the requests waiting for the next write (a writer runs while the entry exists). */
const waiting = new WeakMap<OrganizationApi, Map<string, Waiting[]>>();

const late = (organization: string, attempts: number): ReserveResult => ({ ok: false, unavailable: true, attempts, message: `could not reserve a namespace of organization "${organization}" in time (the API server stops waiting for the webhook); retry` });

/**
 * Reserves a slot for `request`. Requests of one webhook process for one Organization that
 * arrive while a write is under way share the next write (one read, one compare-and-swap for all
 * of them), as kube-apiserver's quota evaluator batches the creates of a namespace: a burst costs
 * a few writes, not one round of conflicts per slot. Between processes the compare-and-swap
 * decides. A dry run writes nothing and waits for no one.
 */
export function reserveSlot(api: OrganizationApi, organization: string, request: SlotRequest, options: ReserveOptions): Promise<ReserveResult> {
  if (options.dryRun) return checkSlot(api, organization, request, options);
  let byOrg = waiting.get(api);
  if (!byOrg) waiting.set(api, (byOrg = new Map()));
  const queue = byOrg.get(organization);
  return new Promise((resolve) => {
    const entry: Waiting = { request, ...(options.deadline !== undefined ? { deadline: options.deadline } : {}), resolve };
    if (queue) return void queue.push(entry);
    byOrg.set(organization, [entry]);
    void drain(api, byOrg, organization, options);
  });
}

/** Writes batch after batch until nobody waits; the entry is removed when the queue is empty. */
async function drain(api: OrganizationApi, byOrg: Map<string, Waiting[]>, organization: string, options: ReserveOptions): Promise<void> {
  // Let the requests that arrived with the first one join its batch.
  await Promise.resolve();
  for (;;) {
    const batch = byOrg.get(organization) ?? [];
    if (batch.length === 0) return void byOrg.delete(organization);
    byOrg.set(organization, []);
    await writeBatch(api, organization, batch, options).catch((e: unknown) => {
      for (const w of batch) w.resolve({ ok: false, unavailable: true, attempts: 1, message: `could not reserve a namespace of organization "${organization}" (${(e as Error).message}); retry` });
    });
  }
}

async function writeBatch(api: OrganizationApi, organization: string, batch: Waiting[], options: ReserveOptions): Promise<void> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? pause;
  const max = options.maxAttempts ?? DEFAULT_RESERVE_ATTEMPTS;
  let pending = batch;
  const settle = (w: Waiting, result: ReserveResult) => w.resolve(result);
  for (let attempt = 1; attempt <= max; attempt++) {
    let org;
    try {
      org = await api.get(organization);
    } catch (e) {
      for (const w of pending) settle(w, { ok: false, unavailable: true, attempts: attempt, message: `could not read organization "${organization}" (${(e as Error).message}); retry` });
      return;
    }
    if (!org) {
      for (const w of pending) settle(w, { ok: false, unavailable: false, attempts: attempt, message: `organization "${organization}" does not exist` });
      return;
    }
    const at = now();
    for (const w of pending) if (!mayStillReserve(at, w.deadline)) settle(w, late(organization, attempt));
    pending = pending.filter((w) => mayStillReserve(at, w.deadline));
    if (pending.length === 0) return;
    const { status, plans } = planReservations(org, pending.map((w) => w.request), quotaOf(org, options.defaultQuota), at, options.ttlSeconds);
    const written = status ? await api.writeStatus(org, status) : undefined;
    if (!written || written.ok) {
      pending.forEach((w, i) => settle(w, answer(organization, plans[i]!, attempt)));
      return;
    }
    if (!written.conflict) {
      for (const w of pending) settle(w, { ok: false, unavailable: true, attempts: attempt, message: `could not reserve a namespace of organization "${organization}" (${written.error}); retry` });
      return;
    }
    // Another writer won this round: back off a little, with jitter, so the next round spreads out.
    await sleep(Math.random() * Math.min(50, 2 * attempt));
  }
  for (const w of pending) settle(w, { ok: false, unavailable: true, attempts: max, message: `could not reserve a namespace of organization "${organization}": ${max} concurrent updates in a row; retry` });
}

function answer(organization: string, plan: SlotPlan, attempts: number): ReserveResult {
  if (plan.kind === 'held') return { ok: true, attempts, note: `slot already held in organization "${organization}"` };
  if (plan.kind === 'full') return { ok: false, unavailable: false, attempts, message: plan.message };
  return { ok: true, attempts, note: `reserved slot ${plan.used} of ${plan.quota} in organization "${organization}"` };
}

/** A dry run: the quota checked against a fresh read, nothing written. */
async function checkSlot(api: OrganizationApi, organization: string, request: SlotRequest, options: ReserveOptions): Promise<ReserveResult> {
  let org;
  try {
    org = await api.get(organization);
  } catch (e) {
    return { ok: false, unavailable: true, attempts: 1, message: `could not read organization "${organization}" (${(e as Error).message}); retry` };
  }
  if (!org) return { ok: false, unavailable: false, attempts: 1, message: `organization "${organization}" does not exist` };
  const plan = planReservation(org, request, quotaOf(org, options.defaultQuota), (options.now ?? Date.now)(), options.ttlSeconds);
  if (plan.kind !== 'reserve') return answer(organization, plan, 1);
  return { ok: true, attempts: 1, note: `dry run: organization "${organization}" would have ${plan.used} of ${plan.quota} namespaces` };
}
