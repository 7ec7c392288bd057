// What Furnish applied in a namespace, recorded on the Namespace object itself (annotation
// KEY.applied): which objects, of which template, plus the ApplySet bookkeeping the parent mirrors.
// It lives on the namespace, which the reconciler reads anyway and a namespace's own users cannot
// edit (unlike the ApplySet parent ConfigMap inside it). It records only what a clean apply does
// not change, so that a template change rolled out to a converged namespace writes the objects
// that changed and nothing else: which version of an object is in place is on the object
// (furnish.dev/hash, written by the same apply; a fan-out reads them cluster-wide once), and what
// the server made of an apply is recorded only when it differs from what observed.ts predicts
// (the server's own normalisation of quantities). It is a cache of Furnish's own writes, never
// the word on ownership: what Furnish owns is found on the objects (label or field manager).
import { KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { sortedUnique } from './objects.ts';

export interface RecordedObject {
  template: string;
  /**
   * Hash of what the server stored (observed.ts) when it differs from the prediction
   * (expectedObserved); '' when the server stored what was predicted, and for CreateOnly objects
   * (never compared).
   */
  observed: string;
}

export interface AppliedRecord {
  objects: Record<string, RecordedObject>;
  groupKinds: string[];
  /** Templates applied in full, and those that failed: what the ApplySet parent says. */
  applied: string[];
  failed: string[];
}

export const EMPTY_RECORD: AppliedRecord = { objects: {}, groupKinds: [], applied: [], failed: [] };

interface Stored {
  v: 2;
  /** key → [template] or [template, observed hash the prediction missed]. */
  o: Record<string, [string] | [string, string]>;
  gk: string[];
  t: string[];
  f: string[];
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/**
 * The namespace's record, or null when it has none, an unreadable one or one of an earlier format
 * (then everything is read, and the next write records it anew).
 */
export function readRecord(ns: KubeObject): AppliedRecord | null {
  const raw = ns.metadata.annotations?.[KEY.applied];
  if (!raw) return null;
  let parsed: Partial<Stored>;
  try {
    parsed = JSON.parse(raw) as Partial<Stored>;
  } catch {
    return null;
  }
  if (parsed?.v !== 2 || !parsed.o || typeof parsed.o !== 'object' || !isStrings(parsed.gk) || !isStrings(parsed.t) || !isStrings(parsed.f)) return null;
  const objects: Record<string, RecordedObject> = {};
  for (const [key, entry] of Object.entries(parsed.o)) {
    if (!isStrings(entry) || entry.length < 1 || entry.length > 2) return null;
    objects[key] = { template: entry[0]!, observed: entry[1] ?? '' };
  }
  return { objects, groupKinds: sortedUnique(parsed.gk), applied: sortedUnique(parsed.t), failed: sortedUnique(parsed.f) };
}

/** Canonical text of a record (keys sorted), so that an unchanged record is never written. */
export function formatRecord(record: AppliedRecord): string {
  const o: Stored['o'] = {};
  for (const key of Object.keys(record.objects).sort()) {
    const e = record.objects[key]!;
    o[key] = e.observed ? [e.template, e.observed] : [e.template];
  }
  const stored: Stored = { v: 2, o, gk: sortedUnique(record.groupKinds), t: sortedUnique(record.applied), f: sortedUnique(record.failed) };
  return JSON.stringify(stored);
}

/** The annotation value to write, or null when the namespace already holds this record. */
export function recordChange(ns: KubeObject, record: AppliedRecord): string | null {
  const text = formatRecord(record);
  return ns.metadata.annotations?.[KEY.applied] === text ? null : text;
}
