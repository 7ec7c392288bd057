// NamespaceTemplates from files, checked as the admission webhook would check them, each problem
// as one line: `file: NamespaceTemplate/name: path: message`.
import { validateTemplate } from '../render/validate.ts';
import type { ValidationProblem } from '../render/types.ts';
import { repeatedOption, UsageError, type OptionSpec, type OptionValues } from './command.ts';
import { formatLoadProblem, loadTemplates, type SourceTemplate } from './load.ts';

/**
 * `-f/--filename`, as kubectl names the files it reads, shared by every command that reads
 * templates; `--templates` is its earlier name, still accepted.
 */
export const TEMPLATE_FILE_OPTIONS: Readonly<Record<'filename' | 'templates', OptionSpec>> = {
  filename: { type: 'string', multiple: true, short: 'f', value: 'file|dir', description: 'NamespaceTemplate file, or directory read recursively (*.yaml, *.yml, *.json)' },
  templates: { type: 'string', multiple: true, value: 'file|dir', description: 'the same as --filename (its earlier name)' },
};

export function templatePaths(values: OptionValues): string[] {
  const paths = [...repeatedOption(values, 'filename'), ...repeatedOption(values, 'templates')];
  if (paths.length === 0) throw new UsageError('missing -f/--filename (see --help)');
  return paths;
}

export interface CheckedTemplates {
  sources: SourceTemplate[];
  /** One line each, ready to print. */
  problems: string[];
}

/** `NamespaceTemplate/name`, or where it is in its file when it has no usable name. */
export function templateLabel(source: SourceTemplate): string {
  const name = source.template.metadata?.name;
  return typeof name === 'string' && name !== '' ? `NamespaceTemplate/${name}` : `NamespaceTemplate (${source.where})`;
}

export function formatProblem(source: SourceTemplate, problem: ValidationProblem): string {
  return `${source.file}: ${templateLabel(source)}: ${problem.path}: ${problem.message}`;
}

/** Two templates with one name: the API server would keep only one of them. */
function duplicateNameProblems(sources: readonly SourceTemplate[]): string[] {
  const first = new Map<string, SourceTemplate>();
  const problems: string[] = [];
  for (const source of sources) {
    const name = source.template.metadata?.name;
    if (typeof name !== 'string' || name === '') continue;
    const earlier = first.get(name);
    if (earlier) problems.push(formatProblem(source, { path: 'metadata.name', message: `also defined in ${earlier.file} (${earlier.where})` }));
    else first.set(name, source);
  }
  return problems;
}

/** Loads and validates every template under `paths`; `problems` is empty when all are valid. */
export function loadCheckedTemplates(paths: readonly string[]): CheckedTemplates {
  const loaded = loadTemplates(paths);
  const problems = [
    ...loaded.problems.map(formatLoadProblem),
    ...loaded.items.flatMap((source) => validateTemplate(source.template).map((p) => formatProblem(source, p))),
    ...duplicateNameProblems(loaded.items),
  ];
  return { sources: loaded.items, problems };
}
