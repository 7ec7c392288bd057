// Tokens `$(CREATOR)`, `$(NAMESPACE)`, `$(ORGANIZATION)`: replaced inside string values of the
// parsed object, one string at a time, so a value can never become structure. `$$(NAME)` is the
// escape for a literal `$(NAME)` (Kubernetes' own convention), needed for container args that
// use the kubelet's `$(VAR)` expansion.
import type { RenderContext } from './types.ts';

export const TOKEN_NAMES = ['CREATOR', 'NAMESPACE', 'ORGANIZATION'] as const;
export type TokenName = (typeof TOKEN_NAMES)[number];
export type TokenValues = Readonly<Record<TokenName, string>>;

/** `$(NAME)` or, with a leading `$`, its escape. Names are UPPER_CASE: `$(lower)` is plain text. */
const TOKEN = /\$(\$?)\(([A-Z][A-Z0-9_]*)\)/g;

function isTokenName(name: string): name is TokenName {
  return (TOKEN_NAMES as readonly string[]).includes(name);
}

export function tokenValues(ctx: RenderContext): TokenValues {
  return { CREATOR: ctx.creator, NAMESPACE: ctx.namespace, ORGANIZATION: ctx.organization };
}

/**
 * Replaces known tokens in one pass (a value that itself looks like a token stays literal) and
 * unescapes `$$(NAME)`. Unknown tokens are left as they are: validation refuses them.
 */
export function substituteTokens(text: string, values: TokenValues): string {
  if (!text.includes('$(')) return text;
  return text.replace(TOKEN, (whole: string, escape: string, name: string) => {
    if (escape !== '') return whole.slice(1);
    return isTokenName(name) ? values[name] : whole;
  });
}

/** Token names used in `text` (escapes excluded), in order of appearance. */
export function tokensIn(text: string): string[] {
  if (!text.includes('$(')) return [];
  return [...text.matchAll(TOKEN)].filter((m) => m[1] === '').map((m) => m[2]!);
}

/** Unknown token names in `text`, e.g. `['USER']` for `"$(USER)-x"`. */
export function unknownTokensIn(text: string): string[] {
  return tokensIn(text).filter((name) => !isTokenName(name));
}

/** Whether `text` holds anything token-like, escaped or not (keys may hold neither). */
export function hasTokenSyntax(text: string): boolean {
  return text.includes('$(') && new RegExp(TOKEN.source).test(text);
}

export function formatToken(name: string): string {
  return `$(${name})`;
}
