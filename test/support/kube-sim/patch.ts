// The three non-apply patch types: JSON patch (RFC 6902), JSON merge patch (RFC 7386) and
// strategic merge patch, which for the kinds kube-sim serves is merge patch plus keyed lists
// (containers by name, ...) and the `$patch`, `$retainKeys`, `$setElementOrder` and
// `$deleteFromPrimitiveList` directives that kubectl's three-way patches carry.
import jsonpatch from 'fast-json-patch';
import { ApiError, badRequest, statusError } from './errors.ts';
import { isObject } from './fieldsets.ts';
import type { ListSemantics, MergeSchema } from './resources.ts';

type Json = unknown;
type JsonObject = Record<string, Json>;

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

function rejected(message: string): ApiError {
  return new ApiError({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 422, reason: 'Invalid',
    message: 'the server rejected our request due to an error in our request', details: { causes: [{ message }] },
  });
}

export function applyJsonPatch(original: JsonObject, operations: Json): JsonObject {
  if (!Array.isArray(operations)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  try {
    return jsonpatch.applyPatch(structuredClone(original), operations as jsonpatch.Operation[], true, true).newDocument;
  } catch (error) {
    throw rejected((error as Error).message.split('\n')[0]!);
  }
}

export function applyMergePatch(original: Json, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const result: JsonObject = isObject(original) ? { ...original } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) Reflect.deleteProperty(result, key);
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ORDER = '$setElementOrder/';
const DELETE_FROM_LIST = '$deleteFromPrimitiveList/';

export function applyStrategicMergePatch(original: Json, patch: Json, schema: MergeSchema, names: string[] = []): Json {
  if (!isObject(patch)) return patch;
  if (patch[DIRECTIVE] === 'replace') return withoutDirectives(patch);
  if (patch[DIRECTIVE] === 'delete') return undefined;
  const result: JsonObject = isObject(original) ? { ...original } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === DIRECTIVE || key === RETAIN_KEYS || key.startsWith(SET_ORDER)) continue;
    if (key.startsWith(DELETE_FROM_LIST)) {
      const field = key.slice(DELETE_FROM_LIST.length);
      const doomed = Array.isArray(value) ? value : [];
      result[field] = ((result[field] ?? []) as Json[]).filter((item) => !doomed.includes(item));
      continue;
    }
    const childNames = [...names, key];
    if (value === null) Reflect.deleteProperty(result, key);
    else if (Array.isArray(value)) result[key] = mergeList(result[key], value, schema, childNames, elementOrder(patch, key));
    else if (isObject(value) && schema.atomicMap(childNames)) result[key] = withoutDirectives(value);
    else {
      const merged = applyStrategicMergePatch(result[key], value, schema, childNames);
      if (merged === undefined) Reflect.deleteProperty(result, key);
      else result[key] = merged;
    }
  }
  // A `$setElementOrder` without its list only reorders the stored one.
  for (const key of Object.keys(patch)) {
    const field = key.startsWith(SET_ORDER) ? key.slice(SET_ORDER.length) : undefined;
    if (field === undefined || field in patch || !Array.isArray(result[field]) || schema.list([...names, field]).type === 'atomic') continue;
    result[field] = mergeList(result[field], [], schema, [...names, field], elementOrder(patch, field));
  }
  const retain = patch[RETAIN_KEYS];
  if (Array.isArray(retain)) {
    for (const key of Object.keys(result)) if (!retain.includes(key) && !(key in patch)) Reflect.deleteProperty(result, key);
  }
  return result;
}

function mergeList(original: Json, patch: Json[], schema: MergeSchema, names: string[], order?: Json[]): Json[] {
  const semantics = schema.list(names);
  const key = keyOf(semantics);
  if (!order) return mergeItems(original, patch, schema, names, semantics);
  // As kube-apiserver: the list merged (and ordered by the patch) first, then ordered again by
  // `$setElementOrder`, against the stored list.
  checkOrder(patch, order, key);
  const merged = mergeItems(original, patch, schema, names, semantics);
  return inOrder(merged, Array.isArray(original) ? original : [], order, key);
}

