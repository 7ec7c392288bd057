// `furnish validate`: every template checked as the validate-template webhook would check it.
import { EXIT, UsageError, stringOption, type CliIo, type Command, type OptionValues } from './command.ts';
import { loadCheckedTemplates, templatePaths, TEMPLATE_FILE_OPTIONS } from './templates.ts';

const FORMATS = ['text', 'json'] as const;

function run(values: OptionValues, io: CliIo): number {
  const format = stringOption(values, 'output') ?? 'text';
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--output: "${format}" is not one of ${FORMATS.join(', ')}`);
  const paths = templatePaths(values);
  const { sources, problems } = loadCheckedTemplates(paths);
  // Finding no template at all is a problem too: a wrong path must not pass for a valid one.
  const all = sources.length === 0 && problems.length === 0 ? [`${paths.join(', ')}: no NamespaceTemplate found`] : problems;
  const valid = all.length === 0;
  if (format === 'json') {
    const templates = sources.map((s) => ({ name: s.template.metadata?.name ?? null, file: s.file }));
    io.stdout(`${JSON.stringify({ valid, templates, problems: all }, null, 2)}\n`);
  } else if (valid) {
    const files = new Set(sources.map((s) => s.file)).size;
    io.stdout(`ok: ${sources.length} NamespaceTemplate${sources.length === 1 ? '' : 's'} valid in ${files} file${files === 1 ? '' : 's'}\n`);
  } else {
    io.stderr(all.map((line) => `${line}\n`).join(''));
    io.stderr(`${all.length} problem${all.length === 1 ? '' : 's'} found\n`);
  }
  return valid ? EXIT.ok : EXIT.failed;
}

export const validateCommand: Command = {
  name: 'validate',
  summary: 'Check NamespaceTemplates as the admission webhook would',
  description: [
    'Check every NamespaceTemplate in the files given, printing one line per problem:',
    '  FILE: NamespaceTemplate/NAME: PATH: MESSAGE',
    'With -o json: { valid, templates: [{ name, file }], problems: [line, ...] } on stdout.',
    'Exit 0 when every template is valid, 1 when any is not (or none was found), 2 on a wrong command line.',
  ].join('\n'),
  options: {
    ...TEMPLATE_FILE_OPTIONS,
    output: { type: 'string', short: 'o', value: FORMATS.join('|'), description: 'text (default) or json' },
  },
  run,
};
