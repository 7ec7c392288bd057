// Taking a quota slot: read the Organization fresh, plan (ledger.ts), write the status with a
// resourceVersion precondition; on conflict read again and retry, a bounded number of times.
// kube-apiserver's ResourceQuota admission charges quota the same way, so N concurrent creates
// against a quota of Q admit exactly Q.
import { planReservation, quotaOf, type SlotRequest } from './ledger.ts';
import type { OrganizationApi } from './source.ts';

export interface ReserveOptions {
  defaultQuota: number;
  ttlSeconds: number;
  /** Dry run: check the quota, write nothing (the webhooks are `sideEffects: NoneOnDryRun`). */
  dryRun: boolean;
  maxAttempts?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export type ReserveResult =
  | { ok: true; note: string; attempts: number }
  | { ok: false; message: string; unavailable: boolean; attempts: number };

/** Enough attempts for every contender of a burst to see the quota fill up (each conflict means another writer won). */
export const DEFAULT_RESERVE_ATTEMPTS = 64;

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function reserveSlot(api: OrganizationApi, organization: string, request: SlotRequest, options: ReserveOptions): Promise<ReserveResult> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? pause;
  const max = options.maxAttempts ?? DEFAULT_RESERVE_ATTEMPTS;
  for (let attempt = 1; attempt <= max; attempt++) {
    let org;
    try {
      org = await api.get(organization);
    } catch (e) {
      return { ok: false, unavailable: true, attempts: attempt, message: `could not read organization "${organization}" (${(e as Error).message}); retry` };
    }
    if (!org) return { ok: false, unavailable: false, attempts: attempt, message: `organization "${organization}" does not exist` };
    const plan = planReservation(org, request, quotaOf(org, options.defaultQuota), now(), options.ttlSeconds);
    if (plan.kind === 'held') return { ok: true, attempts: attempt, note: `slot already held in organization "${organization}"` };
    if (plan.kind === 'full') return { ok: false, unavailable: false, attempts: attempt, message: plan.message };
    if (options.dryRun) return { ok: true, attempts: attempt, note: `dry run: organization "${organization}" would have ${plan.used} of ${plan.quota} namespaces` };
    const written = await api.writeStatus(org, plan.status);
    if (written.ok) return { ok: true, attempts: attempt, note: `reserved slot ${plan.used} of ${plan.quota} in organization "${organization}"` };
    if (!written.conflict) return { ok: false, unavailable: true, attempts: attempt, message: `could not reserve a namespace of organization "${organization}" (${written.error}); retry` };
    // Another writer won this round: back off a little, with jitter, so the next round spreads out.
    await sleep(Math.random() * Math.min(50, 2 * attempt));
  }
  return { ok: false, unavailable: true, attempts: max, message: `could not reserve a namespace of organization "${organization}": ${max} concurrent updates in a row; retry` };
}
