// A token that renders empty where it is the whole value (`name: $(CREATOR)` in a namespace that
// has no creator, such as `default` or one that predates Furnish) leaves a field the API server
// would refuse (`subjects[0].name: Required value`) or, worse, accept with a meaning nobody
// wrote. Such an object is never sent: it is a render problem, so its template renders nothing
// there and the namespace reports why.
import { isRecord } from './json.ts';
import { childPath } from './path.ts';
import { formatToken, substituteTokens, tokensIn, type TokenValues } from './tokens.ts';
import type { ValidationProblem } from './types.ts';

const WHY: Readonly<Record<string, string>> = {
  CREATOR: 'the namespace has no furnish.dev/creator annotation (it predates Furnish, or a trusted principal created it)',
  ORGANIZATION: 'the namespace has no furnish.dev/organization label',
};

/** Every string of `raw` that holds tokens and renders to nothing (blank) with these values. */
export function emptyTokenProblems(raw: unknown, values: TokenValues, path: string): ValidationProblem[] {
  if (typeof raw === 'string') {
    const tokens = tokensIn(raw);
    if (tokens.length === 0 || substituteTokens(raw, values).trim() !== '') return [];
    const empty = tokens.filter((t) => (values as unknown as Record<string, string>)[t] === '');
    const why = empty.map((t) => WHY[t]).filter(Boolean).join('; ');
    return [{ path, message: `${JSON.stringify(raw)} renders empty here${why ? `: ${why}` : ''}; the object is not sent (${empty.map(formatToken).join(', ')} has no value)` }];
  }
  if (Array.isArray(raw)) return raw.flatMap((item, i) => emptyTokenProblems(item, values, childPath(path, i)));
  if (isRecord(raw)) return Object.entries(raw).flatMap(([k, v]) => emptyTokenProblems(v, values, childPath(path, k)));
  return [];
}
