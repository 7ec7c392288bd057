// infra/crds/organizations.yaml: the contract kubectl users see (short name, columns, explain).
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const crd = parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'infra', 'crds', 'organizations.yaml'), 'utf8'));
const version = crd.spec.versions[0];

type Schema = { type?: string; description?: string; properties?: Record<string, Schema>; items?: Schema };

/** Paths of schema properties without a description (kubectl explain would show nothing). */
function undescribed(schema: Schema, path: string): string[] {
  const own = schema.description || ['apiVersion', 'kind', 'metadata', 'conditions'].some((k) => path.endsWith(`.${k}`)) ? [] : [path];
  const children = Object.entries(schema.properties ?? {}).flatMap(([k, s]) => undescribed(s, `${path}.${k}`));
  return [...own, ...children, ...(schema.items?.properties ? undescribed({ ...schema.items, description: 'items' }, `${path}[]`) : [])];
}

function keysWithSpaces(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => keysWithSpaces(v, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => [...(k.includes(' ') ? [`${path}.${k}`] : []), ...keysWithSpaces(v, `${path}.${k}`)]);
}

describe('Organization CRD', () => {
  it('is cluster-scoped furnish.dev/v1alpha1 with short name org and a status subresource', () => {
    expect(crd.spec).toMatchObject({ group: 'furnish.dev', scope: 'Cluster', names: { kind: 'Organization', plural: 'organizations', shortNames: ['org'] } });
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
  });

  it('prints namespaces used and quota', () => {
    expect(version.additionalPrinterColumns.map((c: { name: string; jsonPath: string }) => [c.name, c.jsonPath])).toEqual([
      ['Namespaces', '.status.namespaces'], ['Quota', '.spec.namespaceQuota'], ['Age', '.metadata.creationTimestamp'],
    ]);
  });

  it('describes every field for kubectl explain', () => {
    expect(undescribed(version.schema.openAPIV3Schema, '')).toEqual([]);
  });

  it('has no key with a space (an unquoted comma in a YAML flow mapping splits a description into keys)', () => {
    expect(keysWithSpaces(crd)).toEqual([]);
  });
});
