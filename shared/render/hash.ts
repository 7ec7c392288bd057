// Stable content hashes: the same object hashes the same whatever the order of its keys, so a
// reconciler can compare a rendered object with what it applied last time without a deep diff.
import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted (UTF-16 code unit order, as RFC 8785) and no whitespace;
 * `undefined` members are dropped and `undefined` array items become `null`, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  let first = true;
  for (const key of Object.keys(record).sort()) {
    if (record[key] === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${canonicalJson(record[key])}`;
    first = false;
  }
  return `${out}}`;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** sha256 (hex) of the canonical JSON of `value`. */
export function contentHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
