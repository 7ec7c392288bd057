// Templates are listed afresh by most reconciles (a namespace created, a resync): new objects with
// the content of ones already seen, which would miss every per-object cache (validation, compiled
// objects, hashes) and pay for all of it again. interned() answers, for a template equal to one
// seen recently, that first object instead: equal as JSON and made only of JSON values (so equal
// as values: same keys in the same order, same strings, numbers, booleans and nulls), it renders
// and validates exactly the same.
import { isPlainArray, isPlainObject } from './json.ts';

/** Whether `value` is exactly what JSON.parse(JSON.stringify(value)) gives back. */
export function isJsonValue(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null) return true;
      if (Array.isArray(value)) {
        if (!isPlainArray(value)) return false;
        for (let i = 0; i < value.length; i++) if (!(i in value) || !isJsonValue(value[i])) return false;
        return true;
      }
      if (!isPlainObject(value) || 'toJSON' in value) return false;
      for (const key of Object.keys(value)) if (!isJsonValue((value as Record<string, unknown>)[key])) return false;
      return true;
    }
    default:
      return false;
  }
}

/** How much template JSON the table keeps at most (with the objects it stands for): a few hundred templates of a few KB. */
const MAX_BYTES = 2 * 1024 * 1024;

/** JSON text → the first object seen with it; a Map keeps insertion order, so the oldest go first. */
const byJson = new Map<string, object>();
let bytes = 0;
/** Objects already looked up: the steady case (a fan-out renders the same objects) costs one WeakMap get. */
const known = new WeakMap<object, object>();

function remember(json: string, value: object): void {
  if (json.length > MAX_BYTES) return;
  byJson.set(json, value);
  bytes += json.length;
  for (const [oldest] of byJson) {
    if (bytes <= MAX_BYTES) break;
    byJson.delete(oldest);
    bytes -= oldest.length;
  }
}

/** The first object seen recently with the same JSON value as `value` (`value` itself when none, or when it is not plain JSON). */
export function interned<T extends object>(value: T): T {
  const hit = known.get(value);
  if (hit) return hit as T;
  let found: object = value;
  if (isJsonValue(value)) {
    const json = JSON.stringify(value);
    const seen = byJson.get(json);
    if (seen) {
      // Most recently used last: a template in use stays while old versions are dropped.
      byJson.delete(json);
      byJson.set(json, seen);
      found = seen;
    } else remember(json, value);
  }
  known.set(value, found);
  return found as T;
}
