// OpenAPI, as much as kubectl 1.32 needs. kubectl's default validation (`--validate=strict`) first
// reads /openapi/v3 and the document of the object's group-version: when the PATCH operation of
// the kind lists the `fieldValidation` query parameter, kubectl leaves validation to the server
// (`?fieldValidation=Strict`) and never downloads /openapi/v2. Client-side `kubectl apply` reads
// the same documents for patch strategies and falls back to its compiled-in types.
//
// So kube-sim publishes, per group-version, the paths of every kind with their parameters and
// `x-kubernetes-group-version-kind`, and the component schema of each kind: the CRD's
// openAPIV3Schema for custom kinds, an open object for built-in ones. /openapi/v2 holds only the
// definitions of captured group-versions (for the reviews: see openApiV2).
// Group-versions whose exact schemas clients check (kubectl validates a SubjectAccessReview
// against authorization.k8s.io/v1) are served as a real kube-apiserver 1.26 served them.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { pathNotFound } from './errors.ts';
import type { ResourceType } from './resources.ts';
import type { Sim } from './sim.ts';

function groupVersionPath(t: ResourceType): string {
  return t.group ? `apis/${t.group}/${t.version}` : `api/${t.version}`;
}

/** kubectl caches documents by the hash in serverRelativeURL: it must change when the document does. */
function documentHash(doc: unknown): string {
  return createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 128).toUpperCase();
}

export function openApiV3Root(sim: Sim): Record<string, unknown> {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const gv of new Set(sim.registry.all().map(groupVersionPath))) {
    paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}?hash=${documentHash(groupVersionDocument(sim, gv))}` };
  }
  return { paths };
}

export function openApiV3Document(sim: Sim, gv: string): Record<string, unknown> {
  if (!sim.registry.all().some((t) => groupVersionPath(t) === gv)) throw pathNotFound();
  return groupVersionDocument(sim, gv);
}

/**
 * /openapi/v2, as small as kubectl needs it: the definitions of the group-versions served from
 * captured documents (authorization.k8s.io/v1), no paths. kubectl falls back to it for kinds whose
 * v3 document has no PATCH operation (the reviews): finding no PATCH there either, it validates the
 * object client-side against these definitions (an unknown field in a SubjectAccessReview is
 * refused by kubectl, as against a real server). kubectl asks for the gnostic protobuf encoding;
 * other clients get JSON. Written to `res` directly: the body is not JSON.
 */
export function openApiV2(sim: Sim, accept: string | undefined, res: ServerResponse): void {
  const definitions = Object.fromEntries(Object.keys(CAPTURED).flatMap((gv) => Object.entries(componentsOf(capturedDocument(gv)!)))
    .map(([name, schema]) => [name, v2Schema(schema)]));
  const doc = { swagger: '2.0', info: { title: 'Kubernetes', version: sim.options.gitVersion }, paths: {}, definitions };
  const protobuf = (accept ?? '').includes('application/com.github.proto-openapi.spec.v2');
  const body = protobuf ? encodeDocument(doc) : Buffer.from(JSON.stringify(doc));
  res.writeHead(200, {
    'Content-Type': protobuf ? 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf' : 'application/json',
    'Content-Length': body.length, 'Cache-Control': 'no-cache, private',
  });
  res.end(body);
}

type JsonSchema = Record<string, unknown>;

function componentsOf(doc: Record<string, unknown>): Record<string, JsonSchema> {
  return ((doc.components as { schemas?: Record<string, JsonSchema> } | undefined)?.schemas) ?? {};
}

/** A v3 component schema in v2 form: `#/definitions/` references, `allOf: [{$ref}]` as the reference itself. */
function v2Schema(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'allOf' && Array.isArray(value) && value.length === 1 && typeof (value[0] as JsonSchema).$ref === 'string') out.$ref = (value[0] as JsonSchema).$ref;
    else if (key === 'properties') out.properties = Object.fromEntries(Object.entries(value as Record<string, JsonSchema>).map(([k, v]) => [k, v2Schema(v)]));
    else if ((key === 'items' || key === 'additionalProperties') && typeof value === 'object' && value !== null) out[key] = v2Schema(value as JsonSchema);
    else if (key !== 'default') out[key] = value;
  }
  if (typeof out.$ref === 'string') out.$ref = out.$ref.replace('#/components/schemas/', '#/definitions/');
  return out;
}

// --- the gnostic openapi_v2.Document protobuf (the fields written here only) -----------------

