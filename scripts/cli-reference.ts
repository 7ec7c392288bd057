// `npm run cli:docs`: writes docs/reference/cli.md from the CLI's own `--help` texts (shared/cli),
// so the reference says what `furnish <command> --help` says; test/unit/cli/reference.test.ts
// fails while the file and the help differ.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandHelp, mainHelp } from '../shared/cli/command.ts';
import { COMMANDS } from '../shared/cli/commands.ts';

export const CLI_REFERENCE = join(import.meta.dirname, '..', 'docs', 'reference', 'cli.md');

const fenced = (text: string) => `\`\`\`text\n${text.trimEnd()}\n\`\`\``;

/** The reference: `furnish --help`, then each command's `--help`, in the order `--help` lists them. */
export function cliReference(): string {
  return [
    '# `furnish` command reference',
    '',
    '<!-- generated from shared/cli by `npm run cli:docs`; do not edit -->',
    'Each section is the output of `furnish ... --help`. How to use the commands: [the CLI guide](../guide/cli.md).',
    '',
    '## furnish',
    '',
    fenced(mainHelp(COMMANDS)),
    ...COMMANDS.flatMap((c) => ['', `## furnish ${c.name}`, '', fenced(commandHelp(c))]),
    '',
  ].join('\n');
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  writeFileSync(CLI_REFERENCE, cliReference());
  console.log('docs/reference/cli.md: written');
}
