// Drift judged by field ownership. Server-side apply records in managedFields which fields
// Furnish's apply owns; whoever else changes or removes one of them (update, patch, a forced
// apply) takes it out of Furnish's Apply entry, which only ever shrinks between our applies. A
// value the server normalises (`1000m` stored as `1`) stays ours, and another manager applying
// the same value shares it. So "does Furnish still own every field it sets?" is the drift
// question, answered from the live object alone: no hash of the server's answer, no record.
import { FIELD_MANAGER } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';

type Json = unknown;
/** A FieldsV1 node: `f:<field>`, `k:<keys JSON>`, `v:<value JSON>` children, `.` when the node itself is owned too. */
type FieldsNode = Record<string, Json>;

const isMap = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What an apply never owns (the server strips them, or keeps them out of the main resource): not asked of the entry. */
const NOT_OWNED_METADATA = ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'selfLink', 'managedFields'];

/** Furnish's own server-side apply entry: manager `furnish`, operation Apply, on the main resource. */
function furnishApplyEntry(live: KubeObject): { apiVersion?: string; fieldsV1?: Json } | undefined {
  return (live.metadata.managedFields ?? []).filter(isMap)
    .find((e) => e.manager === FIELD_MANAGER && e.operation === 'Apply' && !e.subresource) as { apiVersion?: string; fieldsV1?: Json } | undefined;
}

/**
 * Whether Furnish's Apply entry in `live`'s managedFields still owns every field `want` sets
 * (apiVersion, kind, status and server-set metadata aside). False when there is no such entry,
 * when it was recorded in another apiVersion (its paths belong to that version's schema), or when
 * any field is missing from it: someone else changed or removed that field since our last apply.
 * Pure; reads no schema: see `holds` for how each FieldsV1 node is read.
 */
export function appliedFieldsHeld(want: KubeObject, live: KubeObject): boolean {
  const entry = furnishApplyEntry(live);
  if (!entry || entry.apiVersion !== want.apiVersion || !isMap(entry.fieldsV1)) return false;
  const { apiVersion: _apiVersion, kind: _kind, status: _status, metadata, ...rest } = want;
  const ownable = Object.fromEntries(Object.entries(metadata).filter(([k]) => !NOT_OWNED_METADATA.includes(k)));
  return holds({ ...rest, metadata: ownable }, entry.fieldsV1);
}

/**
 * Whether `node` owns all of `value`. A node with no children but `.` is owned whole (a scalar, an
 * atomic list or map such as NetworkPolicy ingress or a label selector): that is enough. Otherwise
 * maps go key by key (`f:`); list items by their key fields (`k:`, containers by name, ports by
 * containerPort and protocol) or, for sets, by value (`v:`). A null, an empty list or map sets nothing
 * an apply is sure to own (an empty keyed list owns nothing), so it is not asked.
 */
function holds(value: Json, node: Json): boolean {
  if (value === null || (Array.isArray(value) && value.length === 0) || (isMap(value) && Object.keys(value).length === 0)) return true;
  if (!isMap(node)) return false;
  if (Object.keys(node).every((k) => k === '.')) return true;
  if (isMap(value)) return Object.entries(value).every(([k, v]) => holds(v, node[`f:${k}`]));
  if (Array.isArray(value)) return value.every((item) => holdsItem(item, node));
  return true;
}

/** One desired list item: a scalar is a set member `v:`; a map is the `k:` item whose keys it matches, owned as far as it sets it. */
function holdsItem(item: Json, list: FieldsNode): boolean {
  if (!isMap(item)) return `v:${JSON.stringify(item)}` in list;
  return Object.entries(list).some(([element, child]) => element.startsWith('k:') && keysMatch(JSON.parse(element.slice(2)) as Json, item) && holds(item, child));
}

/**
 * A `k:` item's key fields against a desired item: equal wherever the item sets them, and at least
 * one set. A key the item leaves out is the server's default (a port's `protocol: TCP`).
 */
function keysMatch(keys: Json, item: Record<string, Json>): boolean {
  if (!isMap(keys)) return false;
  const set = Object.entries(keys).filter(([k]) => item[k] !== undefined);
  return set.length > 0 && set.every(([k, v]) => JSON.stringify(item[k]) === JSON.stringify(v));
}
