// `furnish validate`: every template checked as the validate-template webhook would check it.
import { CliError, EXIT, type CliIo, type Command, type OptionValues } from './command.ts';
import { loadCheckedTemplates, templatePaths, TEMPLATES_OPTION } from './templates.ts';

function run(values: OptionValues, io: CliIo): number {
  const paths = templatePaths(values);
  const { sources, problems } = loadCheckedTemplates(paths);
  if (problems.length > 0) {
    io.stderr(problems.map((line) => `${line}\n`).join(''));
    io.stderr(`${problems.length} problem${problems.length === 1 ? '' : 's'} found\n`);
    return EXIT.invalid;
  }
  if (sources.length === 0) throw new CliError(`no NamespaceTemplate found in ${paths.join(', ')}`);
  const files = new Set(sources.map((s) => s.file)).size;
  io.stdout(`ok: ${sources.length} NamespaceTemplate${sources.length === 1 ? '' : 's'} valid in ${files} file${files === 1 ? '' : 's'}\n`);
  return EXIT.ok;
}

export const validateCommand: Command = {
  name: 'validate',
  summary: 'Check NamespaceTemplates as the admission webhook would',
  description: [
    'Check every NamespaceTemplate in the files given, printing one line per problem:',
    '  FILE: NamespaceTemplate/NAME: PATH: MESSAGE',
    'Exit 0 when every template is valid, 2 otherwise.',
  ].join('\n'),
  options: {
    templates: TEMPLATES_OPTION,
  },
  run,
};
