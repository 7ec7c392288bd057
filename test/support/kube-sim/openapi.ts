// OpenAPI, as much as kubectl 1.32 needs. kubectl's default validation (`--validate=strict`) first
// reads /openapi/v3 and the document of the object's group-version: when the PATCH operation of
// the kind lists the `fieldValidation` query parameter, kubectl leaves validation to the server
// (`?fieldValidation=Strict`) and never downloads /openapi/v2. Client-side `kubectl apply` reads
// the same documents for patch strategies and falls back to its compiled-in types.
//
// So kube-sim publishes, per group-version, the paths of every kind with their parameters and
// `x-kubernetes-group-version-kind`, and the component schema of each kind: the CRD's
// openAPIV3Schema for custom kinds, an open object for built-in ones. /openapi/v2 is not served.
// Group-versions whose exact schemas clients check (kubectl validates a SubjectAccessReview
// against authorization.k8s.io/v1) are served as a real kube-apiserver 1.26 served them.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
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

export function openApiV2(_sim: Sim, _accept: string | undefined): never {
  throw pathNotFound();
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