function varint(n: number): Buffer {
  const bytes: number[] = [];
  let v = n;
  while (v > 0x7f) {
    bytes.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
  return Buffer.from(bytes);
}

const bytesField = (field: number, value: Buffer): Buffer => Buffer.concat([varint((field << 3) | 2), varint(value.length), value]);
const stringField = (field: number, value: string): Buffer => bytesField(field, Buffer.from(value, 'utf8'));
const boolField = (field: number, value: boolean): Buffer => Buffer.concat([varint(field << 3), varint(value ? 1 : 0)]);
const named = (name: string, value: Buffer): Buffer => Buffer.concat([stringField(1, name), bytesField(2, value)]);

function encodeSchema(schema: JsonSchema): Buffer {
  const parts: Buffer[] = [];
  if (typeof schema.$ref === 'string') parts.push(stringField(1, schema.$ref));
  if (typeof schema.format === 'string') parts.push(stringField(2, schema.format));
  if (typeof schema.description === 'string') parts.push(stringField(4, schema.description));
  for (const name of (schema.required as string[] | undefined) ?? []) parts.push(stringField(19, name));
  const additional = schema.additionalProperties;
  if (typeof additional === 'boolean') parts.push(bytesField(21, boolField(2, additional)));
  else if (additional && typeof additional === 'object') parts.push(bytesField(21, bytesField(1, encodeSchema(additional as JsonSchema))));
  if (typeof schema.type === 'string') parts.push(bytesField(22, stringField(1, schema.type)));
  if (schema.items && typeof schema.items === 'object') parts.push(bytesField(23, bytesField(1, encodeSchema(schema.items as JsonSchema))));
  if (schema.properties) {
    const properties = Object.entries(schema.properties as Record<string, JsonSchema>).map(([name, s]) => bytesField(1, named(name, encodeSchema(s))));
    parts.push(bytesField(25, Buffer.concat(properties)));
  }
  for (const [name, value] of Object.entries(schema)) {
    if (name.startsWith('x-')) parts.push(bytesField(31, named(name, stringField(2, JSON.stringify(value)))));
  }
  return Buffer.concat(parts);
}

function encodeDocument(doc: { swagger: string; info: { title: string; version: string }; definitions: Record<string, JsonSchema> }): Buffer {
  const definitions = Object.entries(doc.definitions).map(([name, schema]) => bytesField(1, named(name, encodeSchema(schema))));
  return Buffer.concat([
    stringField(1, doc.swagger),
    bytesField(2, Buffer.concat([stringField(1, doc.info.title), stringField(2, doc.info.version)])),
    bytesField(8, Buffer.alloc(0)),
    bytesField(9, Buffer.concat(definitions)),
  ]);
}

function schemaName(t: ResourceType): string {
  const group = t.group ? t.group.split('.').reverse().join('.') : 'io.k8s.api.core';
  return `${group}.${t.version}.${t.kind}`;
}

const query = (name: string, type = 'string'): Record<string, unknown> => ({ name, in: 'query', schema: { type, uniqueItems: true } });
const WRITE_PARAMETERS = [query('dryRun'), query('fieldManager'), query('fieldValidation')];

function operation(t: ResourceType, action: string, parameters: unknown[]): Record<string, unknown> {
  const ref = { $ref: `#/components/schemas/${schemaName(t)}` };
  return {
    operationId: `${action}${t.kind}`,
    parameters,
    responses: { 200: { description: 'OK', content: { 'application/json': { schema: ref } } } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: t.group, version: t.version, kind: t.kind },
  };
}

function pathsOf(t: ResourceType): Record<string, unknown> {
  const base = `/${groupVersionPath(t)}${t.namespaced ? '/namespaces/{namespace}' : ''}/${t.plural}`;
  const paths: Record<string, unknown> = {
    [base]: { get: operation(t, 'list', []), post: operation(t, 'post', WRITE_PARAMETERS) },
    [`${base}/{name}`]: {
      get: operation(t, 'get', []),
      put: operation(t, 'put', WRITE_PARAMETERS),
      patch: operation(t, 'patch', [...WRITE_PARAMETERS, query('force', 'boolean')]),
      delete: operation(t, 'delete', [query('dryRun')]),
    },
  };
  if (t.statusSubresource) {
    paths[`${base}/{name}/status`] = { get: operation(t, 'get', []), put: operation(t, 'put', WRITE_PARAMETERS), patch: operation(t, 'patch', WRITE_PARAMETERS) };
  }
  return paths;
}

function componentSchema(t: ResourceType): Record<string, unknown> {
  const own = (t.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) as Record<string, unknown>;
  return { ...own, 'x-kubernetes-group-version-kind': [{ group: t.group, version: t.version, kind: t.kind }] };
}

const CAPTURED: Record<string, string> = { 'apis/authorization.k8s.io/v1': 'openapi-v3-authorization.http' };
const captured = new Map<string, Record<string, unknown>>();

/** The body of a document captured from kube-apiserver 1.26 (test/fixtures), read once. */
function capturedDocument(gv: string): Record<string, unknown> | undefined {
  const file = CAPTURED[gv];
  if (!file) return undefined;
  let doc = captured.get(gv);
  if (!doc) {
    const text = readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'kube-apiserver-1.26', 'api', file), 'utf8');
    doc = JSON.parse(text.slice(text.search(/\r?\n\r?\n/)).trim()) as Record<string, unknown>;
    captured.set(gv, doc);
  }
  return doc;
}

function groupVersionDocument(sim: Sim, gv: string): Record<string, unknown> {
  const real = capturedDocument(gv);
  if (real) return real;
  const types = sim.registry.all().filter((t) => groupVersionPath(t) === gv && t.verbs.includes('patch'));
  const schemas = Object.fromEntries(types.map((t) => [schemaName(t), componentSchema(t)]));
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: sim.options.gitVersion },
    paths: Object.assign({}, ...types.map(pathsOf)) as Record<string, unknown>,
    components: { schemas },
  };
}


