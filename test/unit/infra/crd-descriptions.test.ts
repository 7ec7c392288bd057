// `kubectl explain` describes every field of Furnish's resources: each property of every served
// version's openAPIV3Schema (items of lists and values of maps included) carries a description.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';

const CRDS = join(import.meta.dirname, '..', '..', '..', 'infra', 'crds');

interface Schema {
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
}

/** Paths (as kubectl explain names them) of every property without a description. */
export function undescribed(schema: Schema, path: string): string[] {
  const missing = schema.description?.trim() ? [] : [path];
  const children = [
    ...Object.entries(schema.properties ?? {}).map(([name, child]) => [`${path}.${name}`, child] as const),
    ...(schema.items ? [[`${path}[]`, schema.items] as const] : []),
  ];
  // Items and map values are described by the field that holds them; their own properties still need one each.
  const nested = children.flatMap(([p, child]) => (p.endsWith('[]') ? undescribed(child, p).filter((m) => m !== p) : undescribed(child, p)));
  const values = typeof schema.additionalProperties === 'object' ? undescribed(schema.additionalProperties, `${path}{}`).filter((m) => m !== `${path}{}`) : [];
  return [...missing, ...nested, ...values];
}

const crds = readdirSync(CRDS).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
  .flatMap((file) => parseAllDocuments(readFileSync(join(CRDS, file), 'utf8')).map((d) => ({ file, crd: d.toJS() as { spec: { names: { kind: string }; versions: { name: string; schema: { openAPIV3Schema: Schema } }[] } } })));

describe('CRD field descriptions', () => {
  it('finds the four CRDs', () => {
    expect(crds.map((c) => c.crd.spec.names.kind).sort()).toEqual(['LNamespace', 'NamespaceInitializationConfiguration', 'NamespaceTemplate', 'Organization']);
  });

  for (const { file, crd } of crds) {
    for (const version of crd.spec.versions) {
      it(`${crd.spec.names.kind} ${version.name} (${file}) describes every field`, () => {
        const schema = version.schema.openAPIV3Schema;
        // apiVersion, kind and metadata are described by Kubernetes itself.
        const own = { ...schema, properties: Object.fromEntries(Object.entries(schema.properties ?? {}).filter(([k]) => !['apiVersion', 'kind', 'metadata'].includes(k))) };
        expect(undescribed(own, crd.spec.names.kind.toLowerCase())).toEqual([]);
      });
    }
  }

  it('reports a field without a description, nested in a list', () => {
    expect(undescribed({ description: 'x', properties: { a: { description: 'a', items: { properties: { b: {} } } } } }, 'k')).toEqual(['k.a[].b']);
  });
});
