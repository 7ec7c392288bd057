// docs/architecture.md stays true: every row of "Where is X decided" names a file that exists and
// a function that file defines, every file the page names exists, and no decision goes unlisted.
//
// Decision files are the modules decisions live in: every file under shared/webhooks/rules/ (the
// admission rules) and the PLANNERS (the pure modules the reconcilers and the relay decide in).
// There a decision can have any name (namespaceSkip, statusDiffers, withReadyCondition), so EVERY
// exported value (function, const, class; types and re-exports aside) either has a row naming it
// with its file or is listed in NOT_DECISIONS (helpers, readers, builders, messages, constants,
// rule lists and the runners that apply them, I/O). A new export of a decision file fails until it
// is classified. Elsewhere in shared/ and functions/, an exported function whose name says it
// decides (DECISION_NAME) needs a row.
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

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
 * …Outcome; or "<what>Needs<What>" (optOutNeedsPermission, statusNeedsWrite). Only a net for files
 * outside the decision files, where most exports are I/O and helpers.
 */
const DECISION_NAME = /^(?:decide|plan|refuse)[A-Z0-9]|[a-z0-9](?:Needed|Targets|Decision|Refusal|Outcome)$|[a-z0-9]Needs[A-Z]/;

/** The directories scanned for exported functions named as decisions. */
const DECISION_ROOTS = ['shared', 'functions'];

/** Every file under it is a decision file: the admission rules. */
const RULES_DIR = 'shared/webhooks/rules';

/**
 * The planners, decision files too: the population path (reconcile-namespace, reconcile-template,
 * the ownership and drift they and protect-objects judge by), the relay's choices (its state, the
 * drift it forwards, its observers'), the initializers', the quota ledger and the LNamespace plan.
 */
const PLANNERS = [
  'shared/reconcile/plan.ts', 'shared/reconcile/phase.ts', 'shared/reconcile/fanout.ts', 'shared/reconcile/template-status.ts',
  'shared/reconcile/fingerprints.ts', 'shared/reconcile/report.ts', 'shared/reconcile/drift.ts', 'shared/ownership.ts',
  'shared/kube/managed-fields.ts', 'functions/watch-relay/lib/relay-state.ts', 'functions/watch-relay/lib/drift-watch.ts',
  'shared/lnamespace/relay.ts', 'shared/org/relay-organizations.ts', 'shared/initializers/decide.ts', 'shared/org/ledger.ts',
  'shared/lnamespace/plan.ts',
];

/**
 * The exports of decision files that decide nothing themselves, by file. Each is a helper (lookup,
 * parser, formatter), a reader of what another decision wrote, a builder of what a decision chose
 * (patch, object, Event), a message, a constant, a list of rules or the runner that applies one,
 * state, or I/O.
 */
