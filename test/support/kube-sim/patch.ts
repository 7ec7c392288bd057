// The three non-apply patch types: JSON patch (RFC 6902), JSON merge patch (RFC 7386) and
// strategic merge patch, which for the kinds kube-sim serves is merge patch plus keyed lists
// (containers by name, ...) and the `$patch`, `$retainKeys`, `$setElementOrder` and
// `$deleteFromPrimitiveList` directives that kubectl's three-way patches carry.
import jsonpatch from 'fast-json-patch';
import { ApiError, badRequest } from './errors.ts';
import { isObject } from './fieldsets.ts';
import type { MergeSchema } from './resources.ts';

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
    else if (Array.isArray(value)) result[key] = mergeList(result[key], value, schema, childNames);
    else if (isObject(value) && schema.atomicMap(childNames)) result[key] = withoutDirectives(value);
    else {
      const merged = applyStrategicMergePatch(result[key], value, schema, childNames);
      if (merged === undefined) Reflect.deleteProperty(result, key);
      else result[key] = merged;
    }
  }
  const retain = patch[RETAIN_KEYS];
  if (Array.isArray(retain)) {
    for (const key of Object.keys(result)) if (!retain.includes(key) && !(key in patch)) Reflect.deleteProperty(result, key);
  }
  return result;
}

function mergeList(original: Json, patch: Json[], schema: MergeSchema, names: string[]): Json[] {
  const semantics = schema.list(names);
  if (patch.some((item) => isObject(item) && item[DIRECTIVE] === 'replace')) {
    return patch.filter((item) => !(isObject(item) && item[DIRECTIVE] === 'replace'));
  }
  if (semantics.type === 'atomic' || !Array.isArray(original)) return patch.filter((item) => !(isObject(item) && DIRECTIVE in item));
  if (semantics.type === 'set') return [...original, ...patch.filter((item) => !original.includes(item))];
  const mergeKey = semantics.keys[0]!;
  for (const item of patch) if (!isObject(item)) throw badRequest(`unable to find merge key "${mergeKey}" in a list item that is not a map`);
  const items = patch as JsonObject[];
  // As kube-apiserver: every `$patch: delete` first, each removing every item with its key (a list
  // may hold duplicates), then the other items merge.
  const doomed = items.filter((item) => item[DIRECTIVE] === 'delete').map((item) => item[mergeKey]);
  const result = original.filter((existing) => !(isObject(existing) && doomed.includes(existing[mergeKey])));
  for (const item of items) {
    if (item[DIRECTIVE] === 'delete') continue;
    const at = result.findIndex((existing) => isObject(existing) && existing[mergeKey] === item[mergeKey]);
    if (at >= 0) {
      result[at] = applyStrategicMergePatch(result[at], item, schema, [...names, '[]']);
    } else {
      result.push(withoutDirectives(item));
    }
  }
  return result;
}

function withoutDirectives(value: JsonObject): JsonObject {
  const { [DIRECTIVE]: _directive, [RETAIN_KEYS]: _retain, ...rest } = value;
  return rest;
}
