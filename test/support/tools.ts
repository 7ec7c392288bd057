// Tests that need a tool from outside the repository (kubectl, the Pub/Sub emulator's gcloud) gate
// their suites with `describeWithTool` (or single tests with `itWithTool`). On a laptop without the
// tool the tests are reported as skipped, with a loud banner saying why; under CI=true a missing
// tool fails the run, so CI can never go green by skipping. Never `if (!tool) return;` in a test:
// a test that returns early is counted as passed.
import { describe, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';

export interface ToolCheck {
  available: boolean;
  path?: string;
}

/** A tool a suite needs: its command, why the suite needs it, and the arguments that probe it. */
export interface Tool {
  command: string;
  why: string;
  versionArgs?: string[];
}

export function findTool(command: string, versionArgs: string[] = ['version', '--client']): ToolCheck {
  const probe = spawnSync(command, versionArgs, { encoding: 'utf8', timeout: 20_000 });
  if (probe.error || probe.status !== 0) return { available: false };
  const which = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  return { available: true, path: which.stdout.trim() };
}

export function isCI(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === 'true' || env.CI === '1';
}

/** What a suite does about a tool: run with it, skip without it (laptop), fail without it (CI). */
export function toolVerdict(available: boolean, ci: boolean): 'run' | 'skip' | 'fail' {
  if (available) return 'run';
  return ci ? 'fail' : 'skip';
}

/**
 * Returns true when nothing is missing. Otherwise: throws under CI, else prints a loud banner with
 * each missing thing (what is missing and why it is needed, then how to get it) and returns false.
 */
export function requireAll(missing: Array<{ message: string; remedy: string }>, ci = isCI()): boolean {
  const verdict = toolVerdict(missing.length === 0, ci);
  if (verdict === 'run') return true;
  const message = missing.map((m) => m.message).join('; ');
  if (verdict === 'fail') throw new Error(`${message} (CI=true: what a test needs must be there)`);
  const lines = missing.flatMap((m) => [`!! SKIPPED: ${m.message}`, `!! ${m.remedy}`]);
  process.stderr.write(`\n${'!'.repeat(78)}\n${lines.join('\n')}\n${'!'.repeat(78)}\n\n`);
  return false;
}

/** `requireAll` for tools on PATH, probed with their version arguments. */
export function requireTools(tools: Tool[]): boolean {
  return requireAll(tools
    .filter((t) => !findTool(t.command, t.versionArgs).available)
    .map((t) => ({ message: `${t.command} is not installed: ${t.why}`, remedy: `Install ${t.command} to run these tests.` })));
}

export function requireTool(command: string, why: string, versionArgs?: string[]): boolean {
  return requireTools([{ command, why, versionArgs }]);
}

/** What a suite gates on the tools: whether they are there, and `describe`/`it` that skip without them. */
export interface ToolGate {
  available: boolean;
  describe: typeof describe;
  it: typeof it;
}

/**
 * Probes the tools once (throwing under CI=true when one is missing). Without one on a laptop, the
 * gate's `describe` and `it` report their tests as skipped: jest counts them, and hooks of a block
 * whose tests are all skipped do not run. Call it once per file and reuse the result.
 */
export function toolGate(tools: Tool[]): ToolGate {
  return gate(requireTools(tools));
}

/** The gate for something other than a tool on PATH (a capability of the machine), once `requireAll` has judged it. */
export function gate(available: boolean): ToolGate {
  return available ? { available, describe, it } : { available, describe: describe.skip as typeof describe, it: it.skip as typeof it };
}

export function describeWithTools(tools: Tool[]): typeof describe {
  return toolGate(tools).describe;
}

/** `describe` when the tool is there; skipped without it on a laptop, failing under CI=true. */
export function describeWithTool(command: string, why: string, versionArgs?: string[]): typeof describe {
  return describeWithTools([{ command, why, versionArgs }]);
}
