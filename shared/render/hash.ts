// Stable content hashes: the same object hashes the same whatever the order of its keys, so a
// reconciler can compare a rendered object with what it applied last time without a deep diff.
import { hash } from 'node:crypto';

/** Characters JSON.stringify would escape (quotes, backslash, controls, lone surrogates). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON.stringify of a string, without calling it for the common string that needs no escape. */
function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * JSON with object keys sorted (UTF-16 code unit order, as RFC 8785) and no whitespace;
 * `undefined` members are dropped and `undefined` array items become `null`, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length > 1) keys.sort();
  let out = '{';
  let first = true;
  for (const key of keys) {
    const item = record[key];
    if (item === undefined) continue;
    out += `${first ? '' : ','}${quote(key)}:${canonicalJson(item)}`;
    first = false;
  }
  return `${out}}`;
}

export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** sha256 (hex) of the canonical JSON of `value`. */
export function contentHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