const NOT_DECISIONS: Readonly<Record<string, readonly string[]>> = {
  // readers and builders: a namespace's render input, Furnish's marks, the parent's content, the orphan patch
  'shared/reconcile/plan.ts': ['namespaceInfo', 'renderContextOf', 'renderContextOfInfo', 'withRecordedAnnotations', 'PARENT_FAILURE', 'parentGroupKinds', 'parentTemplates', 'orphanPatch', 'parentObject'],
  // the failure annotation's text and its lines
  'shared/reconcile/phase.ts': ['MAX_FAILURE_TEXT', 'failureText', 'failureLineFor'],
  'shared/reconcile/fanout.ts': ['parentRecord', 'chunk'],
  // the accumulator of the template's live objects
  'shared/reconcile/template-status.ts': ['addLive'],
  // limits, formatting, and the Event and condition builders
  'shared/reconcile/report.ts': ['MAX_RECENT_FAILURES', 'MAX_MESSAGE', 'clip', 'writesOf', 'warningEvents', 'eventObject', 'condition', 'upsert'],
  // the compact form a fingerprint is kept in, the fingerprints wired in, the index entry, the relay's state (it asks fingerprints.ts and redriveAfter)
  'functions/watch-relay/lib/relay-state.ts': ['compactFingerprint', 'BUILT_IN_FINGERPRINTS', 'seenOf', 'RelayState'],
  // what is watched, its path, the watch (I/O)
  'functions/watch-relay/lib/drift-watch.ts': ['DEFAULT_DRIFT_RESOURCES', 'driftPath', 'watchDrift'],
  'shared/lnamespace/relay.ts': ['LNS_DRIFT_RESOURCES', 'LNS_DRIFT_SELECTOR', 'holdersOf'],
  'shared/org/relay-organizations.ts': ['NamespaceOrganizations'],
  // the annotations' parsers and formatters, the failure patch
  'shared/initializers/decide.ts': ['pendingInitializers', 'formatInitializers', 'listChange', 'parseFailureReport', 'newFailureReport', 'failureValue', 'findInitializer', 'failurePatch'],
  // the quota and slots read from an Organization, the denial's text
  'shared/org/ledger.ts': ['quotaOf', 'usedSlots', 'quotaDenial'],
  'shared/lnamespace/plan.ts': ['keyOf', 'withTransitionTimes'],
  // the failure annotation's templates, the denials' advice
  'shared/webhooks/rules/guard-initializing.ts': ['failedTemplates', 'recoveryAdvice', 'stillFurnishing'],
  'shared/webhooks/rules/initializers-guard.ts': ['laterInitializerOf'],
  'shared/webhooks/rules/initializers-mutate.ts': ['INITIALIZER_MUTATIONS', 'initializerMutations'],
  'shared/webhooks/rules/initializers-validate.ts': ['initializerValidation'],
  'shared/webhooks/rules/mutate-namespace.ts': ['isChange', 'IMMUTABLE_ANNOTATIONS', 'keptCreator', 'MUTATE_NAMESPACE_RULES', 'mutationsFor', 'applyChanges'],
  'shared/webhooks/rules/organization-lnamespace.ts': ['lnamespaceAsk'],
  // the allowlist's fixed exceptions (metadataAllowlist decides), the label's reader, a diff, who Furnish is
  'shared/webhooks/rules/organization-namespace.ts': ['OWN_RULE_KEYS', 'ANNOTATIONS_WRITTEN_BY_FURNISH', 'organizationOf', 'changedKeys', 'isFurnish', 'ORGANIZATION_NAMESPACE_RULES', 'organizationOutcomes'],
  // an outcome's builders; resolveNow and resolve are resolveOutcomes without waiting
  'shared/webhooks/rules/outcome.ts': ['allowBecause', 'denyBecause', 'resolveNow', 'resolve'],
  // a pattern match, as the settings spell principals
  'shared/webhooks/rules/principals.ts': ['matchesPrincipal', 'matchingPrincipal'],
  // the subresources' names, the object's template label, the denial's text
  'shared/webhooks/rules/protect-objects.ts': ['SCALE', 'JUDGED_AS_OBJECT', 'templateOf', 'protectFirstStep', 'protectionDenial'],
  'shared/webhooks/rules/run-once-pod.ts': ['POD_DEADLINE_ANNOTATION'],
  // the marks ownershipChange judges, which the in-tree policy furnish-subresource-metadata reads too
  'shared/ownership.ts': ['OWNERSHIP_MARKS'],
  'shared/webhooks/rules/validate-namespace.ts': ['validationOutcomes'],
};

/** Names `source` exports as values (function, const/let/var, class, enum); types, interfaces and `export { … }` aside. */
function exportedValues(source: string): string[] {
  return [...source.matchAll(/^export\s+(?:declare\s+)?(?:default\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\*?\s*|class\s+|(?:const|let|var)\s+|enum\s+)([A-Za-z0-9_$]+)/gm)].map((m) => m[1]!);
}

