// docs/architecture.md stays true: every row of "Where is X decided" names a file that exists and
// a function that file defines, every file the page names exists, and every exported decision
// function (named as one: see DECISION_NAME) of shared/ or functions/ has a row.
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const PAGE = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

interface Row { what: string; file: string; link: string; fn: string }

/** The rows of the table under `## Where is X decided`: `| what | [file](../file) | \`function\` |`. */
function decisionRows(page: string): Row[] {
  const section = page.split(/^## /m).find((s) => s.startsWith('Where is X decided'));
  if (!section) throw new Error('docs/architecture.md: no "## Where is X decided" section');
  // The header is skipped by its exact text: a row may begin with "what" too ("what to apply, …").
  return section.split('\n').filter((l) => l.startsWith('| ') && l !== '| what | file | function |').map((line) => {
    const m = /^\| (.+?) \| \[([^\]]+)\]\(([^)]+)\) \| `([A-Za-z0-9_]+)` \|$/.exec(line);
    if (!m) throw new Error(`docs/architecture.md: a row must read | what | [file](../file) | \`function\` |, got: ${line}`);
    return { what: m[1]!, file: m[2]!, link: m[3]!, fn: m[4]! };
  });
}

/** Whether `source` defines `fn` (a function declaration, or a const holding one). */
function defines(source: string, fn: string): boolean {
  return new RegExp(`(^|\\n)\\s*(export\\s+)?(async\\s+)?(function\\s+${fn}\\b|const\\s+${fn}\\s*[:=])`).test(source);
}

/**
 * A name that says it decides: decide…, plan…, refuse…; …Needed, …Targets, …Decision, …Refusal,
 * …Outcome; or "<what>Needs<What>" (optOutNeedsPermission, statusNeedsWrite). Helpers (isX, …Of),
 * message builders (…Denial) and rule lists are not decisions.
 */
const DECISION_NAME = /^(?:decide|plan|refuse)[A-Z0-9]|[a-z0-9](?:Needed|Targets|Decision|Refusal|Outcome)$|[a-z0-9]Needs[A-Z]/;

/** The directories whose modules hold decisions (rules, planners, their callers): all of them are scanned. */
const DECISION_ROOTS = ['shared', 'functions'];

/** Exported functions of `source` (declarations, or consts holding one) whose name is a decision's. */
function exportedDecisions(source: string): string[] {
  const names = [...source.matchAll(/^export\s+(?:async\s+)?(?:function\*?\s*([A-Za-z0-9_]+)|const\s+([A-Za-z0-9_]+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:\(|function\b|[A-Za-z0-9_]+\s*=>))/gm)].map((m) => (m[1] ?? m[2])!);
  return names.filter((n) => DECISION_NAME.test(n));
}

/** Every .ts file under the decision roots (tests and node_modules excluded), relative to the repository. */
function decisionFiles(): string[] {
  const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : walk(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts') ? [relative(ROOT, path)] : [];
  });
  return DECISION_ROOTS.flatMap((r) => walk(join(ROOT, r))).sort();
}

/** `file: function` for each exported decision of `file` that has no row naming it with that file. */
function missingRows(rows: readonly Row[], file: string, source: string): string[] {
  return exportedDecisions(source).filter((fn) => !rows.some((r) => r.file === file && r.fn === fn)).map((fn) => `${file}: ${fn}`);
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

  const withDecisions = decisionFiles().filter((f) => exportedDecisions(readFileSync(join(ROOT, f), 'utf8')).length > 0);

  it('finds the decision functions it checks', () => {
    expect(withDecisions).toEqual(expect.arrayContaining(['shared/org/ledger.ts', 'shared/lnamespace/plan.ts', 'shared/webhooks/rules/protect-objects.ts']));
  });

  it.each(withDecisions)('%s: every exported decision function has a row in "Where is X decided"', (file) => {
    // Fails naming each function without a row: add `| what it decides | [file](../file) | \`function\` |`.
    expect(missingRows(rows, file, readFileSync(join(ROOT, file), 'utf8'))).toEqual([]);
  });

  it('the decision names are those the page promises', () => {
    for (const n of ['decidePhase', 'planNamespace', 'refuseParentWrite', 'fanoutNeeded', 'fanoutTargets', 'pruneDecision', 'deletionRefusal', 'guardOutcome', 'optOutNeedsPermission', 'statusNeedsWrite']) expect(DECISION_NAME.test(n)).toBe(true);
    for (const n of ['isChange', 'planned', 'refused', 'refusedPush', 'quotaDenial', 'validationOutcomes', 'needsApply', 'Needed', 'planner']) expect(DECISION_NAME.test(n)).toBe(false);
  });

  it('the checks catch a decision without a row', () => {
    const source = 'export function planThing(x) {}\nexport const fooNeeded = (x) => x;\nexport async function decideLater() {}\nfunction planHidden() {}\nexport const PLAN_LIMIT = 3;\nexport function isThing() {}\n';
    expect(exportedDecisions(source)).toEqual(['planThing', 'fooNeeded', 'decideLater']);
    const row = (file: string, fn: string): Row => ({ what: 'x', file, link: `../${file}`, fn });
    expect(missingRows([row('shared/a.ts', 'planThing'), row('shared/b.ts', 'fooNeeded')], 'shared/a.ts', source)).toEqual(['shared/a.ts: fooNeeded', 'shared/a.ts: decideLater']);
  });

  it('the checks catch a stale row', () => {
    expect(defines('export function recordCreator(x) {}', 'recordCreator')).toBe(true);
    expect(defines('export function recordCreatorNow(x) {}', 'recordCreator')).toBe(false);
    expect(defines('// recordCreator is gone', 'recordCreator')).toBe(false);
    expect(() => decisionRows('## Where is X decided\n\n| what | file | function |\n|---|---|---|\n| x | shared/a.ts | f |\n')).toThrow(/a row must read/);
    expect(decisionRows('## Where is X decided\n\n| what | file | function |\n|---|---|---|\n| what to do | [shared/a.ts](../shared/a.ts) | `f` |\n').map((r) => r.fn)).toEqual(['f']);
  });
});
