// Stable content hashes: the same object hashes the same whatever the order of its keys, so a
// reconciler can compare a rendered object with what it applied last time without a deep diff.
import { hash } from 'node:crypto';
import type { StringMap } from '../kube/types.ts';
import { annotationValue } from './tokens.ts';

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

/** Bumped whenever rendering changes what the same template makes: every object is applied again once. */
export const RENDER_VERSION = 1;

/** `$(ANNOTATION:key|default)` tokens (not their `$$(` escapes): the annotations a template object reads. */
const ANNOTATION_TOKENS = /(?<!\$)\$\(ANNOTATION:([^|()$]*)\|([^()$]*)\)/g;

/** Every `$(ANNOTATION:key|default)` in the object's strings (keys and values), as written. */
function annotationsRead(value: unknown, out: Array<[string, string]> = []): Array<[string, string]> {
  if (typeof value === 'string') {
    for (const m of value.matchAll(ANNOTATION_TOKENS)) out.push([m[1]!, m[2]!]);
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      annotationsRead(k, out);
      annotationsRead(v, out);
    }
  }
  return out;
}

export interface TemplateHash {
  hash: string;
  annotations: Array<[key: string, fallback: string]>;
}

/** Per template object (the same object across a fan-out's namespaces): its hash and the annotations it reads. */
const templateHashes = new WeakMap<object, TemplateHash>();

/** The template object's own hash, computed once per object (templates are values), before tokens are substituted. */
export function templateHash(raw: object): TemplateHash {
  let known = templateHashes.get(raw);
  if (!known) {
    const json = canonicalJson(raw);
    known = { hash: sha256Hex(json), annotations: json.includes('$(ANNOTATION:') ? annotationsRead(raw) : [] };
    templateHashes.set(raw, known);
  }
  return known;
}

/**
 * The hash of what one template object renders to, without rendering it again: the template
 * object's own hash and everything else rendering reads (`contextJson`, the canonical JSON of the
 * context's values, computed once per template and namespace; the annotations the object names;
 * RENDER_VERSION). Equal inputs render equal objects, so an unchanged hash means an unchanged object.
 */
export function renderHash(t: TemplateHash, contextJson: string, annotations: Readonly<StringMap> | undefined): string {
  const read = t.annotations.length === 0 ? '[]' : canonicalJson(t.annotations.map(([key, fallback]) => annotationValue(annotations, key, fallback)));
  return sha256Hex(`${RENDER_VERSION}\n${t.hash}\n${contextJson}\n${read}`);
}
