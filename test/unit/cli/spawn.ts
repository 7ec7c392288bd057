// The `furnish` CLI for the CLI suites: in-process through runCli and the injected IO (what most
// cases use: no process per case), and the real bin/furnish.js in a process of its own (the
// smoke tests); the "user error" expectation and a temp-file writer.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from '@jest/globals';
import { runCli } from '../../../shared/cli/command.ts';
import { COMMANDS } from '../../../shared/cli/commands.ts';

export const root = join(import.meta.dirname, '..', '..', '..');
const bin = join(root, 'bin', 'furnish.js');

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `furnish ARGS` in this process: stdin is `input` (empty without), the environment this one's plus `env`. */
export async function runFurnish(args: string[], input?: string, env?: Record<string, string>): Promise<Run> {
  const run: Run = { status: null, stdout: '', stderr: '' };
  run.status = await runCli(COMMANDS, args, {
    stdout: (text) => void (run.stdout += text),
    stderr: (text) => void (run.stderr += text),
    env: { ...process.env, ...env },
    readStdin: () => input ?? '',
  });
  return run;
}

/** `furnish ARGS` as a user runs it: bin/furnish.js in its own process, from the repository root. */
export function spawnFurnish(args: string[], input?: string, env?: Record<string, string>): Run {
  const run = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', timeout: 20_000, input, ...(env ? { env: { ...process.env, ...env } } : {}) });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/**
 * A user error reads as a message, never as a stack trace, with nothing on stdout, and exits 1
 * (invalid input, a refusal) or 2 (a wrong command line).
 */
export function expectUserError(run: Run, message: RegExp, exit: 1 | 2): void {
  expect(run.stderr).toMatch(message);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  expect(run.stdout).toBe('');
  expect(run.status).toBe(exit);
}

/** Writes `text` to `dir/name`, creating folders, and returns the path. */
export function writeUnder(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}
