// `furnish render`: the objects Furnish would apply to a namespace, offline, from template files.
import { creatorIdentityOf } from '../auth/creator.ts';
import { templateUse } from '../auth/template-use.ts';
import { KEY } from '../keys.ts';
import { isOptedOut, isSystemNamespace, matchTemplates } from '../render/match.ts';
import { renderNamespace } from '../render/render.ts';
import type { NamespaceInfo, NamespaceTemplate, SkipReason } from '../render/types.ts';
import { type CliIo, type Command, EXIT, listOption, type OptionValues, requiredString, stringOption, UsageError } from './command.ts';
import type { SourceTemplate } from './load.ts';
import { DEFAULT_CREATOR, namespaceFromFlags } from './namespace.ts';
import { ORGANIZATIONS_OPTION, organizationsOption, resolveOrganization } from './organizations.ts';
import { formatRendered, isOutputFormat, OUTPUT_FORMATS, type OutputFormat } from './output.ts';
import { formatProblem, loadCheckedTemplates, templatePaths, TEMPLATE_FILE_OPTIONS } from './templates.ts';
import { INITIALIZERS_OPTION, previewInitializers } from './initializers.ts';

function outputFormat(values: OptionValues): OutputFormat {
  const format = stringOption(values, 'output') ?? 'yaml';
  if (!isOutputFormat(format)) throw new UsageError(`--output: "${format}" is not one of ${OUTPUT_FORMATS.join(', ')}`);
  return format;
}

/** Offline there is no SubjectAccessReview: the flags say which templates the creator may use. */
function grantedBy(values: OptionValues, sources: readonly SourceTemplate[], io: CliIo): (name: string) => boolean {
  if (values['grant-all'] === true) return () => true;
  const granted = new Set(listOption(values, 'granted'));
  const known = new Set(sources.map((s) => s.template.metadata.name));
  for (const name of granted) if (!known.has(name)) io.stderr(`warning: --granted names "${name}", which is not among the templates\n`);
  return (name) => granted.has(name);
}

/**
 * The one rule of template use (shared/auth/template-use.ts), as admission and the reconciler
 * apply it: the recorded creator's `use`, each check answered by the flags.
 */
function usableBy(ns: NamespaceInfo, templates: readonly NamespaceTemplate[], granted: (name: string) => boolean): (name: string) => boolean {
  const usable = templateUse({ namespace: ns, templates, identity: creatorIdentityOf(ns.annotations) }).filter((u) => 'check' in u && granted(u.template));
  const names = new Set(usable.map((u) => u.template));
  return (name) => names.has(name);
}

function skipLine(skip: SkipReason): string {
  const hint = skip.code === 'permission-required' ? ` (offline: --granted ${skip.template} or --grant-all)` : '';
  return `skipped NamespaceTemplate/${skip.template} (${skip.code}): ${skip.message}${hint}\n`;
}

function run(values: OptionValues, io: CliIo): number {
  const paths = templatePaths(values);
  const format = outputFormat(values);
  const flags = namespaceFromFlags({
    name: requiredString(values, 'namespace'),
    labels: listOption(values, 'labels'),
    annotations: listOption(values, 'annotations'),
    creator: stringOption(values, 'creator'),
    organization: stringOption(values, 'organization'),
  });
  const organizations = organizationsOption(values);
  const resolved = organizations ? resolveOrganization(organizations, flags.ns, flags.ctx) : { ...flags, note: undefined };
  const { ns, ctx } = resolved;
  if (resolved.note) io.stderr(`${resolved.note}\n`);
  const checked = loadCheckedTemplates(paths);
  if (checked.problems.length > 0) {
    io.stderr(checked.problems.map((line) => `${line}\n`).join(''));
    return EXIT.failed;
  }
  const templates = checked.sources.map((s) => s.template);
  const match = matchTemplates(ns, templates, { granted: usableBy(ns, templates, grantedBy(values, checked.sources, io)) });
  io.stderr(match.skipped.map(skipLine).join(''));
  const initializers = previewInitializers(values, ns, isSystemNamespace(ns.name) || isOptedOut(ns));
  io.stderr([...(initializers?.problems ?? []), ...(initializers?.lines ?? [])].map((l) => `${l}\n`).join(''));
  if (initializers?.problems.length) return EXIT.failed;
  // Furnish leaves system and opted-out namespaces alone: not even an ApplySet parent.
  if (isSystemNamespace(ns.name) || isOptedOut(ns)) {
    io.stderr(`nothing to apply: ${isSystemNamespace(ns.name) ? `${ns.name} is a system namespace` : `${ns.name} is opted out (${KEY.optOut})`}\n`);
    io.stdout(formatRendered(undefined, format));
    return EXIT.ok;
  }
  const result = renderNamespace(match.matched, ctx);
  if (result.problems.length > 0) {
    const sourceOf = new Map(checked.sources.map((s) => [s.template.metadata.name, s]));
    io.stderr(result.problems.map((p) => `${formatProblem(sourceOf.get(p.template)!, p)}\n`).join(''));
    return EXIT.failed;
  }
  io.stderr(result.warnings.map((w) => `warning: ${w}\n`).join(''));
  io.stdout(formatRendered(result, format));
  return EXIT.ok;
}

export const renderCommand: Command = {
  name: 'render',
  summary: 'Print the objects Furnish would apply to a namespace',
  description: [
    'Print exactly the objects Furnish would apply to a new namespace: the ApplySet parent first,',
    'then each object of the matching templates (name order, later templates overriding earlier',
    'ones), each after a "# from template: NAME" comment. Skipped templates and warnings go to',
    'stderr. JSON output is a v1 List; each item names its template in label',
    `${KEY.template}. Exit 0 when rendered (a system or opted-out namespace: nothing, an empty List in JSON),`,
    '1 on invalid input or templates, 2 on a wrong command line.',
  ].join('\n'),
  options: {
    ...TEMPLATE_FILE_OPTIONS,
    initializers: INITIALIZERS_OPTION,
    namespace: { type: 'string', short: 'n', required: true, value: 'name', description: 'name of the namespace to render for' },
    labels: { type: 'string', multiple: true, value: 'k=v,...', description: 'labels of the namespace' },
    annotations: { type: 'string', multiple: true, value: 'k=v,...', description: 'annotations of the namespace' },
    creator: { type: 'string', value: 'user', description: `user who creates the namespace: $(CREATOR) (default: annotation ${KEY.creator}, else "${DEFAULT_CREATOR}")` },
    organization: { type: 'string', value: 'org', description: `owning organization: $(ORGANIZATION) (default: label ${KEY.organization}, else "")` },
    organizations: ORGANIZATIONS_OPTION,
    granted: { type: 'string', multiple: true, value: 'name,...', description: 'templates requiring permission that the creator may use (offline there is no SubjectAccessReview)' },
    'grant-all': { type: 'boolean', description: 'the creator may use every template that requires permission' },
    output: { type: 'string', short: 'o', value: 'yaml|json', description: 'output format (default: yaml)' },
  },
  run,
};
