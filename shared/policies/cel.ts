// Settings rendered into CEL text: principal patterns and string lists
// become constants of the expressions `furnish install` writes (no params objects). Every value
// goes through `str`, so a setting can hold quotes, backslashes or newlines without breaking out
// of its literal. Only the CEL subset kube-sim evaluates (docs/architecture.md "In-tree policies").
import type { PrincipalPattern } from '../config/types.ts';

/** Any of these characters is escaped as `\uXXXX`: controls, DEL, and the line and paragraph separators. */
function needsUnicodeEscape(code: number): boolean {
  return code < 0x20 || code === 0x7f || code === 0x2028 || code === 0x2029;
}

/** A CEL string literal holding exactly `value`. An unpaired surrogate (no UTF-8 for it) is an error naming the value. */
export function str(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) throw new Error(`cannot write ${JSON.stringify(value)} into a policy: it holds an unpaired surrogate (U+${code.toString(16).toUpperCase()})`);
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (needsUnicodeEscape(code)) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** A CEL list literal of string literals. */
export function list(values: readonly string[]): string {
  return `[${values.map(str).join(', ')}]`;
}

/** `a || b || …`; `false` for none. */
export function anyOf(expressions: readonly string[]): string {
  return expressions.length === 0 ? 'false' : expressions.map((e) => `(${e})`).join(' || ');
}

/** A principal pattern's name part (principals.ts): exact, or a prefix before a trailing `*`. */
function nameMatches(value: string, pattern: string): string {
  return pattern.endsWith('*') ? `${value}.startsWith(${str(pattern.slice(0, -1))})` : `${value} == ${str(pattern)}`;
}

const GROUP_PREFIX = 'group:';
const USERNAME = 'request.userInfo.username';
const GROUPS = 'request.userInfo.groups';

/**
 * Whether the requester matches a principal pattern, as matchesPrincipal does (`alice`,
 * `group:ci`, either with a trailing `*`). The request leaves out an empty user name or group list.
 */
export function principal(pattern: PrincipalPattern): string {
  if (pattern.startsWith(GROUP_PREFIX)) return `has(${GROUPS}) && ${GROUPS}.exists(g, ${nameMatches('g', pattern.slice(GROUP_PREFIX.length))})`;
  return `has(${USERNAME}) && ${nameMatches(USERNAME, pattern)}`;
}

/** Whether the requester matches any of the patterns. */
export function anyPrincipal(patterns: readonly PrincipalPattern[]): string {
  return anyOf(patterns.map(principal));
}

/** A part of a message computed in CEL; plain strings are literal text. */
export interface Cel {
  cel: string;
}

export const cel = (expression: string): Cel => ({ cel: expression });

/** A CEL string expression joining literal text (quoted by `str`) and computed parts. */
export function text(...parts: readonly (string | Cel)[]): string {
  return parts.map((p) => (typeof p === 'string' ? str(p) : `(${p.cel})`)).join(' + ');
}

/** The requester as messages name it: `user "alice"`, as `who` in shared/kube/sar.ts. */
export const WHO: readonly (string | Cel)[] = ['user "', cel(`has(${USERNAME}) ? ${USERNAME} : ''`), '"'];

/** A string map of metadata (`labels`, `annotations`) of `object` (`object`, `oldObject`), `{}` when absent or the object is null. */
export function metadataMap(object: string, field: 'labels' | 'annotations'): string {
  return `${object} != null && has(${object}.metadata.${field}) ? ${object}.metadata.${field} : {}`;
}

/** Whether `key` differs between two maps (added, changed or removed). */
export function keyChanged(before: string, after: string, key: string): string {
  const k = str(key);
  return `(${k} in ${before}) != (${k} in ${after}) || (${k} in ${after} && ${before}[${k}] != ${after}[${k}])`;
}

/** A message part quoting a value: `"v"` (newlines as `; `: a message is one line), or `null` when absent. */
export function quoted(map: string, key: string): Cel {
  return cel(`${str(key)} in ${map} ? '"' + ${map}[${str(key)}].split('\\n').join('; ') + '"' : 'null'`);
}

/** RE2 (and JavaScript) regular-expression metacharacters, escaped in a wildcard's literal parts. */
const REGEX_SPECIAL = /[\\^$.|?*+()[\]{}]/g;

/**
 * Whether `value` matches a wildcard pattern as matchesWildcard does (shared/org/settings.ts: `*`
 * anywhere matches any run of characters, everything else is literal): `==` without a `*`,
 * `startsWith` or `endsWith` for one at either end, else an anchored `matches`. A regular
 * expression costs the API server's CEL budget per character of key and pattern; the others far
 * less, so a write that changes many keys stays within it.
 */
export function wildcard(value: string, pattern: string): string {
  const stars = pattern.split('*').length - 1;
  if (stars === 0) return `${value} == ${str(pattern)}`;
  if (stars === 1 && pattern.endsWith('*')) return `${value}.startsWith(${str(pattern.slice(0, -1))})`;
  if (stars === 1 && pattern.startsWith('*')) return `${value}.endsWith(${str(pattern.slice(1))})`;
  const regex = pattern.split('*').map((part) => part.replace(REGEX_SPECIAL, '\\$&')).join('.*');
  return `${value}.matches(${str(`^${regex}$`)})`;
}

/** The first of `patterns` that `value` matches (matchesAny), as a CEL string; '' for none. */
export function firstWildcard(value: string, patterns: readonly string[]): string {
  return patterns.reduceRight((otherwise, p) => `(${wildcard(value, p)} ? ${str(p)} : ${otherwise})`, "''");
}
