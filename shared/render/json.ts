// Helpers for values that arrive as parsed JSON/YAML and are not yet known to be well formed.
import { childPath } from './path.ts';
import type { ValidationProblem } from './types.ts';

export type JsonRecord = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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
