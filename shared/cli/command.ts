// The command runner of `furnish`: a command is one entry in a table (name, options, run), and
// this module does the rest (help, flag parsing, exit codes, error printing) the same way for all.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { ConfigError } from '../config/settings.ts';

/**
 * Exit codes, as Kyverno's and kubectl's: 0 done (allowed, valid), 1 denied, invalid or failed (a
 * bug too, with its stack trace), 2 the command line itself is wrong (usage).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** All a command touches of its process, injected: main.ts passes the real ones, tests their own. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The environment a command reads (FURNISH_BILLING, --credential-env). */
  env: Readonly<Record<string, string | undefined>>;
  /** What a `-` file argument reads (all of stdin). */
  readStdin(): string;
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** Repeatable; for lists, each occurrence may also be comma-separated. */
  multiple?: boolean;
  short?: string;
  /** The command cannot run without it: every missing one is reported at once, before it runs. */
  required?: boolean;
  /** Placeholder of the value in the help, e.g. `file|dir`. */
  value?: string;
  description: string;
}

export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface Command {
  name: string;
  /** One line for `furnish --help`. */
  summary: string;
  /** A paragraph (or a few) after the usage line of `furnish <name> --help`. */
  description?: string;
  options: Readonly<Record<string, OptionSpec>>;
  run(values: OptionValues, io: CliIo): number | Promise<number>;
}

/** A failure the user can act on (a bad file, a refused request): one line, never a stack trace, exit 1. */
export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: number = EXIT.failed;
}

/** The command line is wrong (an unknown flag, a flag's value out of its range): one line, exit 2. */
export class UsageError extends CliError {
  override name = 'UsageError';
  override readonly exitCode: number = EXIT.usage;
}

