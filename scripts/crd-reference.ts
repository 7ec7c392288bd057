// `npm run crds:docs`: writes docs/reference/crds.md from the CRDs in infra/crds (names, printer
// columns, and every schema field with its type and description), so the reference says what the
// API server serves; test/unit/docs/crd-reference.test.ts fails while the file and the CRDs differ.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const ROOT = join(import.meta.dirname, '..');
export const CRD_REFERENCE = join(ROOT, 'docs', 'reference', 'crds.md');

interface Schema {
  type?: string;
  description?: string;
  enum?: unknown[];
  default?: unknown;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
}
interface Crd {
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; shortNames?: string[] };
    versions: { name: string; additionalPrinterColumns?: { name: string; jsonPath: string }[]; schema: { openAPIV3Schema: Schema } }[];
  };
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ').replace(/</g, '&lt;');

function typeOf(s: Schema): string {
  if (s.type === 'array') return `[]${s.items ? typeOf(s.items) : 'any'}`;
  if (s.type === 'object' && typeof s.additionalProperties === 'object') return `map[string]${typeOf(s.additionalProperties)}`;
  return s.type ?? 'any';
}

/** One row per field below `path`, depth first; apiVersion, kind and metadata are left to Kubernetes' own reference. */
function fieldRows(s: Schema, path: string): string[] {
  const below = s.type === 'array' ? s.items : s;
  const prefix = s.type === 'array' ? `${path}[]` : path;
  return Object.entries(below?.properties ?? {}).flatMap(([name, field]) => {
    if (!path && ['apiVersion', 'kind', 'metadata'].includes(name)) return [];
    const at = prefix ? `${prefix}.${name}` : name;
    const notes = [
      below?.required?.includes(name) ? 'required' : '',
      field.enum ? `one of ${field.enum.map((v) => `\`${String(v)}\``).join(', ')}` : '',
      field.default !== undefined ? `default \`${JSON.stringify(field.default)}\`` : '',
    ].filter(Boolean).join('; ');
    const row = `| \`${at}\` | ${typeOf(field)} | ${cell([field.description ?? '', notes ? `(${notes})` : ''].filter(Boolean).join(' '))} |`;
    return [row, ...fieldRows(field, at)];
  });
}

function crdSection(crd: Crd): string[] {
  const { names, group, scope, versions } = crd.spec;
  return versions.flatMap((v) => {
    const schema = v.schema.openAPIV3Schema;
    const columns = (v.additionalPrinterColumns ?? []).map((c) => `${c.name.toUpperCase()} (\`${c.jsonPath}\`)`).join(', ');
    return [
      `## ${names.kind}`,
      '',
      `\`${group}/${v.name}\`, ${scope === 'Cluster' ? 'cluster-scoped' : 'namespaced'}; \`kubectl get ${names.plural}\`${names.shortNames?.length ? ` (short name ${names.shortNames.map((n) => `\`${n}\``).join(', ')})` : ''}${columns ? ` prints ${columns}` : ''}.`,
      '',
      schema.description ?? '',
      '',
      '| field | type | |',
      '|---|---|---|',
      ...fieldRows(schema, ''),
      '',
    ];
  });
}

/** The reference, one section per CRD in file name order. */
export function crdReference(): string {
  const dir = join(ROOT, 'infra', 'crds');
  const crds = readdirSync(dir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort()
    .map((f) => parse(readFileSync(join(dir, f), 'utf8')) as Crd);
  return [
    '# Custom resources',
    '',
    '<!-- generated from infra/crds by `npm run crds:docs`; do not edit -->',
    'Every field of Furnish\'s custom resources, as their CRDs (`infra/crds/`) declare them; `kubectl explain <kind>.spec` prints the same descriptions. How to use them: [the guide](../guide/README.md).',
    '',
    ...crds.flatMap(crdSection),
  ].join('\n');
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  writeFileSync(CRD_REFERENCE, crdReference());
  console.log('docs/reference/crds.md: written');
}
