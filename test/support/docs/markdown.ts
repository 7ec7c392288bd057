// What the docs checks read in a Markdown page: its fenced code blocks (CommonMark's rules for where
// one starts and ends) and the page's lines outside them. Pure: the callers read the files.

export interface Fence {
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string after the opening fence, trimmed (```sh runnable → `sh runnable`). */
  info: string;
  /** The lines between the fences, without the opening fence's indentation. */
  body: string;
  /** 1-based line of the closing fence. */
  endLine: number;
}

/** A page that cannot be read as the checks need it, said as `page:line: what is wrong`. */
export class DocsError extends Error {
  constructor(page: string, line: number, what: string) {
    super(`${page}:${line}: ${what}`);
    this.name = 'DocsError';
  }
}

const OPENING = /^( *)(`{3,}|~{3,})(.*)$/;

/** The fenced code blocks of `markdown`. An unclosed fence is an error: it swallows the rest of the page. */
export function fences(page: string, markdown: string): Fence[] {
  const lines = markdown.split(/\r?\n/);
  const found: Fence[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = OPENING.exec(lines[i]!);
    // A backtick fence's info string holds no backtick (CommonMark): ```a``` is inline code.
    if (!open || (open[2]![0] === '`' && open[3]!.includes('`'))) continue;
    const [, indent, marker] = open as unknown as [string, string, string];
    const closing = new RegExp(`^ *${marker[0] === '`' ? '`' : '~'}{${marker.length},} *$`);
    let end = i + 1;
    while (end < lines.length && !closing.test(lines[end]!)) end += 1;
    if (end === lines.length) throw new DocsError(page, i + 1, `the code block opened here (${marker}) is never closed`);
    const body = lines.slice(i + 1, end).map((l) => l.replace(new RegExp(`^ {0,${indent.length}}`), ''));
    found.push({ line: i + 1, info: open[3]!.trim(), body: body.join('\n'), endLine: end + 1 });
    i = end;
  }
  return found;
}

/** The page's lines with every fenced block's lines blanked (line numbers kept), for checks of the prose. */
export function proseLines(page: string, markdown: string): string[] {
  const lines = markdown.split(/\r?\n/);
  for (const f of fences(page, markdown)) for (let l = f.line; l <= f.endLine; l += 1) lines[l - 1] = '';
  return lines;
}

/** A link target that leaves the repository (a scheme such as https: or mailto:, or //host). */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}

/**
 * Every link target of the page with its line: inline links and images `[t](target "title")`,
 * reference definitions `[label]: target`, and HTML `href="…"`/`src="…"`; none in code (fenced
 * blocks, inline code spans).
 */
export function markdownLinks(page: string, markdown: string): Array<{ line: number; target: string }> {
  const found: Array<{ line: number; target: string }> = [];
  proseLines(page, markdown).forEach((raw, i) => {
    const line = raw.replace(/(`+).*?\1/g, '');
    const add = (t: string) => found.push({ line: i + 1, target: t.replace(/^<|>$/g, '') });
    for (const m of line.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)) add(m[1]!);
    const definition = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(line);
    if (definition) add(definition[1]!);
    for (const m of line.matchAll(/<(?:a|img)\s[^>]*?\b(?:href|src)\s*=\s*"([^"]+)"/gi)) add(m[1]!);
  });
  return found;
}

/**
 * The anchor GitHub gives a heading (github-slugger): the rendered text lower-cased, every
 * character that is not a letter, digit, mark, `_`, `-` or space removed, spaces become `-`.
 */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // HTML tags
    .replace(/(`+)(.*?)\1/g, '$2') // code spans: their content
    .replace(/(^|[^\p{L}\p{N}])_+|_+(?=[^\p{L}\p{N}]|$)/gu, '$1'); // _emphasis_, not snake_case
  return rendered.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/**
 * The anchors a link may name on this page: each heading's slug (ATX `## x` and setext, a repeated
 * one numbered -1, -2… as GitHub does) and each HTML `id="…"` or `<a name="…">`.
 */
export function pageAnchors(page: string, markdown: string): Set<string> {
  const lines = proseLines(page, markdown);
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  const addHeading = (text: string) => {
    const slug = githubSlug(text);
    const n = counts.get(slug) ?? 0;
    counts.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  };
  lines.forEach((line, i) => {
    const atx = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (atx) addHeading(atx[1] ?? '');
    const next = lines[i + 1] ?? '';
    if (!atx && line.trim() !== '' && /^ {0,3}(=+|-+)[ \t]*$/.test(next) && !/^\s*([-*+>|]|\d+[.)])/.test(line)) addHeading(line);
    for (const m of line.matchAll(/<[a-z]+\s[^>]*?\b(?:id|name)\s*=\s*"([^"]+)"/gi)) anchors.add(m[1]!);
  });
  return anchors;
}
