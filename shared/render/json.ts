// Helpers for values that arrive as parsed JSON/YAML and are not yet known to be well formed.
import { childPath } from './path.ts';
import type { ValidationProblem } from './types.ts';

export type JsonRecord = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Plainness is judged without comparing with this realm's prototypes: the test runner's realm is
// not the one structuredClone builds in.

/** An array that is no subclass of Array (Array.prototype is the one prototype that is itself an array). */
export function isPlainArray(value: unknown): value is unknown[] {
  return Array.isArray(value) && Array.isArray(Object.getPrototypeOf(value));
}

/** An object made by `{}` or JSON.parse: no class instance (Date, Map...), no null prototype. */
export function isPlainObject(value: unknown): value is JsonRecord {
  if (!isRecord(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto !== null && Object.getPrototypeOf(proto) === null && (proto as { constructor?: { name?: unknown } }).constructor?.name === 'Object';
}

/** A record whose values are all strings (labels, annotations). */
export function isStringMap(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((v) => typeof v === 'string');
}

/**
 * Deep copy of a JSON value with every string passed through `mapString` (keys untouched).
 * A `__proto__` key is copied as data, never as the prototype: template objects are user input.
 */
export function cloneJson(value: unknown, mapString: (s: string) => string): unknown {
  if (typeof value === 'string') return mapString(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => cloneJson(item, mapString));
  const out: JsonRecord = {};
  for (const key of Object.keys(value)) {
    const copy = cloneJson((value as JsonRecord)[key], mapString);
    if (key === '__proto__') Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
    else out[key] = copy;
  }
  return out;
}

/**
 * Unknown fields are refused rather than ignored: a misspelt `matchLabel` would otherwise leave
 * `{}`, which selects every namespace, and a misspelt `template` would apply nothing.
 */
export function unknownFieldProblems(obj: JsonRecord, known: ReadonlySet<string>, path: string): ValidationProblem[] {
  return Object.keys(obj)
    .filter((k) => !known.has(k))
    .map((k) => ({ path: childPath(path, k), message: `unknown field (expected one of ${[...known].join(', ')})` }));
}
