// CustomResourceDefinitions: turning one into a served kind, reporting it Established, and the
// structural-schema work kube-apiserver does on every custom object (pruning unknown fields,
// applying defaults, checking types, enums and required fields).
import type { KubeObject } from '../../../shared/kube/types.ts';
import { invalid, type FieldError } from './errors.ts';
import { isObject } from './fieldsets.ts';
import { tableSchema, type ListSemantics, type MergeSchema, type ResourceType } from './resources.ts';

export interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  maxItems?: number;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
}

interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  schema?: { openAPIV3Schema?: Schema };
  subresources?: { status?: unknown };
  additionalPrinterColumns?: ResourceType['printerColumns'];
}

interface CrdSpec {
  group: string;
  scope: 'Namespaced' | 'Cluster';
  names: { kind: string; listKind?: string; plural: string; singular?: string; shortNames?: string[]; categories?: string[] };
  versions: CrdVersion[];
}

/** The schema node at a path of field names (`[]` for list items). */
function nodeAt(root: Schema | undefined, path: string[]): Schema | undefined {
  let node = root;
  for (const part of path) {
    if (!node) return undefined;
    if (part === '[]') node = node.items;
    else node = node.properties?.[part] ?? (isObject(node.additionalProperties) ? node.additionalProperties as Schema : undefined);
  }
  return node;
}

function schemaMerge(root: Schema | undefined): MergeSchema {
  const metadata = tableSchema('');
  return {
    list(path): ListSemantics {
      if (path[0] === 'metadata') return metadata.list(path);
      const node = nodeAt(root, path);
      const listType = node?.['x-kubernetes-list-type'];
      if (listType === 'map') return { type: 'map', keys: node?.['x-kubernetes-list-map-keys'] ?? [] };
      if (listType === 'set') return { type: 'set' };
      return { type: 'atomic' };
    },
    atomicMap: (path) => nodeAt(root, path)?.['x-kubernetes-map-type'] === 'atomic',
    typed: false,
  };
}

/** The served kind of a CRD: its storage version (kube-sim serves one version per CRD). */
export function resourceTypeFromCrd(crd: KubeObject): ResourceType | undefined {
  const spec = crd.spec as CrdSpec | undefined;
  if (!spec?.group || !spec.names?.plural || !spec.names.kind) return undefined;
  const version = spec.versions?.find((v) => v.storage) ?? spec.versions?.find((v) => v.served !== false);
  if (!version) return undefined;
  const schema = version.schema?.openAPIV3Schema;
  return {
    group: spec.group,
    version: version.name,
    kind: spec.names.kind,
    listKind: spec.names.listKind ?? `${spec.names.kind}List`,
    plural: spec.names.plural,
    singular: spec.names.singular ?? spec.names.kind.toLowerCase(),
    namespaced: spec.scope !== 'Cluster',
    shortNames: spec.names.shortNames ?? [],
    ...(spec.names.categories ? { categories: spec.names.categories } : {}),
    statusSubresource: Boolean(version.subresources?.status),
    generation: true,
    strategicMerge: false,
    merge: schemaMerge(schema),
    // The order kube-apiserver lists a custom kind's verbs in.
    verbs: ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'],
    crdName: crd.metadata.name!,
    ...(schema ? { openAPIV3Schema: schema as Record<string, unknown> } : {}),
    ...(version.additionalPrinterColumns ? { printerColumns: version.additionalPrinterColumns } : {}),
  };
}

/** The status a CRD reaches as soon as the API server serves it. */
export function establishedStatus(crd: KubeObject): Record<string, unknown> {
  const spec = crd.spec as CrdSpec;
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const condition = (type: string, reason: string, message: string): Record<string, string> => ({ type, status: 'True', lastTransitionTime: now, reason, message });
  return {
    acceptedNames: { ...spec.names, listKind: spec.names.listKind ?? `${spec.names.kind}List`, singular: spec.names.singular ?? spec.names.kind.toLowerCase() },
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
      condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
    ],
    storedVersions: (spec.versions ?? []).filter((v) => v.storage).map((v) => v.name),
  };
}