function mergeItems(original: Json, patch: Json[], schema: MergeSchema, names: string[], semantics: ListSemantics): Json[] {
  const key = keyOf(semantics);
  if (patch.some((item) => isObject(item) && item[DIRECTIVE] === 'replace')) {
    return patch.filter((item) => !(isObject(item) && item[DIRECTIVE] === 'replace'));
  }
  if (semantics.type === 'atomic' || !Array.isArray(original)) return patch.filter((item) => !(isObject(item) && DIRECTIVE in item));
  if (semantics.type === 'set') return inOrder([...new Set([...original, ...patch])], original, patch, key);
  const mergeKey = semantics.keys[0]!;
  for (const item of patch) if (!isObject(item)) throw badRequest(`unable to find merge key "${mergeKey}" in a list item that is not a map`);
  const items = patch as JsonObject[];
  // As kube-apiserver: every `$patch: delete` first, each removing every item with its key (a list
  // may hold duplicates), then the other items merge.
  const doomed = items.filter((item) => item[DIRECTIVE] === 'delete').map((item) => item[mergeKey]);
  const remaining = original.filter((existing) => !(isObject(existing) && doomed.includes(existing[mergeKey])));
  const result = [...remaining];
  const merging = items.filter((item) => item[DIRECTIVE] !== 'delete');
  for (const item of merging) {
    const at = result.findIndex((existing) => isObject(existing) && existing[mergeKey] === item[mergeKey]);
    if (at >= 0) {
      result[at] = applyStrategicMergePatch(result[at], item, schema, [...names, '[]']);
    } else {
      result.push(withoutDirectives(item));
    }
  }
  return inOrder(result, remaining, merging, key);
}

type ItemKey = (item: Json) => Json;

function keyOf(semantics: ListSemantics): ItemKey {
  if (semantics.type !== 'map') return (item) => item;
  const mergeKey = semantics.keys[0]!;
  return (item) => (isObject(item) ? item[mergeKey] : undefined);
}

/**
 * kube-apiserver refuses (500) a patch list whose items are not in its `$setElementOrder`'s order
 * (an empty one orders nothing, so is never out of order).
 */
function checkOrder(patch: Json[], order: Json[], key: ItemKey): void {
  if (order.length === 0) return;
  const items = patch.filter((item) => !(isObject(item) && DIRECTIVE in item));
  let at = 0;
  for (const wanted of order) if (at < items.length && key(items[at]) === key(wanted)) at++;
  if (at < items.length) throw statusError(500, `The order in patch list:\n${JSON.stringify(patch)}\n doesn't match $setElementOrder list:\n${JSON.stringify(order)}\n`);
}

function elementOrder(patch: JsonObject, field: string): Json[] | undefined {
  const order = patch[`${SET_ORDER}${field}`];
  return Array.isArray(order) ? order : undefined;
}

/**
 * The order kube-apiserver gives a merged list (strategicpatch's normalizeElementOrder): the items
 * the patch names in the patch's order (or its `$setElementOrder`), the others in their stored
 * order, interleaved where both orders know them; an item only the patch knows goes before the
 * stored items not yet placed. So a new item comes first, not last.
 */
function inOrder(merged: Json[], stored: Json[], order: Json[], key: ItemKey): Json[] {
  const position = (list: Json[]) => {
    const at = new Map<Json, number>();
    list.forEach((item, i) => { if (!at.has(key(item))) at.set(key(item), i); });
    return (item: Json) => at.get(key(item)) ?? -1;
  };
  const inPatch = position(order);
  const inStore = position(stored);
  const named = goSorted(merged.filter((item) => inPatch(item) >= 0), inPatch);
  const storedOnly = goSorted(merged.filter((item) => inPatch(item) < 0), inStore);
  const result: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < storedOnly.length || j < named.length) {
    const left = storedOnly[i];
    const right = named[j];
    const leftFirst = j >= named.length || (i < storedOnly.length && inStore(left) >= 0 && inStore(right) >= 0 && inStore(left) < inStore(right));
    if (leftFirst) result.push(storedOnly[i++]);
    else result.push(named[j++]);
  }
  return result;
}

/**
 * strategicpatch's normalizeSliceOrder: sort.SliceStable (an insertion sort up to 20 items) by a
 * position, where an item without one counts as before any other. Only an empty `$setElementOrder`
 * leaves items without a position (the added ones), which this places as kube-apiserver does.
 */
function goSorted(items: Json[], position: (item: Json) => number): Json[] {
  const less = (a: Json, b: Json) => position(a) < 0 || position(b) < 0 || position(a) < position(b);
  const sorted = [...items];
  for (let i = 1; i < sorted.length; i++) {
    for (let j = i; j > 0 && less(sorted[j], sorted[j - 1]); j--) [sorted[j], sorted[j - 1]] = [sorted[j - 1], sorted[j]];
  }
  return sorted;
}

function withoutDirectives(value: JsonObject): JsonObject {
  const { [DIRECTIVE]: _directive, [RETAIN_KEYS]: _retain, ...rest } = value;
  return rest;
}
