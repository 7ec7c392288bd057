// The billing contract: what the relay publishes to the billing topic, and the row record-billing
// writes per message. See README "Billing" for the schema and its guarantees.

export const BILLING_MESSAGE_VERSION = 1;

/** created / updated (organization, creator or billing fields changed) / deleted / snapshot (daily, per live namespace). */
export type BillingEventType = 'created' | 'updated' | 'deleted' | 'snapshot';
export const BILLING_EVENTS: readonly BillingEventType[] = ['created', 'updated', 'deleted', 'snapshot'];

/** What is billed on a namespace: its owner, its creator, its own billing fields (annotations). */
export interface BillingState {
  organization: string;
  creator: string;
  /** From `furnish.dev/billing.<field>` annotations (LNamespace); absent: the Organization's spec.billing applies. */
  billing?: Record<string, string>;
}

/** One namespace lifecycle event, as published by the relay. */
export interface BillingEventMessage extends BillingState {
  v: typeof BILLING_MESSAGE_VERSION;
  type: 'event';
  event: BillingEventType;
  cluster: string;
  namespace: string;
  uid: string;
  /** The namespace's resourceVersion the event was seen at (part of the id of `updated`). */
  resourceVersion?: string;
  /** RFC 3339: creationTimestamp (created), deletionTimestamp or time noticed (deleted), time seen (updated), time taken (snapshot). */
  eventTime: string;
  /**
   * RFC 3339, the relay's clock: when it saw the namespace alive (a snapshot's list: its takenAt;
   * not on `deleted`). Not part of the event id. A `created` republished by a restarted relay is old by
   * its eventTime but fresh by this: record-billing reads the snapshots only for events delivered
   * more than the grace after it (see contradictableAfter). Absent (older relays): eventTime counts.
   */
  observedAt?: string;
}

/**
 * Closes a snapshot: every namespace uid the relay listed at `takenAt`. record-billing records
 * the deletion of every namespace it still believes alive that is not among them.
 */
export interface SnapshotEndMessage {
  v: typeof BILLING_MESSAGE_VERSION;
  type: 'snapshot-end';
  cluster: string;
  /** RFC 3339, taken before the list started. */
  takenAt: string;
  uids: string[];
}

export type BillingMessage = BillingEventMessage | SnapshotEndMessage;

/** One row of the billing table (BigQuery and SQLite alike). Times are RFC 3339 UTC with milliseconds. */
export interface BillingRow {
  event_id: string;
  event: BillingEventType;
  event_time: string;
  recorded_time: string;
  cluster: string;
  namespace: string;
  namespace_uid: string;
  organization: string;
  creator: string;
  billing: Record<string, string>;
  resource_version: string;
}
