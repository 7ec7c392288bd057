// The command table: one more entry is one more command, with help, flag parsing and exit codes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { CliError, listOption, runCli, UsageError, type CliIo, type Command } from '../../../shared/cli/command.ts';
import { COMMANDS } from '../../../shared/cli/commands.ts';

function capture(): CliIo & { out: string; err: string } {
  const io = { out: '', err: '', stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t), env: {}, readStdin: () => '' };
  return io;
}

const admit: Command = {
  name: 'admit',
  summary: 'Answer an AdmissionReview offline',
  options: {
    review: { type: 'string', value: 'file', description: 'AdmissionReview JSON' },
    set: { type: 'string', multiple: true, value: 'k=v,...', description: 'values' },
    dry: { type: 'boolean', description: 'do nothing' },
  },
  run(values, io) {
    if (values.review === 'bad') throw new CliError('review "bad" is not an AdmissionReview');
    if (values.review === 'flag') throw new UsageError('--review: "flag" is not a file name');
    if (values.review === 'bug') throw new TypeError('undefined is not a function');
    io.stdout(`${JSON.stringify({ review: values.review, set: listOption(values, 'set'), dry: values.dry ?? false })}\n`);
    return 0;
  },
};

describe('runCli', () => {
  it('runs a command added to the table, with parsed, typed options', async () => {
    const io = capture();
    const code = await runCli([admit], ['admit', '--review', 'r.json', '--set', 'a=b,c=d', '--set', 'e=f', '--dry'], io);
    expect(code).toBe(0);
    expect(JSON.parse(io.out)).toEqual({ review: 'r.json', set: ['a=b', 'c=d', 'e=f'], dry: true });
  });

  it('lists the added command in the help and generates its own help', async () => {
    const main = capture();
    expect(await runCli([...COMMANDS, admit], ['--help'], main)).toBe(0);
    expect(main.out).toMatch(/render\s+Print the objects[\s\S]*admit\s+Answer an AdmissionReview offline/);
    const help = capture();
    expect(await runCli([admit], ['help', 'admit'], help)).toBe(0);
    expect(help.out).toContain('Usage: furnish admit [options]');
    expect(help.out).toMatch(/--set <k=v,...>\s+values \(repeatable\)/);
    expect(help.out).toMatch(/-h, --help\s+show this help/);
  });

  it('turns a CliError into one line and exit 1, a UsageError into exit 2, any other error into exit 1 with its stack', async () => {
    const user = capture();
    expect(await runCli([admit], ['admit', '--review', 'bad'], user)).toBe(1);
    expect(user.err).toBe('furnish admit: review "bad" is not an AdmissionReview\n');
    const usage = capture();
    expect(await runCli([admit], ['admit', '--review', 'flag'], usage)).toBe(2);
    expect(usage.err).toBe('furnish admit: --review: "flag" is not a file name\n');
    const bug = capture();
    expect(await runCli([admit], ['admit', '--review', 'bug'], bug)).toBe(1);
    expect(bug.err).toMatch(/^furnish admit: internal error \(please report it\): TypeError: undefined is not a function\n\s+at /);
  });

  it('refuses a missing option value', async () => {
    const io = capture();
    expect(await runCli([admit], ['admit', '--review'], io)).toBe(2);
    expect(io.err).toBe("furnish admit: Option '--review <value>' argument missing (see furnish admit --help)\n");
  });

  it('a command may be named by several words, its options after them', async () => {
    const report: Command = { ...admit, name: 'billing report' };
    const io = capture();
    expect(await runCli([report], ['billing', 'report', '--review', 'x'], io)).toBe(0);
    expect(io.out).toBe('{"review":"x","set":[],"dry":false}\n');
    expect(await runCli([report], ['billing', '--review', 'x'], io)).toBe(2);
    expect(io.err).toBe('furnish: unknown command "billing"; commands: billing report (see furnish --help)\n');
    const alone = capture();
    expect(await runCli([report], ['billing'], alone)).toBe(2);
    expect(alone.err).toBe('Usage: furnish billing <command> [options]\n\nCommands:\n  report   Answer an AdmissionReview offline\n\nRun `furnish billing <command> --help` for the options of a command.\n');
    for (const args of [['billing', '--help'], ['help', 'billing']]) {
      const listed = capture();
      expect(await runCli([report], args, listed)).toBe(0);
      expect(listed.out).toBe(alone.err);
    }
    const help = capture();
    expect(await runCli([report], ['help', 'billing', 'report'], help)).toBe(0);
    expect(help.out).toMatch(/^Usage: furnish billing report \[options\]/);
  });

  it('reports every missing required option at once, before the command runs (exit 2)', async () => {
    let ran = false;
    const needs: Command = { ...admit, options: { a: { type: 'string', required: true, description: 'a' }, b: { type: 'string', required: true, description: 'b' } }, run: () => ((ran = true), 0) };
    const io = capture();
    expect(await runCli([needs], ['admit'], io)).toBe(2);
    expect(io.err).toBe('furnish admit: missing --a, --b (see furnish admit --help)\n');
    expect(await runCli([needs], ['admit', '--a', 'x'], io)).toBe(2);
    expect(io.err).toMatch(/missing --b \(/);
    expect(ran).toBe(false);
    expect(await runCli([needs], ['admit', '--a', 'x', '--b', 'y'], io)).toBe(0);
  });

  it('prints its version with --version', async () => {
    const io = capture();
    expect(await runCli(COMMANDS, ['--version'], io)).toBe(0);
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string };
    expect(io.out).toBe(`furnish ${version}\n`);
  });

  it('ships render, validate, admit, webhooks, install, uninstall and billing report', () => {
    expect(COMMANDS.map((c) => c.name)).toEqual(['render', 'validate', 'admit', 'webhooks', 'install', 'uninstall', 'billing report']);
  });
});
