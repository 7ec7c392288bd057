// The namespace quota of an Organization as a ledger on its status: counted namespaces plus
// reservations held by admitted creates, each keyed by the admission uid and expiring (after
// Capsule's QuantityLedger). Pure: the webhook and the reconciler write what these functions
// return with a resourceVersion precondition, so concurrent writers never both win.
import type { Organization, OrganizationStatus, Reservation } from './types.ts';
import { organizationName } from './types.ts';
import { newestRevision } from '../kube/revisions.ts';

export function quotaOf(org: Organization, defaultQuota: number): number {
  const q = org.spec?.namespaceQuota;
  return typeof q === 'number' && Number.isSafeInteger(q) && q >= 0 ? q : defaultQuota;
}

function isLive(r: Reservation, now: number): boolean {
  const expires = Date.parse(r.expires);
  return Number.isFinite(expires) && expires > now;
}

/** Reservations that still hold a slot; one per namespace name (two creates of one name share it). */
export function liveReservations(status: OrganizationStatus | undefined, now: number): Reservation[] {
  const seen = new Set<string>();
  return (status?.reservations ?? []).filter((r) => {
    if (!isLive(r, now) || seen.has(r.namespace)) return false;
    seen.add(r.namespace);
    return true;
  });
}

export function usedSlots(org: Organization, now: number): number {
  return (org.status?.namespaces ?? 0) + liveReservations(org.status, now).length;
}

/** `organization "acme" has 25 of 25 namespaces` */
export function quotaDenial(org: Organization, used: number, quota: number): string {
  return `organization "${organizationName(org)}" has ${used} of ${quota} namespaces`;
}

export interface SlotRequest {
  uid: string;
  namespace: string;
}

export type SlotPlan =
  /** This request (or another create of the same name) already holds a slot. */
  | { kind: 'held' }
  | { kind: 'full'; used: number; quota: number; message: string }
  /** Write this status (resourceVersion-checked) to take the slot. */
  | { kind: 'reserve'; status: OrganizationStatus; used: number; quota: number };

export function planReservation(org: Organization, request: SlotRequest, quota: number, now: number, ttlSeconds: number): SlotPlan {
  const live = liveReservations(org.status, now);
  if (live.some((r) => r.uid === request.uid || r.namespace === request.namespace)) return { kind: 'held' };
  const used = (org.status?.namespaces ?? 0) + live.length;
  if (used >= quota) return { kind: 'full', used, quota, message: quotaDenial(org, used, quota) };
  const reservation: Reservation = { uid: request.uid, namespace: request.namespace, expires: new Date(now + ttlSeconds * 1000).toISOString() };
  return { kind: 'reserve', used: used + 1, quota, status: { ...org.status, reservations: [...live, reservation] } };
}

/**
 * Several requests planned against one read of the Organization, in order, each seeing the slots
 * the ones before it took (kube-apiserver's quota evaluator charges a batch the same way): the
 * status to write when any took a slot, and each request's plan.
 */
export function planReservations(org: Organization, requests: readonly SlotRequest[], quota: number, now: number, ttlSeconds: number): { status?: OrganizationStatus; plans: SlotPlan[] } {
  let current = org;
  const plans = requests.map((request) => {
    const plan = planReservation(current, request, quota, now, ttlSeconds);
    if (plan.kind === 'reserve') current = { ...current, status: plan.status };
    return plan;
  });
  return { ...(current !== org ? { status: current.status } : {}), plans };
}

/** Only what the reconciler needs to know about a namespace. */
export interface CountedNamespace {
  name: string;
  terminating: boolean;
  /** Its metadata.resourceVersion as listed. */
  resourceVersion?: string;
}

/**
 * Where a true-up's namespace list came from: the watch cache at the floor, etcd (a resync, an
 * event without a revision), or etcd because the cache could not reach the floor (`fallback`).
 */
export type ListSource = 'cache' | 'etcd' | 'fallback';

/**
 * The floor the next true-up lists at: the newest namespace revision counted, never below what a
 * list has shown. It only grows, except after a fallback: the cache could not reach it, so it may
 * be a floor the server never reaches (a status written by hand, restored from another cluster),
 * and the etcd list, which holds everything counted, replaces it with its own newest.
 */
export function nextFloor(before: string | undefined, namespaces: readonly CountedNamespace[], source: ListSource): string | undefined {
  const listed = namespaces.map((n) => n.resourceVersion);
  return newestRevision(source === 'fallback' ? listed : [before, ...listed]);
}

/**
 * The status once counted from the real namespace list: terminating namespaces excluded,
 * reservations dropped once their namespace is counted (consumed) or expired, and the floor
 * (`countedResourceVersion`, see nextFloor) that keeps a later true-up from going back to a view
 * without a namespace whose reservation this one dropped (reconcile.ts). Undefined when nothing
 * changes (a no-op resync writes nothing); a floor only grown is written with the next change, a
 * floor replaced at once (else every true-up waits for the cache again).
 */
export function trueUp(org: Organization, namespaces: readonly CountedNamespace[], now: number, source: ListSource = 'etcd'): OrganizationStatus | undefined {
  const live = namespaces.filter((n) => !n.terminating);
  const counted = new Set(live.map((n) => n.name));
  const reservations = liveReservations(org.status, now).filter((r) => !counted.has(r.namespace));
  const { countedResourceVersion: was, ...before } = org.status ?? {};
  const floor = nextFloor(was, namespaces, source);
  const replaced = source === 'fallback' && floor !== was;
  const unchanged = before.namespaces === live.length && JSON.stringify(before.reservations ?? []) === JSON.stringify(reservations);
  if (unchanged && !replaced) return undefined;
  return { ...before, namespaces: live.length, reservations, ...(floor ? { countedResourceVersion: floor } : {}) };
}
