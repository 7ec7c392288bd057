// How `furnish render` prints what Furnish would apply. The ApplySet parent comes first, as Furnish
// applies it first (KEP-3659: the parent lists the member kinds before the members exist).
//
// YAML: one document per object, each after a comment naming where it comes from.
// JSON: a v1 List that `kubectl apply -f` accepts; an item's template is its furnish.dev/template
// label (the parent has none), so the objects stay exactly what Furnish would apply.
import { stringify } from 'yaml';
import type { KubeObject } from '../kube/types.ts';
import type { RenderResult } from '../render/types.ts';

export const OUTPUT_FORMATS = ['yaml', 'json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function isOutputFormat(value: string): value is OutputFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(value);
}

interface Printed {
  comment: string;
  object: KubeObject;
}

function printedObjects(result: RenderResult): Printed[] {
  return [
    { comment: 'ApplySet parent: the inventory of what Furnish applied in this namespace', object: result.parent },
    ...result.objects.map((o) => ({ comment: `from template: ${o.template}`, object: o.object })),
  ];
}

function toYaml(printed: readonly Printed[]): string {
  // lineWidth 0: never fold long strings; no aliases: every document stands alone.
  return printed.map((p) => `# ${p.comment}\n${stringify(p.object, { lineWidth: 0, aliasDuplicateObjects: false })}`).join('---\n');
}

function toJson(printed: readonly Printed[]): string {
  return `${JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata: {}, items: printed.map((p) => p.object) }, null, 2)}\n`;
}

/** What Furnish would apply; `undefined` (a system or opted-out namespace): nothing, still a valid document in JSON. */
export function formatRendered(result: RenderResult | undefined, format: OutputFormat): string {
  const printed = result ? printedObjects(result) : [];
  return format === 'json' ? toJson(printed) : toYaml(printed);
}