/** This package's version (package.json, beside shared/ in the clone and in the packed tarball). */
export function furnishVersion(): string {
  return (JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
}

const HELP: OptionSpec = { type: 'boolean', short: 'h', description: 'show this help' };

function optionLabel(name: string, spec: OptionSpec): string {
  const short = spec.short ? `-${spec.short}, ` : '';
  return `${short}--${name}${spec.type === 'string' ? ` <${spec.value ?? 'value'}>` : ''}`;
}

export function commandHelp(command: Command): string {
  const options = Object.entries({ ...command.options, help: HELP });
  const labels = options.map(([name, spec]) => optionLabel(name, spec));
  const width = Math.max(...labels.map((l) => l.length)) + 2;
  const lines = options.map(([, spec], i) => `  ${labels[i]!.padEnd(width)}${spec.description}${spec.multiple ? ' (repeatable)' : ''}`);
  const description = command.description ? `\n${command.description}\n` : `\n${command.summary}\n`;
  return `Usage: furnish ${command.name} [options]\n${description}\nOptions:\n${lines.join('\n')}\n`;
}

export function mainHelp(commands: readonly Command[], group?: string): string {
  const shown = (c: Command) => (group ? c.name.slice(group.length + 1) : c.name);
  const width = Math.max(...commands.map((c) => shown(c).length)) + 3;
  const lines = commands.map((c) => `  ${shown(c).padEnd(width)}${c.summary}`);
  const usage = group ? `furnish ${group} <command>` : 'furnish <command>';
  const more = group ? `Run \`furnish ${group} <command> --help\` for the options of a command.` : 'Run `furnish <command> --help` for the options of a command, `furnish --version` for the version.';
  return `Usage: ${usage} [options]\n\nCommands:\n${lines.join('\n')}\n\n${more}\n`;
}

/** The commands under a group word (`billing` → `billing report`). */
function groupCommands(commands: readonly Command[], group: string): Command[] {
  return commands.filter((c) => c.name.startsWith(`${group} `));
}

function parseConfig(command: Command): ParseArgsOptionsConfig {
  const config: ParseArgsOptionsConfig = {};
  for (const [name, spec] of Object.entries({ ...command.options, help: HELP })) {
    config[name] = { type: spec.type, multiple: spec.multiple ?? false, ...(spec.short ? { short: spec.short } : {}) };
  }
  return config;
}

/** By code, not instanceof: node:util's errors may come from another realm (jest's vm modules). */
function isParseArgsError(err: unknown): err is { code: string; message: string } {
  const code: unknown = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

/** parseArgs' messages may go on to explain `--`; the first sentence is the one that helps. */
function firstSentence(message: string): string {
  const end = message.search(/\.\s/);
  return end < 0 ? message : message.slice(0, end);
}

function parseOptions(command: Command, args: readonly string[]): OptionValues {
  try {
    return parseArgs({ args: [...args], options: parseConfig(command), strict: true, allowPositionals: false }).values;
  } catch (err) {
    if (isParseArgsError(err)) throw new UsageError(`${firstSentence(err.message)} (see furnish ${command.name} --help)`);
    throw err;
  }
}

/** Every required option the command line lacks, said at once. */
function checkRequired(command: Command, values: OptionValues): void {
  const missing = Object.entries(command.options).filter(([name, spec]) => spec.required && (values[name] === undefined || values[name] === '')).map(([name]) => `--${name}`);
  if (missing.length > 0) throw new UsageError(`missing ${missing.join(', ')} (see furnish ${command.name} --help)`);
}

async function runCommand(command: Command, args: readonly string[], io: CliIo): Promise<number> {
  const values = parseOptions(command, args);
  if (values.help === true) {
    io.stdout(commandHelp(command));
    return EXIT.ok;
  }
  checkRequired(command, values);
  return command.run(values, io);
}

function report(err: unknown, prefix: string, io: CliIo): number {
  if (err instanceof CliError) {
    io.stderr(`${prefix}: ${err.message}\n`);
    return err.exitCode;
  }
  // A setting's error (a variable, a configuration file) is the user's to fix: no stack trace.
  if (err instanceof ConfigError) {
    io.stderr(`${prefix}: ${err.message}\n`);
    return EXIT.failed;
  }
  const detail = (err as { stack?: unknown } | null)?.stack;
  io.stderr(`${prefix}: internal error (please report it): ${typeof detail === 'string' ? detail : String(err)}\n`);
  return EXIT.failed;
}

/** The command argv starts with; a name may be several words (`billing report`). */
function findCommand(commands: readonly Command[], argv: readonly string[]): { command: Command; rest: readonly string[] } | undefined {
  const command = commands.find((c) => c.name.split(' ').every((word, i) => argv[i] === word));
  return command && { command, rest: argv.slice(command.name.split(' ').length) };
}

/** Runs `furnish <command> [options]` against a command table and returns the exit code. */
export async function runCli(commands: readonly Command[], argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.stderr(mainHelp(commands));
    return EXIT.usage;
  }
  if (name === '--version' || name === 'version') {
    io.stdout(`furnish ${furnishVersion()}\n`);
    return EXIT.ok;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const [topicName] = rest;
    const topic = findCommand(commands, rest)?.command;
    const group = topicName === undefined ? [] : groupCommands(commands, topicName);
    io.stdout(topic ? commandHelp(topic) : group.length > 0 ? mainHelp(group, topicName) : mainHelp(commands));
    return EXIT.ok;
  }
  const found = findCommand(commands, argv);
  if (!found) {
    // `furnish billing`: a group word alone (or with --help) lists what is under it.
    const group = groupCommands(commands, name);
    const asksHelp = rest.length === 1 && (rest[0] === '--help' || rest[0] === '-h');
    if (group.length > 0 && (rest.length === 0 || asksHelp)) {
      (asksHelp ? io.stdout : io.stderr)(mainHelp(group, name));
      return asksHelp ? EXIT.ok : EXIT.usage;
    }
    io.stderr(`furnish: unknown command "${name}"; commands: ${commands.map((c) => c.name).join(', ')} (see furnish --help)\n`);
    return EXIT.usage;
  }
  const { command } = found;
  try {
    return await runCommand(command, found.rest, io);
  } catch (err) {
    return report(err, `furnish ${command.name}`, io);
  }
}

/** The value of a single string option; `undefined` when absent. */
export function stringOption(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

export function requiredString(values: OptionValues, name: string): string {
  const value = stringOption(values, name);
  if (value === undefined || value === '') throw new UsageError(`missing --${name} (see --help)`);
  return value;
}

/** Every value of a repeatable string option, in order. */
export function repeatedOption(values: OptionValues, name: string): string[] {
  const value = values[name];
  const items = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return items.filter((item): item is string => typeof item === 'string');
}

/** Every item of a repeatable list option, whose values may also be comma-separated. */
export function listOption(values: OptionValues, name: string): string[] {
  return repeatedOption(values, name)
    .flatMap((item) => item.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
