// Drift judged by what the API server made of our apply, never by the template's spelling: the
// server normalises quantities (`1000m` is stored as `1`, `1024Mi` as `1Gi`, `0.5` as `500m`),
// drops empty lists and fills defaults, so a live object never equals what the template spells.
// After each apply the reconciler hashes the server's answer projected onto the fields the
// template sets. What the server stores is mostly predictable (the object as applied, quantities
// in canonical form: kube/quantity.ts); only an answer that differs from the prediction is kept
// in the namespace's record (record.ts), so that a clean apply needs no record write. A later
// resync hashes the live object's projection the same way and compares it with the recorded
// answer, else the prediction: equal means nobody changed what we set, whatever spelling the
// template uses; different is drift, repaired by one apply.
import { KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { normaliseQuantities } from '../kube/quantity.ts';
import { contentHash, groupOf } from '../render/index.ts';

/** Annotations that record the apply itself: not part of what is compared. */
const BOOKKEEPING = new Set<string>([KEY.appliedHash, KEY.observedHash]);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * `have` restricted to the fields `shape` sets: maps are followed key by key, anything else
 * (scalars, lists) is taken whole from `have`, so defaults the server adds inside a list we set
 * count, and fields other managers add beside ours do not.
 */
export function projectOnto(shape: unknown, have: unknown): unknown {
  if (!isRecord(shape) || !isRecord(have)) return have;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(shape)) if (key in have) out[key] = projectOnto(shape[key], have[key]);
  return out;
}

/** What is compared of an object: every field the desired object sets except status and our bookkeeping. */
function comparable(want: KubeObject): Record<string, unknown> {
  const { status: _status, metadata, ...rest } = want;
  const annotations = Object.fromEntries(Object.entries(metadata.annotations ?? {}).filter(([k]) => !BOOKKEEPING.has(k)));
  return { ...rest, metadata: { labels: metadata.labels ?? {}, annotations } };
}

/** Hash of `served` (a dry-run answer or a live object) as far as `want` sets it. */
export function observedHash(want: KubeObject, served: KubeObject): string {
  const shape = comparable(want);
  const projected = projectOnto(shape, served) as Record<string, unknown>;
  const meta = (projected.metadata ?? {}) as { labels?: Record<string, string>; annotations?: Record<string, string> };
  const annotations = Object.fromEntries(Object.entries(meta.annotations ?? {}).filter(([k]) => !BOOKKEEPING.has(k)));
  return contentHash({ ...projected, metadata: { labels: meta.labels ?? {}, annotations } }).slice(0, 32);
}

/** What the server is expected to store of `want`: the object itself, its quantities in canonical form. */
export function predictedStored(want: KubeObject): KubeObject {
  const copy = structuredClone(want);
  normaliseQuantities(groupOf(want.apiVersion), want.kind, copy as unknown as Record<string, unknown>);
  return copy;
}

/** Predictions by the desired object's content hash and deletion policy (all that observedHash reads of it); bounded. */
const predictions = new Map<string, string>();
const MAX_PREDICTIONS = 4096;

/** observedHash of the predicted answer: what an apply of `want` at `wantHash` leaves when nothing surprises. */
export function expectedObserved(want: KubeObject, wantHash: string): string {
  const key = `${wantHash}|${want.metadata.annotations?.[KEY.deletionPolicy] ?? ''}`;
  let hash = predictions.get(key);
  if (hash === undefined) {
    hash = observedHash(want, predictedStored(want));
    if (predictions.size >= MAX_PREDICTIONS) predictions.clear();
    predictions.set(key, hash);
  }
  return hash;
}

/** What the record keeps of an apply's answer: nothing ('') when it is what was predicted. */
export function observedException(want: KubeObject, wantHash: string, observed: string): string {
  return observed === expectedObserved(want, wantHash) ? '' : observed;
}

/**
 * Whether a live object still holds what our last apply left: applied from the same template
 * version (KEY.appliedHash on the object) and, field by field, as the server returned it then
 * (`exception`, the answer the namespace's record kept because the prediction missed it, else
 * the prediction).
 */
export function unchangedSinceApply(want: KubeObject, wantHash: string, live: KubeObject, exception: string | undefined): boolean {
  if (live.metadata.annotations?.[KEY.appliedHash] !== wantHash) return false;
  return observedHash(want, live) === (exception || expectedObserved(want, wantHash));
}
