// Pure decisions of billing: what a namespace bills (its state), which event a change is, the
// deterministic event id, the row a message becomes, and the billing message on the wire.
import { createHash } from 'node:crypto';
import { KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { parseMessageData, type Envelope } from '../bus/envelope.ts';
import { BILLING_EVENTS, BILLING_MESSAGE_VERSION, type BillingEventMessage, type BillingEventType, type BillingMessage, type BillingRow, type BillingState } from './types.ts';

/** Annotations `furnish.dev/billing.<field>` carry a namespace's own billing fields (set from its LNamespace). */
export const BILLING_ANNOTATION_PREFIX = 'furnish.dev/billing.';

export function billingState(ns: KubeObject): BillingState {
  const annotations = ns.metadata.annotations ?? {};
  const fields = Object.entries(annotations)
    .filter(([k]) => k.startsWith(BILLING_ANNOTATION_PREFIX) && k.length > BILLING_ANNOTATION_PREFIX.length)
    .map(([k, v]) => [k.slice(BILLING_ANNOTATION_PREFIX.length), v] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const state: BillingState = { organization: ns.metadata.labels?.[KEY.organization] ?? '', creator: annotations[KEY.creator] ?? '' };
  if (fields.length > 0) state.billing = Object.fromEntries(fields);
  return state;
}

/** Equal keys ⇔ equal billed state (billing fields are sorted by billingState). */
export function stateKey(s: BillingState): string {
  return JSON.stringify([s.organization, s.creator, s.billing ?? null]);
}

/** RFC 3339 UTC with milliseconds: one spelling, so that text order is time order (SQLite). */
export function isoTime(t: Date | string | number): string {
  const d = t instanceof Date ? t : new Date(t);
  if (Number.isNaN(d.getTime())) throw new Error(`not a time: ${JSON.stringify(t)}`);
  return d.toISOString();
}

/** What the relay saw happen to a namespace; LISTED is a namespace found by a (re)list. */
export type Observation = 'ADDED' | 'MODIFIED' | 'DELETED' | 'LISTED';

/**
 * The billing event a namespace change is, given what was billed before (undefined: never seen by
 * this relay process), or null when nothing billed changed. A namespace first seen is `created`
 * at its creationTimestamp whatever the relay was doing then, so a relay restart republishes the
 * same event with the same id.
 */
export function deriveEvent(before: BillingState | undefined, seen: Observation, ns: KubeObject, now: Date): { event: BillingEventType; eventTime: string } | null {
  if (seen === 'DELETED') return { event: 'deleted', eventTime: isoTime(ns.metadata.deletionTimestamp ?? now) };
  if (!before) return { event: 'created', eventTime: isoTime(ns.metadata.creationTimestamp ?? now) };
  return stateKey(before) === stateKey(billingState(ns)) ? null : { event: 'updated', eventTime: isoTime(now) };
}

/** The UTC day of an RFC 3339 time. */
export function dayOf(time: string): string {
  return isoTime(time).slice(0, 10);
}

/**
 * Deterministic: created and deleted happen once per namespace uid (a deletion a snapshot implies
 * has impliedDeletionId); an update is identified by the resourceVersion it was seen at; a
 * snapshot by its UTC day (one per namespace per day).
 */
export function eventId(m: Pick<BillingEventMessage, 'cluster' | 'uid' | 'event' | 'resourceVersion' | 'eventTime'>): string {
  const discriminator = m.event === 'updated' ? (m.resourceVersion ?? '') : m.event === 'snapshot' ? dayOf(m.eventTime) : '';
  return hashId([m.cluster, m.uid, m.event, discriminator]);
}

/**
 * A deletion nobody saw, implied by the complete snapshot taken at `takenAt` that no longer listed
 * the namespace: an id of its own per snapshot, not the namespace's `deleted` id, so that its
 * watched `deleted`, should it come after (on its ordering key, right behind a late `created`), is
 * stored too, and the report counts the earlier of the two.
 */
export function impliedDeletionId(cluster: string, uid: string, takenAt: string): string {
  return hashId([cluster, uid, 'deleted', `snapshot ${isoTime(takenAt)}`]);
}

/** 32 hex digits of the SHA-256 of the parts: ids that are the same for the same parts. */
export function hashId(parts: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
}

/** The row of one event; `billing` is the namespace's own fields, else its Organization's. */
export function buildRow(m: BillingEventMessage, organizationBilling: Record<string, string>, recordedAt: Date): BillingRow {
  return {
    event_id: eventId(m),
    event: m.event,
    event_time: isoTime(m.eventTime),
    recorded_time: isoTime(recordedAt),
    cluster: m.cluster,
    namespace: m.namespace,
    namespace_uid: m.uid,
    organization: m.organization,
    creator: m.creator,
    billing: m.billing ?? organizationBilling,
    resource_version: m.resourceVersion ?? '',
  };
}

/** One ordering key per namespace: Pub/Sub delivers one namespace's events in publish order. */
export function encodeBillingMessage(m: BillingMessage): Envelope {
  const key = m.type === 'event' ? `${m.cluster}/billing/${m.uid}` : `${m.cluster}/billing-snapshot`;
  const attributes: Record<string, string> = { type: m.type, cluster: m.cluster };
  if (m.type === 'event') attributes.event = m.event;
  return { data: Buffer.from(JSON.stringify(m)), attributes, orderingKey: key };
}

export type DecodedBilling = { ok: true; message: BillingMessage } | { ok: false; reason: string };

function isStringMap(v: unknown): v is Record<string, string> {
  return !!v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
}

function isTime(v: unknown): v is string {
  return typeof v === 'string' && !Number.isNaN(Date.parse(v));
}

/** The first thing wrong with a decoded message, named by its path; undefined when valid. */
export function billingMessageProblem(m: Record<string, unknown>): string | undefined {
  if (m.v !== BILLING_MESSAGE_VERSION) return `v: expected ${BILLING_MESSAGE_VERSION}, got ${JSON.stringify(m.v)}`;
  if (typeof m.cluster !== 'string' || m.cluster === '') return 'cluster: expected a non-empty string';
  if (m.type === 'snapshot-end') {
    if (!isTime(m.takenAt)) return 'takenAt: expected an RFC 3339 time';
    if (!Array.isArray(m.uids) || !m.uids.every((u) => typeof u === 'string')) return 'uids: expected an array of strings';
    return undefined;
  }
  if (m.type !== 'event') return `type: expected "event" or "snapshot-end", got ${JSON.stringify(m.type)}`;
  if (!BILLING_EVENTS.includes(m.event as BillingEventType)) return `event: expected one of ${BILLING_EVENTS.join(', ')}, got ${JSON.stringify(m.event)}`;
  for (const field of ['namespace', 'uid'] as const) if (typeof m[field] !== 'string' || m[field] === '') return `${field}: expected a non-empty string`;
  for (const field of ['organization', 'creator'] as const) if (typeof m[field] !== 'string') return `${field}: expected a string`;
  if (m.resourceVersion !== undefined && typeof m.resourceVersion !== 'string') return 'resourceVersion: expected a string';
  if (m.event === 'updated' && !m.resourceVersion) return 'resourceVersion: required for an updated event (it identifies the event)';
  if (!isTime(m.eventTime)) return 'eventTime: expected an RFC 3339 time';
  if (m.observedAt !== undefined && !isTime(m.observedAt)) return `observedAt: expected an RFC 3339 time, got ${JSON.stringify(m.observedAt)}`;
  if (m.billing !== undefined && !isStringMap(m.billing)) return 'billing: expected a map of strings';
  return undefined;
}

/** Never throws: a malformed message is acknowledged and logged, never redelivered forever. */
export function decodeBillingMessage(data: Buffer | string | undefined): DecodedBilling {
  const parsed = parseMessageData(data);
  if (!parsed.ok) return parsed;
  if (Array.isArray(parsed.value)) return { ok: false, reason: 'message data is not an object' };
  const problem = billingMessageProblem(parsed.value);
  return problem ? { ok: false, reason: `billing message: ${problem}` } : { ok: true, message: parsed.value as unknown as BillingMessage };
}
