// The runnable blocks of the user guide (docs/guide/) and how `npm run test:docs` judges what they
// print: which blocks, in which order, what is normalised before comparing, and the report of a
// mismatch. Pure; scripts/docs-run.ts starts the stack and runs them. The conventions are written
// for the guide's authors in docs/guide-conventions.md.
import { posix } from 'node:path';
import { DocsError, fences, isExternal, markdownLinks, type Fence } from './markdown.ts';

/** Words a runnable block's info string may carry after `sh runnable`. */
export const RUNNABLE_FLAGS = ['expect-fail'] as const;
export type RunnableFlag = (typeof RUNNABLE_FLAGS)[number];

export interface RunnableBlock {
  /** The page, as the caller named it (relative to the repository in reports). */
  page: string;
  /** 1-based line of the block's opening fence. */
  line: number;
  command: string;
  /** The command must exit non-zero (```sh runnable expect-fail```). */
  expectFail: boolean;
  /** The ```text output``` block right after it: what it must print (stdout and stderr, as a terminal shows them). */
  output?: { line: number; text: string };
}

type Role = { kind: 'runnable'; expectFail: boolean } | { kind: 'output' } | { kind: 'other' };

/** What a fence's info string makes of it; a misspelt convention is an error, never a block silently skipped. */
function roleOf(page: string, line: number, info: string): Role {
  const [lang, ...words] = info.split(/\s+/);
  if (words.includes('runnable')) {
    const unknown = words.filter((w) => w !== 'runnable' && !(RUNNABLE_FLAGS as readonly string[]).includes(w));
    if (lang !== 'sh') throw new DocsError(page, line, `a runnable block is \`\`\`sh runnable, not \`\`\`${info}`);
    if (unknown.length > 0) throw new DocsError(page, line, `unknown word ${unknown.map((w) => `"${w}"`).join(', ')} after \`\`\`sh runnable (known: ${RUNNABLE_FLAGS.join(', ')})`);
    return { kind: 'runnable', expectFail: words.includes('expect-fail') };
  }
  if (words.some((w) => (RUNNABLE_FLAGS as readonly string[]).includes(w))) throw new DocsError(page, line, `\`\`\`${info}: ${RUNNABLE_FLAGS.join(', ')} only go with \`\`\`sh runnable`);
  if (words.includes('output')) {
    if (lang !== 'text' || words.length !== 1) throw new DocsError(page, line, `an output block is \`\`\`text output, not \`\`\`${info}`);
    return { kind: 'output' };
  }
  return { kind: 'other' };
}

/**
 * The runnable blocks of one page, in page order, each with the output block that follows it. An
 * output block must come right after a runnable one (blank lines between at most): anywhere else it
 * would be compared with nothing.
 */
export function runnableBlocks(page: string, markdown: string): RunnableBlock[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: RunnableBlock[] = [];
  let previous: { block: RunnableBlock; endLine: number } | undefined;
  let before: Fence | undefined;
  for (const f of fences(page, markdown)) {
    const role = roleOf(page, f.line, f.info);
    const adjacent = previous !== undefined && lines.slice(previous.endLine, f.line - 1).every((l) => l.trim() === '');
    // A stray fence pairs the fences after it the wrong way round: name the block it made.
    const last = before ? `; the block before it is \`\`\`${before.info} at lines ${before.line}-${before.endLine}` : '';
    before = f;
    if (role.kind === 'output') {
      if (!adjacent) throw new DocsError(page, f.line, `a \`\`\`text output block must follow a \`\`\`sh runnable block (blank lines between at most)${last}`);
      if (previous!.block.output) throw new DocsError(page, f.line, `a second \`\`\`text output block for the block at line ${previous!.block.line}`);
      previous!.block.output = { line: f.line, text: f.body };
      previous!.endLine = f.endLine;
      continue;
    }
    previous = undefined;
    if (role.kind !== 'runnable') continue;
    if (f.body.trim() === '') throw new DocsError(page, f.line, 'an empty ```sh runnable block');
    const block: RunnableBlock = { page, line: f.line, command: f.body, expectFail: role.expectFail };
    blocks.push(block);
    previous = { block, endLine: f.endLine };
  }
  return blocks;
}

