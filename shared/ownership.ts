// Which objects are Furnish's: one rule, read by the reconciler's pruning (reconcile/plan.ts) and by
// the protect-objects webhook, which keeps it true. An object is Furnish's when it is a member of
// its namespace's ApplySet (label applyset.kubernetes.io/part-of = that set's id) AND Furnish's
// field manager owns that membership (managedFields). Neither half alone: a label is written by
// anyone who may edit the object, and a field manager name by anyone who asks for it
// (`?fieldManager=furnish`, or a user agent `furnish/...`). protect-objects refuses anyone but
// Furnish's reconciler turning the rule's answer either way or changing Furnish's marks
// (ownershipChange), so an object can be neither detached from pruning nor made Furnish's to have
// it deleted. Objects older versions applied carry both halves (the label always was applied).
import { FIELD_MANAGER, KEY } from './keys.ts';
import type { KubeObject } from './kube/types.ts';
import { APPLYSET_PARENT_KIND, APPLYSET_PARENT_NAME, applySetId } from './render/applyset.ts';

/** The labels and annotations Furnish's template applies put on every object, and only Furnish changes. */
export const OWNERSHIP_MARKS = {
  labels: [KEY.template, KEY.applySetPartOf],
  annotations: [KEY.appliedHash, KEY.deletionPolicy],
} as const;

interface ManagedEntry {
  manager?: unknown;
  operation?: unknown;
  subresource?: unknown;
  time?: unknown;
  fieldsV1?: unknown;
}

const MEMBERSHIP = ['f:metadata', 'f:labels', `f:${KEY.applySetPartOf}`] as const;

function furnishEntries(obj: KubeObject | null | undefined): ManagedEntry[] {
  const entries = obj?.metadata?.managedFields;
  if (!Array.isArray(entries)) return [];
  return entries.filter((e): e is ManagedEntry => typeof e === 'object' && e !== null && (e as ManagedEntry).manager === FIELD_MANAGER);
}

function owns(fieldsV1: unknown, path: readonly string[]): boolean {
  let at = fieldsV1;
  for (const step of path) {
    if (!at || typeof at !== 'object') return false;
    at = (at as Record<string, unknown>)[step];
  }
  return at !== undefined;
}

/**
 * Whether `obj` is Furnish's in `namespace` (default: its own): a member of that namespace's
 * ApplySet, and Furnish's field manager (through the object itself, not a subresource) owns the
 * membership label.
 */
export function ownedByFurnish(obj: KubeObject, namespace = obj.metadata.namespace ?? ''): boolean {
  const member = obj.metadata.labels?.[KEY.applySetPartOf];
  if (member === undefined || member !== applySetId(namespace)) return false;
  return furnishEntries(obj).some((e) => !e.subresource && owns(e.fieldsV1, MEMBERSHIP));
}

/** Whether every field `next` names is named in `prev` too (FieldsV1 tries: keys only). */
function fieldsWithin(next: unknown, prev: unknown): boolean {
  if (!next || typeof next !== 'object') return true;
  if (!prev || typeof prev !== 'object') return Object.keys(next).length === 0;
  const p = prev as Record<string, unknown>;
  return Object.entries(next as Record<string, unknown>).every(([k, v]) => k in p && fieldsWithin(v, p[k]));
}

/**
 * Whether a write recorded something under Furnish's field manager: an entry of manager `furnish`
 * that the old object did not have as it is (the server stamps an entry's time whenever its manager
 * changes, adds or removes a field, and only then; another manager taking fields over only shrinks
 * it), or the request named the manager.
 */
export function wroteAsFurnish(old: KubeObject | null | undefined, next: KubeObject | null | undefined, fieldManager?: unknown): boolean {
  if (fieldManager === FIELD_MANAGER) return true;
  const before = furnishEntries(old);
  return furnishEntries(next).some((e) => !before.some((b) => b.operation === e.operation && (b.subresource ?? '') === (e.subresource ?? '') && b.time === e.time && fieldsWithin(e.fieldsV1, b.fieldsV1)));
}

/** The marks an object carries (absent ones left out). */
function marksOf(obj: KubeObject): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of OWNERSHIP_MARKS.labels) if (obj.metadata.labels?.[k] !== undefined) out[`label ${k}`] = obj.metadata.labels[k];
  for (const k of OWNERSHIP_MARKS.annotations) if (obj.metadata.annotations?.[k] !== undefined) out[`annotation ${k}`] = obj.metadata.annotations[k];
  return out;
}

export interface OwnershipWrite {
  /** The object as it is; null or absent on CREATE. */
  old?: KubeObject | null;
  /** The object as it would be; null or absent on DELETE. */
  next?: KubeObject | null;
  namespace: string;
  /** AdmissionRequest.options.fieldManager. */
  fieldManager?: unknown;
}

/**
 * What a write changes of Furnish's ownership, in words; undefined when nothing: whether the object
 * is Furnish's (either way), Furnish's marks on an object that is (added, changed, removed), or
 * what field manager `furnish` owns of it. Deleting an object is not a change of its ownership.
 */
export function ownershipChange(w: OwnershipWrite): string | undefined {
  if (!w.next) return undefined;
  const was = w.old ? ownedByFurnish(w.old, w.namespace) : false;
  const is = ownedByFurnish(w.next, w.namespace);
  if (was && !is) return `takes it out of Furnish's ApplySet (label ${KEY.applySetPartOf}, or the managedFields entry of field manager "${FIELD_MANAGER}" that owns it)`;
  if (!was && is) return `makes it Furnish's (label ${KEY.applySetPartOf}=${applySetId(w.namespace)} with field manager "${FIELD_MANAGER}")`;
  if (!was) return undefined;
  const before = marksOf(w.old!);
  const after = marksOf(w.next);
  const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => before[k] !== after[k]).sort();
  if (changed.length > 0) return `sets, changes or removes ${changed.join(', ')}`;
  if (wroteAsFurnish(w.old, w.next, w.fieldManager)) return `writes as field manager "${FIELD_MANAGER}"`;
  return undefined;
}

/** Whether `obj` is the ApplySet parent Furnish keeps in `namespace` (the ConfigMap furnish-applyset with that set's id). */
export function isFurnishParent(obj: KubeObject | null | undefined, namespace: string): boolean {
  if (!obj || obj.apiVersion !== 'v1' || obj.kind !== APPLYSET_PARENT_KIND.kind || obj.metadata?.name !== APPLYSET_PARENT_NAME) return false;
  return obj.metadata.labels?.[KEY.applySetId] === applySetId(namespace);
}
