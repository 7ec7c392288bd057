// docs/architecture.md stays true: every row of "Where is X decided" names a file that exists and
// a function that file defines, and every file the page names exists.
import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const PAGE = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

interface Row { what: string; file: string; link: string; fn: string }

/** The rows of the table under `## Where is X decided`: `| what | [file](../file) | \`function\` |`. */
function decisionRows(page: string): Row[] {
  const section = page.split(/^## /m).find((s) => s.startsWith('Where is X decided'));
  if (!section) throw new Error('docs/architecture.md: no "## Where is X decided" section');
  return section.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| what ')).map((line) => {
    const m = /^\| (.+?) \| \[([^\]]+)\]\(([^)]+)\) \| `([A-Za-z0-9_]+)` \|$/.exec(line);
    if (!m) throw new Error(`docs/architecture.md: a row must read | what | [file](../file) | \`function\` |, got: ${line}`);
    return { what: m[1]!, file: m[2]!, link: m[3]!, fn: m[4]! };
  });
}

/** Whether `source` defines `fn` (a function declaration, or a const holding one). */
function defines(source: string, fn: string): boolean {
  return new RegExp(`(^|\\n)\\s*(export\\s+)?(async\\s+)?(function\\s+${fn}\\b|const\\s+${fn}\\s*[:=])`).test(source);
}

describe('docs/architecture.md', () => {
  const rows = decisionRows(PAGE);

  it('has a row for each decision the issue asks about', () => {
    const topics = ['creator recorded', 'template selection', 'use permission', 'opt-out', 'allowlist', 'membership', 'quota', 'guard while pending', 'drift', 'pruning', 'phase', 'template status', 'billing row', 'settings', 'trust of push requests', 'path credentials'];
    for (const t of topics) expect(rows.some((r) => r.what.includes(t))).toBe(true);
  });

  it.each(decisionRows(PAGE).map((r) => [r.what, r] as const))('%s: the file exists, the link opens it, and it defines the function', (_, row) => {
    expect(row.link).toBe(`../${row.file}`);
    expect(existsSync(join(ROOT, row.file))).toBe(true);
    expect(defines(readFileSync(join(ROOT, row.file), 'utf8'), row.fn)).toBe(true);
  });

  it('every path the page names exists', () => {
    const paths = [...PAGE.matchAll(/`((?:shared|functions|infra|terraform|test|scripts)\/[^`\s]*)`/g)].map((m) => m[1]!.replace(/<[^>]+>.*$/, ''));
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
  });

  it('the checks catch a stale row', () => {
    expect(defines('export function recordCreator(x) {}', 'recordCreator')).toBe(true);
    expect(defines('export function recordCreatorNow(x) {}', 'recordCreator')).toBe(false);
    expect(defines('// recordCreator is gone', 'recordCreator')).toBe(false);
    expect(() => decisionRows('## Where is X decided\n\n| what | file | function |\n|---|---|---|\n| x | shared/a.ts | f |\n')).toThrow(/a row must read/);
  });
});