/**
 * The pages of a guide in walk order: its README.md first (the index may have blocks too), then
 * every `.md` page of the guide's folder the README links to, in the order of first mention
 * (anchors dropped; external links, pages outside the folder and code ignored).
 */
export function guideOrder(readme: string): string[] {
  const order = ['README.md'];
  for (const { target } of markdownLinks('README.md', readme)) {
    const path = target.split('#')[0]!;
    if (isExternal(path) || !path.endsWith('.md')) continue;
    const page = posix.normalize(path);
    // A page outside the guide (../reference/cli.md) is read, not walked.
    if (!page.startsWith('../') && !page.startsWith('/') && !order.includes(page)) order.push(page);
  }
  return order;
}

/** Pages with runnable blocks that the walk would never reach (not linked from the guide's README). */
export function unlistedPages(order: readonly string[], pagesWithBlocks: readonly string[]): string[] {
  return pagesWithBlocks.filter((p) => !order.includes(p)).sort();
}

/**
 * What differs between runs and is not the docs' business, each replaced by a placeholder on both
 * sides before comparing. Applied in this order (docs/guide-conventions.md lists the same).
 */
export const NORMALISATIONS: ReadonlyArray<{ what: string; pattern: RegExp; replacement: string }> = [
  // eslint-disable-next-line no-control-regex -- an ANSI escape starts with the ESC control character
  { what: 'terminal colours (ANSI escapes) are removed', pattern: /\x1b\[[0-9;]*[A-Za-z]/g, replacement: '' },
  { what: 'an RFC 3339 timestamp (2026-11-27T11:30:00Z, fractions, offsets) becomes <time>', pattern: /\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g, replacement: '<time>' },
  { what: "kubectl describe's timestamp (Fri, 27 Nov 2026 11:30:00 +0000) becomes <time>", pattern: /\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}/g, replacement: '<time>' },
  { what: 'a UID (8-4-4-4-12 hexadecimal digits) becomes <uid>', pattern: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, replacement: '<uid>' },
  { what: 'the value of a resourceVersion (resourceVersion: "42", "resourceVersion":"42", resourceVersion=42) becomes <rv>', pattern: /(resourceVersion["']?\s*[:=]\s*)["']?\d+["']?/g, replacement: '$1<rv>' },
  { what: 'a port on this machine (127.0.0.1:<port>, localhost:<port>)', pattern: /\b(127\.0\.0\.1|localhost):\d+/g, replacement: '$1:<port>' },
  { what: 'a run of 16 or more hexadecimal digits (tokens, secrets, hashes) becomes <hex>', pattern: /\b(?=[0-9a-f]*[0-9])[0-9a-f]{16,}\b/g, replacement: '<hex>' },
  { what: "a generated name's suffix (a dash and 5 of Kubernetes' characters bcdfghjklmnpqrstvwxz2456789 ending a name) becomes -<random>", pattern: /(?<=[a-z0-9]-)[bcdfghjklmnpqrstvwxz2456789]{5}(?![A-Za-z0-9-])/g, replacement: '<random>' },
  { what: "an Event name's suffix (a dot and 10 or more lowercase letters and digits, at least one of each) becomes .<random>", pattern: /(?<=[a-z0-9]\.)(?=[a-z0-9]*[0-9])(?=[a-z0-9]*[a-z])[a-z0-9]{10,}(?![A-Za-z0-9-])/g, replacement: '<random>' },
  { what: 'an age or duration standing alone (5s, 3m20s, 10m, 2d5h, kubectl\'s AGE and LAST SEEN) becomes <age>', pattern: /(?<!\S)(?:\d+[smhdy]){1,2}(?!\S)/g, replacement: '<age>' },
  { what: 'whitespace between words (table columns aligned to their widest cell) becomes one space; trailing whitespace and leading and trailing blank lines are removed; indentation is kept', pattern: /(?<=\S)[ \t]+(?=\S)/g, replacement: ' ' },
];

/** `text` as compared: each NORMALISATIONS rule applied, lines trimmed at the end, blank lines around it dropped. */
export function normaliseOutput(text: string): string {
  const replaced = NORMALISATIONS.reduce((t, n) => t.replace(n.pattern, n.replacement), text.replace(/\r\n?/g, '\n'));
  return replaced.split('\n').map((l) => l.trimEnd()).join('\n').replace(/^\n+|\n+$/g, '');
}

/**
 * Output the docs elide: a line that is only `...` stands for any number of lines (none too), and
 * `...` within a line for any text on that line.
 */
export const ELISION = '...';

/** Whether one line of the docs matches one line of the run, `...` in it matching any text. */
export function lineMatches(expected: string, actual: string): boolean {
  if (!expected.includes(ELISION)) return expected === actual;
  const parts = expected.split(ELISION).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`).test(actual);
}

/** Whether `actual` lines match `expected` lines (lineMatches), an ELISION line matching any run of lines. */
export function linesMatch(expected: readonly string[], actual: readonly string[]): boolean {
  const memo = new Map<string, boolean>();
  const match = (e: number, a: number): boolean => {
    const key = `${e},${a}`;
    if (memo.has(key)) return memo.get(key)!;
    let result: boolean;
    if (e === expected.length) result = a === actual.length;
    else if (expected[e]!.trim() === ELISION) result = match(e + 1, a) || (a < actual.length && match(e, a + 1));
    else result = a < actual.length && lineMatches(expected[e]!, actual[a]!) && match(e + 1, a + 1);
    memo.set(key, result);
    return result;
  };
  return match(0, 0);
}

/** A line diff (longest common subsequence, lines equal when they match): `- ` only in the docs, `+ ` only in the run, `  ` both. */
export function lineDiff(expected: readonly string[], actual: readonly string[]): string[] {
  const n = expected.length;
  const m = actual.length;
  const same = (i: number, j: number) => lineMatches(expected[i]!, actual[j]!);
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) lcs[i]![j] = same(i, j) ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && same(i, j)) {
      out.push(`  ${actual[j]}`);
      i += 1;
      j += 1;
    } else if (i < n && (j === m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      out.push(`- ${expected[i]}`);
      i += 1;
    } else {
      out.push(`+ ${actual[j]}`);
      j += 1;
    }
  }
  return out;
}

/**
 * A run's output as a user's would read: the walk keeps the stack's state and its HOME in a
 * temporary folder (their paths differ every run), a user has them in `.furnish` and `~`.
 */
export function asUserSees(output: string, walk: { stateDir: string; home: string }): string {
  return output.split(walk.stateDir).join('.furnish').split(walk.home).join('~');
}

/** What a run of a block did: its exit status (null when killed) and everything it printed, interleaved. */
export interface BlockRun {
  status: number | null;
  output: string;
  /** Set when the harness killed it (its time limit). */
  timedOut?: boolean;
}

/** Why a block's run is not what its page says; undefined when it is. */
export function judgeBlock(block: RunnableBlock, run: BlockRun): { reason: string; diff?: string[] } | undefined {
  if (run.timedOut) return { reason: 'it did not finish in time and was killed' };
  if (run.status === null) return { reason: 'it was killed by a signal' };
  if (block.expectFail && run.status === 0) return { reason: 'it is marked expect-fail but exited 0' };
  if (!block.expectFail && run.status !== 0) return { reason: `it exited ${run.status}` };
  if (!block.output) return undefined;
  const expected = normaliseOutput(block.output.text).split('\n');
  const actual = normaliseOutput(run.output).split('\n');
  if (linesMatch(expected, actual)) return undefined;
  return { reason: `its output differs from the output block at line ${block.output.line} (after normalising)`, diff: lineDiff(expected, actual) };
}

/** The report of a failed block: where it is, the command, why, and the diff or what it printed. */
export function failureReport(block: RunnableBlock, run: BlockRun, verdict: { reason: string; diff?: string[] }, maxLines = 60): string {
  const clip = (lines: string[]) => (lines.length > maxLines ? [...lines.slice(0, maxLines), `  (${lines.length - maxLines} more lines)`] : lines);
  const indent = (lines: string[]) => lines.map((l) => `    ${l}`);
  const printed = run.output.replace(/\n+$/, '').split('\n');
  return [
    `FAIL ${block.page}:${block.line}${block.expectFail ? ' (expect-fail)' : ''}: ${verdict.reason}`,
    '  command:',
    ...indent(block.command.split('\n')),
    ...(verdict.diff ? ['  diff (- the docs, + this run):', ...indent(clip(verdict.diff))] : ['  printed:', ...indent(clip(run.output.trim() === '' ? ['(nothing)'] : printed))]),
  ].join('\n');
}