/** Exported functions of `source` (declarations, or consts holding one) whose name is a decision's. */
function exportedDecisions(source: string): string[] {
  const names = [...source.matchAll(/^export\s+(?:async\s+)?(?:function\*?\s*([A-Za-z0-9_]+)|const\s+([A-Za-z0-9_]+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:\(|function\b|[A-Za-z0-9_]+\s*=>))/gm)].map((m) => (m[1] ?? m[2])!);
  return names.filter((n) => DECISION_NAME.test(n));
}

/** Every .ts file under `dir` (tests, declarations and node_modules excluded), relative to the repository. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  }).sort();
}

/** `file: function` for each exported decision of `file` that has no row naming it with that file. */
function missingRows(rows: readonly Row[], file: string, source: string): string[] {
  return exportedDecisions(source).filter((fn) => !rows.some((r) => r.file === file && r.fn === fn)).map((fn) => `${file}: ${fn}`);
}

/** `file: name` for each export of decision file `file` that neither has a row nor is listed as no decision. */
function unclassified(rows: readonly Row[], notDecisions: Readonly<Record<string, readonly string[]>>, file: string, source: string): string[] {
  return exportedValues(source).filter((n) => !rows.some((r) => r.file === file && r.fn === n) && !notDecisions[file]?.includes(n)).map((n) => `${file}: ${n}`);
}

/** A row of the table, for the checks' own tests. */
const row = (file: string, fn: string): Row => ({ what: 'x', file, link: `../${file}`, fn });

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

  const decisionFiles = [...sourceFiles(RULES_DIR), ...PLANNERS].sort();

  it('every planner exists', () => {
    expect(PLANNERS.filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
  });

  it.each(decisionFiles)('%s: every export has a row in "Where is X decided" or is listed in NOT_DECISIONS', (file) => {
    // Fails naming each export without either: a decision gets `| what it decides | [file](../file) | \`function\` |`,
    // anything else a place in NOT_DECISIONS.
    expect(unclassified(rows, NOT_DECISIONS, file, readFileSync(join(ROOT, file), 'utf8'))).toEqual([]);
  });

  it('NOT_DECISIONS lists exports of decision files, none with a row', () => {
    const stale = Object.entries(NOT_DECISIONS).flatMap(([file, names]) => {
      const exported = decisionFiles.includes(file) ? exportedValues(readFileSync(join(ROOT, file), 'utf8')) : [];
      return names.filter((n) => !exported.includes(n) || rows.some((r) => r.file === file && r.fn === n)).map((n) => `${file}: ${n}`);
    });
    expect(stale).toEqual([]);
  });

  const otherFiles = DECISION_ROOTS.flatMap(sourceFiles).filter((f) => !decisionFiles.includes(f));
  const withDecisions = otherFiles.filter((f) => exportedDecisions(readFileSync(join(ROOT, f), 'utf8')).length > 0);

  it('finds the files it checks', () => {
    expect(decisionFiles).toEqual(expect.arrayContaining(['shared/webhooks/rules/protect-objects.ts', 'shared/reconcile/plan.ts', 'functions/watch-relay/lib/relay-state.ts']));
    expect(withDecisions).toEqual(expect.arrayContaining(['shared/org/validate.ts', 'shared/lnamespace/admission.ts']));
  });

  it.each(withDecisions)('%s: every exported function named as a decision has a row in "Where is X decided"', (file) => {
    // Fails naming each function without a row: add `| what it decides | [file](../file) | \`function\` |`.
    expect(missingRows(rows, file, readFileSync(join(ROOT, file), 'utf8'))).toEqual([]);
  });

  it('the decision names are those the page promises', () => {
    for (const n of ['decidePhase', 'planNamespace', 'refuseParentWrite', 'fanoutNeeded', 'fanoutTargets', 'pruneDecision', 'deletionRefusal', 'guardOutcome', 'optOutNeedsPermission', 'statusNeedsWrite']) expect(DECISION_NAME.test(n)).toBe(true);
    for (const n of ['isChange', 'planned', 'refused', 'refusedPush', 'quotaDenial', 'validationOutcomes', 'Needed', 'planner']) expect(DECISION_NAME.test(n)).toBe(false);
  });

  it('the checks catch an export of a decision file that is not classified', () => {
    const source = 'export function namespaceSkip(x) {}\nexport const heldBackBy = (x) => x;\nexport async function afterWrites() {}\nexport class RelayState {}\n'
      + 'export const LIMIT = 3;\nexport function clip() {}\nfunction hidden() {}\nexport interface Plan {}\nexport type Fingerprint = string;\nexport { FIELD_MANAGER };\n';
    expect(exportedValues(source)).toEqual(['namespaceSkip', 'heldBackBy', 'afterWrites', 'RelayState', 'LIMIT', 'clip']);
    expect(unclassified([row('shared/a.ts', 'namespaceSkip'), row('shared/b.ts', 'heldBackBy')], { 'shared/a.ts': ['LIMIT', 'clip'], 'shared/b.ts': ['afterWrites'] }, 'shared/a.ts', source))
      .toEqual(['shared/a.ts: heldBackBy', 'shared/a.ts: afterWrites', 'shared/a.ts: RelayState']);
  });

  it('the checks catch a function named as a decision without a row', () => {
    const source = 'export function planThing(x) {}\nexport const fooNeeded = (x) => x;\nexport async function decideLater() {}\nfunction planHidden() {}\nexport const PLAN_LIMIT = 3;\nexport function isThing() {}\n';
    expect(exportedDecisions(source)).toEqual(['planThing', 'fooNeeded', 'decideLater']);
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
