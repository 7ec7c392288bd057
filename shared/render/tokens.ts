// Tokens `$(CREATOR)`, `$(NAMESPACE)`, `$(ORGANIZATION)`: replaced inside string values of the
// parsed object, one string at a time, so a value can never become structure. `$$(NAME)` is the
// escape for a literal `$(NAME)` (Kubernetes' own convention), needed for container args that
// use the kubelet's `$(VAR)` expansion.
//
// `$(ANNOTATION:<key>|<default>)` reads annotation <key> of the namespace, falling back to
// <default> when it is absent or its value is not a plain token (ANNOTATION_VALUE: letters,
// digits, '.', '-', '_', at most 63 characters, so a quantity or a name part but never YAML,
// spaces or another token). Meant for values only privileged principals may set per namespace
// (the organization allowlist keeps the annotation from everyone else).
import type { StringMap } from '../kube/types.ts';
import type { RenderContext } from './types.ts';

export const TOKEN_NAMES = ['CREATOR', 'NAMESPACE', 'ORGANIZATION'] as const;
export type TokenName = (typeof TOKEN_NAMES)[number];
export type TokenValues = Readonly<Record<TokenName, string>> & { readonly annotations?: Readonly<StringMap> };

export const ANNOTATION_TOKEN = 'ANNOTATION';
/** What an annotation's value must look like to be used; anything else gives the default. */
export const ANNOTATION_VALUE = /^[A-Za-z0-9._-]{1,63}$/;

/**
 * `$(NAME)`, `$(ANNOTATION:key|default)` or, with a leading `$`, their escape. Names are
 * UPPER_CASE: `$(lower)` is plain text.
 */
const TOKEN = /\$(\$?)\(([A-Z][A-Z0-9_]*)(?::([^|()$]*)\|([^()$]*))?\)/g;

function isTokenName(name: string): name is TokenName {
  return (TOKEN_NAMES as readonly string[]).includes(name);
}

export function tokenValues(ctx: RenderContext): TokenValues {
  return { CREATOR: ctx.creator, NAMESPACE: ctx.namespace, ORGANIZATION: ctx.organization, annotations: ctx.annotations ?? {} };
}

/** The value of `$(ANNOTATION:key|default)`: the annotation when it is a plain token, else the default. */
export function annotationValue(annotations: Readonly<StringMap> | undefined, key: string, fallback: string): string {
  const value = annotations?.[key];
  return value !== undefined && ANNOTATION_VALUE.test(value) ? value : fallback;
}

/** What one match of TOKEN becomes: fixed text, or a function of the namespace's values. */
type Piece = string | ((values: TokenValues) => string);

function tokenPiece(whole: string, escape: string, name: string, key: string | undefined, fallback: string | undefined): Piece {
  if (escape !== '') return whole.slice(1);
  if (name === ANNOTATION_TOKEN) return key === undefined ? whole : (values) => annotationValue(values.annotations, key, fallback!);
  return isTokenName(name) && key === undefined ? (values) => values[name] : whole;
}

/**
 * Replaces known tokens in one pass (a value that itself looks like a token stays literal) and
 * unescapes `$$(NAME)`. Unknown tokens are left as they are: validation refuses them.
 */
export function substituteTokens(text: string, values: TokenValues): string {
  if (!text.includes('$(')) return text;
  return text.replace(TOKEN, (whole: string, escape: string, name: string, key: string | undefined, fallback: string | undefined) => {
    const piece = tokenPiece(whole, escape, name, key, fallback);
    return typeof piece === 'string' ? piece : piece(values);
  });
}

/**
 * substituteTokens(text, ·) decided once: the text itself when no value changes it (escapes
 * already undone), else a function of the values that splits nothing at render time.
 */
export function compileTokens(text: string): string | ((values: TokenValues) => string) {
  if (!text.includes('$(')) return text;
  const pieces: Piece[] = [];
  let at = 0;
  for (const m of text.matchAll(TOKEN)) {
    pieces.push(text.slice(at, m.index), tokenPiece(m[0], m[1]!, m[2]!, m[3], m[4]));
    at = m.index + m[0].length;
  }
  pieces.push(text.slice(at));
  // Adjacent fixed texts merged, empty ones dropped: what is left alternates text and value.
  const merged: Piece[] = [];
  for (const piece of pieces) {
    const last = merged.at(-1);
    if (typeof piece === 'string' && typeof last === 'string') merged[merged.length - 1] = last + piece;
    else if (piece !== '') merged.push(piece);
  }
  if (merged.length === 0) return '';
  if (merged.length === 1) return merged[0]!;
  return (values) => {
    let out = '';
    for (const piece of merged) out += typeof piece === 'string' ? piece : piece(values);
    return out;
  };
}

/** Token names used in `text` (escapes excluded), in order of appearance. */
export function tokensIn(text: string): string[] {
  if (!text.includes('$(')) return [];
  return [...text.matchAll(TOKEN)].filter((m) => m[1] === '').map((m) => m[2]!);
}

/** Unknown token names in `text`, e.g. `['USER']` for `"$(USER)-x"`. */
export function unknownTokensIn(text: string): string[] {
  return tokensIn(text).filter((name) => !isTokenName(name) && name !== ANNOTATION_TOKEN);
}

/** Problems with the arguments of tokens in `text` (a malformed ANNOTATION, arguments on another token). */
export function tokenArgumentProblems(text: string, keyErrors: (key: string) => readonly string[]): string[] {
  if (!text.includes('$(')) return [];
  return [...text.matchAll(TOKEN)].filter((m) => m[1] === '').flatMap((m) => {
    const [whole, , name, key, fallback] = m;
    if (name !== ANNOTATION_TOKEN) return key === undefined || !isTokenName(name!) ? [] : [`${whole}: ${formatToken(name!)} takes no arguments`];
    if (key === undefined) return [`${whole}: write $(${ANNOTATION_TOKEN}:<annotation key>|<default>)`];
    const problems = keyErrors(key).map((e) => `${whole}: annotation key "${key}": ${e}`);
    if (!ANNOTATION_VALUE.test(fallback!)) problems.push(`${whole}: the default "${fallback}" must be 1 to 63 letters, digits, '.', '-' or '_' (what an annotation value must be to be used)`);
    return problems;
  });
}

/** Whether `text` holds anything token-like, escaped or not (keys may hold neither). */
export function hasTokenSyntax(text: string): boolean {
  return text.includes('$(') && new RegExp(TOKEN.source).test(text);
}

export function formatToken(name: string): string {
  return `$(${name})`;
}