export function validateCrd(crd: KubeObject): void {
  const spec = crd.spec as CrdSpec | undefined;
  const expected = `${spec?.names?.plural}.${spec?.group}`;
  if (crd.metadata.name !== expected) {
    throw invalid('apiextensions.k8s.io', 'CustomResourceDefinition', crd.metadata.name ?? '', [
      { type: 'FieldValueInvalid', field: 'metadata.name', detail: `must be spec.names.plural+"."+spec.group`, value: crd.metadata.name },
    ]);
  }
}

// --- structural schema: prune, default, validate ------------------------------------------

function typeMatches(schema: Schema, value: unknown): boolean {
  if (value === null) return Boolean(schema.nullable);
  if (schema['x-kubernetes-int-or-string']) return typeof value === 'string' || Number.isInteger(value);
  switch (schema.type) {
    case 'object': return isObject(value);
    case 'array': return Array.isArray(value);
    case 'string': return typeof value === 'string';
    case 'integer': return Number.isInteger(value);
    case 'number': return typeof value === 'number';
    case 'boolean': return typeof value === 'boolean';
    default: return true;
  }
}

const TYPE_NAMES: Record<string, string> = { object: 'object', array: 'array', string: 'string', integer: 'integer', number: 'number', boolean: 'boolean' };

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (Number.isInteger(value)) return 'integer';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** Walks value against schema: drops unknown fields, fills defaults, collects field errors. */
function walk(schema: Schema, value: unknown, path: string, errors: FieldError[]): unknown {
  if (!typeMatches(schema, value)) {
    errors.push({ type: 'FieldValueTypeInvalid', field: path, detail: `must be of type ${TYPE_NAMES[schema.type ?? ''] ?? schema.type}`, value: describe(value) });
    return value;
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    errors.push({ type: 'FieldValueNotSupported', field: path, detail: `supported values: ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`, value });
  }
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
      errors.push({ type: 'FieldValueInvalid', field: path, detail: `must have at most ${schema.maxItems} items`, value: describe(value) });
    }
    return schema.items ? value.map((item, i) => walk(schema.items!, item, `${path}[${i}]`, errors)) : value;
  }
  if (!isObject(value)) return value;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true || schema['x-kubernetes-embedded-resource'] === true;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const childSchema = schema.properties?.[key] ?? (isObject(schema.additionalProperties) ? schema.additionalProperties as Schema : undefined);
    if (childSchema) out[key] = walk(childSchema, child, path ? `${path}.${key}` : key, errors);
    else if (preserve || schema.additionalProperties === true || (!schema.properties && schema.type === undefined)) out[key] = child;
  }
  for (const [key, childSchema] of Object.entries(schema.properties ?? {})) {
    if (out[key] === undefined && childSchema.default !== undefined) out[key] = structuredClone(childSchema.default);
  }
  for (const key of schema.required ?? []) {
    if (out[key] === undefined) errors.push({ type: 'FieldValueRequired', field: path ? `${path}.${key}` : key, detail: '' });
  }
  return out;
}

/** Prunes, defaults and validates a custom object in place of kube-apiserver's structural schema. */
export function applySchema(type: ResourceType, obj: KubeObject): KubeObject {
  const schema = type.openAPIV3Schema as Schema | undefined;
  if (!schema) return obj;
  const errors: FieldError[] = [];
  const { apiVersion, kind, metadata, ...rest } = obj;
  const bodySchema: Schema = { ...schema, properties: { ...schema.properties } };
  delete bodySchema.properties!.apiVersion;
  delete bodySchema.properties!.kind;
  delete bodySchema.properties!.metadata;
  bodySchema.required = (schema.required ?? []).filter((r) => !['apiVersion', 'kind', 'metadata'].includes(r));
  const body = walk(bodySchema, rest, '', errors) as Record<string, unknown>;
  if (errors.length > 0) throw invalid(type.group, type.kind, metadata.name ?? '', errors);
  return { apiVersion, kind, metadata, ...body };
}
