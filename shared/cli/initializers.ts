// `furnish render --initializers <file|dir>`: the initializers a namespace would get, from
// NamespaceInitializationConfiguration files (other kinds in the same files are ignored, so a
// directory that also holds their RBAC works), checked as the admission webhook checks them.
import { isInitializationConfiguration, mergeConfigurations, notSelectedReason, selectInitializers, validateInitializationConfiguration } from '../initializers/config.ts';
import { CONFIG_KIND, INITIALIZER_KEY } from '../initializers/keys.ts';
import type { NamespaceInfo } from '../render/types.ts';
import { repeatedOption, type OptionSpec, type OptionValues } from './command.ts';
import { formatLoadProblem, loadObjects } from './load.ts';

export const INITIALIZERS_OPTION: OptionSpec = {
  type: 'string',
  multiple: true,
  value: 'file|dir',
  description: `${CONFIG_KIND} file, or directory read recursively; prints the namespace's initializers on stderr`,
};

export interface InitializerPreview {
  /** Lines for stderr: the list, each initializer left out and why, merge warnings. */
  lines: string[];
  /** Invalid input, one line each (exit 2). */
  problems: string[];
}

/** undefined without --initializers. */
export function previewInitializers(values: OptionValues, ns: NamespaceInfo, optedOut: boolean): InitializerPreview | undefined {
  const paths = repeatedOption(values, 'initializers');
  if (paths.length === 0) return undefined;
  const loaded = loadObjects(paths);
  const sources = loaded.items.filter((s) => isInitializationConfiguration(s.object));
  const problems = [
    ...loaded.problems.map(formatLoadProblem),
    ...sources.flatMap((s) => validateInitializationConfiguration(s.object).map((p) => `${s.file}: ${CONFIG_KIND}/${s.object.metadata.name ?? `(${s.where})`}: ${p.path}: ${p.message}`)),
  ];
  if (problems.length > 0) return { lines: [], problems };
  const merged = mergeConfigurations(sources.map((s) => s.object));
  const selected = selectInitializers(ns.labels, optedOut, merged.initializers);
  const list = selected.length > 0 ? selected.join(',') : '(none: opted out)';
  const lines = [
    `initializers (${INITIALIZER_KEY.initializers}): ${list}`,
    ...(optedOut ? [] : merged.initializers.flatMap((i) => {
      const why = notSelectedReason(i, ns.labels);
      return why ? [`skipped initializer ${i.name} (not-selected): ${why}`] : [];
    })),
    ...merged.warnings.map((w) => `warning: ${w}`),
  ];
  return { lines, problems: [] };
}
