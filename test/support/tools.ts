// Tests that need a tool from outside the repository (kubectl, the Pub/Sub emulator) call
// `requireTool` in a beforeAll. On a laptop without the tool the suite is skipped with a loud
// message; under CI=true a missing tool fails the run, so CI can never go green by skipping.
import { describe } from '@jest/globals';
import { spawnSync } from 'node:child_process';

export interface ToolCheck {
  available: boolean;
  path?: string;
}

export function findTool(command: string, versionArgs: string[] = ['version', '--client']): ToolCheck {
  const probe = spawnSync(command, versionArgs, { encoding: 'utf8', timeout: 20_000 });
  if (probe.error || probe.status !== 0) return { available: false };
  const which = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  return { available: true, path: which.stdout.trim() };
}

export function isCI(): boolean {
  return process.env.CI === 'true' || process.env.CI === '1';
}

/**
 * Returns true when the tool is there. When it is not: throws under CI, otherwise prints a loud
 * banner and returns false. Suites use `describeWithTool`, which turns that into skipped tests.
 */
export function requireTool(command: string, why: string, versionArgs?: string[]): boolean {
  if (findTool(command, versionArgs).available) return true;
  const message = `${command} is not installed: ${why}`;
  if (isCI()) throw new Error(`${message} (CI=true: a missing tool fails the run)`);
  process.stderr.write(`\n${'!'.repeat(78)}\n!! SKIPPED: ${message}\n!! Install ${command} to run these tests.\n${'!'.repeat(78)}\n\n`);
  return false;
}

/**
 * `describe` when the tool is there. Without it, the suite's tests are reported as skipped (jest
 * counts them, and the banner says why) on a laptop, and the suite fails under CI=true: a test
 * that returns early would count as passed.
 */
export function describeWithTool(command: string, why: string, versionArgs?: string[]): typeof describe {
  return requireTool(command, why, versionArgs) ? describe : (describe.skip as typeof describe);
}
