// The HTTP layer, in kube-apiserver's filter order: authentication → impersonation → request
// info → (fault injection) → RBAC authorization → handler; every answer JSON, every failure a
// Status, every resource request recorded in the request log.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import type { Authenticated, Authenticator } from './authn.ts';
import type { Controllers } from './controllers.ts';
import { coreVersions, group, groupList, resourceList, versionInfo } from './discovery.ts';
import { ApiError, badRequest, forbidden, fromCode, internalError, methodNotSupported, nonResourceForbidden, pathNotFound } from './errors.ts';
import type { Fault, Faults, RequestLog } from './observability.ts';
import { openApiV2, openApiV3Document, openApiV3Root } from './openapi.ts';
import {
  createObject, deleteCollection, deleteObject, getObject, listObjects, managerOf, patchObject, updateObject, type ApiReply, type ApiRequest,
} from './operations.ts';
import { REVIEW_KINDS, groupResource, type ResourceType } from './resources.ts';
import { decodeProtobufObject, isProtobuf } from './protobuf.ts';
import { handleReview } from './reviews.ts';
import { scaleObject } from './operations/scale.ts';
import { admissionAttributes, dryRunOf, requestOptions } from './operations/request.ts';
import { admitMutating, admitValidating } from './admission.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { Sim } from './sim.ts';
import { serveWatch } from './watch.ts';

export interface ServerParts {
  sim: Sim;
  authenticator: Authenticator;
  controllers: Controllers;
  log: RequestLog;
  faults: Faults;
}

interface RequestInfo {
  verb: string;
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const HEALTH_PATHS = new Set(['/healthz', '/livez', '/readyz']);
const MAX_BODY_BYTES = 3 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) reject(fromCode(413, 'Request entity too large: limit is 3145728'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseBody(raw: Buffer, contentType: string): unknown {
  if (raw.length === 0) return undefined;
  if (isProtobuf(contentType)) return decodeProtobufObject(raw);
  const text = raw.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return /yaml/.test(contentType) ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    throw badRequest(`error decoding request body: ${(error as Error).message.split('\n')[0]}`);
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, warnings: string[] = []): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Audit-Id': randomUUID(),
    'Cache-Control': 'no-cache, private',
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
    ...(warnings.length > 0 ? { Warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(', ') } : {}),
  });
  res.end(text);
}

function sendError(res: ServerResponse, error: unknown): number {
  const apiError = error instanceof ApiError ? error : internalError((error as Error)?.message ?? String(error));
  if (!(error instanceof ApiError)) process.stderr.write(`kube-sim: ${(error as Error)?.stack ?? String(error)}\n`);
  send(res, apiError.code, apiError.status, apiError.headers);
  return apiError.code;
}

/** Like the RequestInfoFactory: which kind, namespace, name and subresource a path names. */
function resourceRequestInfo(sim: Sim, method: string, segments: string[], query: URLSearchParams): RequestInfo | undefined {
  let rest: string[];
  let groupName = '';
  let version: string;
  if (segments[0] === 'api' && segments.length >= 3) {
    version = segments[1]!;
    rest = segments.slice(2);
  } else if (segments[0] === 'apis' && segments.length >= 4) {
    groupName = segments[1]!;
    version = segments[2]!;
    rest = segments.slice(3);
  } else {
    return undefined;
  }
  let watch = query.get('watch') === 'true' || query.get('watch') === '1';
  if (rest[0] === 'watch') {
    watch = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
  }
  const [resource, name, subresource, ...extra] = rest;
  if (!resource || extra.length > 0) throw pathNotFound();
  const type = sim.registry.get(groupName, version, resource);
  if (!type) throw pathNotFound();
  // namespaces/finalize exists like the real server's (an update that keeps metadata and spec changes).
  const finalize = subresource === 'finalize' && type.kind === 'Namespace' && type.group === '';
  const scale = subresource === 'scale' && type.scaleSubresource === true;
  if (subresource && !(subresource === 'status' && type.statusSubresource) && !finalize && !scale && !isTokenRequest(type, subresource)) throw pathNotFound();
  if (!type.namespaced) namespace = undefined;
  if (type.namespaced && name && !namespace) throw pathNotFound();
  const verb = verbOf(method, name !== undefined, watch);
  return { verb, type, ...(namespace ? { namespace } : {}), ...(name ? { name } : {}), ...(subresource ? { subresource } : {}) };
}

/** The CREATE of serviceaccounts/token, its object the TokenRequest: admitted (mutating, then validating) as kube-apiserver admits it, then issued (tokens.ts). */
async function requestToken(sim: Sim, request: ApiRequest, manager: string): Promise<ApiReply> {
  const warnings: string[] = [];
  const env = sim.admissionEnvironment(warnings);
  const attributes = (object: KubeObject) => ({ ...admissionAttributes(request, 'CREATE', object, null, requestOptions('CreateOptions', request), dryRunOf(request)), kind: TOKEN_REQUEST_KIND });
  const body = request.body as { spec?: unknown } | undefined;
  const sent = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: { name: request.name, namespace: request.namespace }, ...(body && typeof body === 'object' ? { spec: body.spec } : {}) } as KubeObject;
  const mutated = (await admitMutating(attributes(sent), env)) ?? sent;
  const issued = await sim.serviceAccountTokens.request(request.namespace!, request.name!, mutated, manager, (tokenRequest) => admitValidating(attributes(tokenRequest), env));
  return { ...issued, warnings };
}

const TOKEN_REQUEST_KIND = { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' };

/** serviceaccounts/token: the TokenRequest API (tokens.ts). */
function isTokenRequest(type: ResourceType, subresource: string | undefined): boolean {
  return subresource === 'token' && type.kind === 'ServiceAccount' && type.group === '';
}

function verbOf(method: string, named: boolean, watch: boolean): string {
  switch (method) {
    case 'GET': case 'HEAD': return watch ? 'watch' : named ? 'get' : 'list';
    case 'POST': return 'create';
    case 'PUT': return 'update';
    case 'PATCH': return 'patch';
    case 'DELETE': return named ? 'delete' : 'deletecollection';
    default: return method.toLowerCase();
  }
}

function forbiddenMessage(user: Authenticated, info: RequestInfo): string {
  const resource = info.subresource ? `${info.type.plural}/${info.subresource}` : info.type.plural;
  const scope = info.namespace ? `in the namespace "${info.namespace}"` : 'at the cluster scope';
  return `User "${user.username}" cannot ${info.verb} resource "${resource}" in API group "${info.type.group}" ${scope}`;
}

export class ApiServer {
  private readonly parts: ServerParts;
  private host = '127.0.0.1';
  /** Requests being served (watches only while they open): what `maxInflight` faults compare with. */
  private inflight = 0;

  constructor(parts: ServerParts) {
    this.parts = parts;
  }

  setHost(host: string): void {
    this.host = host;
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    void this.serve(req, res).catch((error: unknown) => sendError(res, error));
  };

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://kube-sim');
    const method = req.method ?? 'GET';
    if (HEALTH_PATHS.has(url.pathname)) return send(res, 200, 'ok');
    const raw = method === 'GET' ? Buffer.alloc(0) : await readBody(req);
    const { sim, authenticator } = this.parts;
    const authenticated = await authenticator.authenticate(req.headers);
    const user = authenticator.impersonate(authenticated, req.headers, (requester, resource, name, namespace) => sim.rbac.authorize({
      user: requester, verb: 'impersonate', resourceRequest: true, apiGroup: resource === 'uids' ? 'authentication.k8s.io' : '',
      resource, name, ...(namespace ? { namespace } : {}),
    }).allowed);
    // Like Go's net/http, which kube-apiserver reads paths through: segments are percent-decoded
    // (`clusterroles/furnish%3Aview` names `furnish:view`).
    const segments = url.pathname.split('/').filter((s) => s !== '').map(decodeSegment);
    const info = resourceRequestInfo(sim, method, segments, url.searchParams);
    if (!info) return this.serveNonResource(url.pathname, method, user, req, res);
    const request: ApiRequest = {
      ...info,
      query: url.searchParams,
      body: parseBody(raw, req.headers['content-type'] ?? ''),
      contentType: req.headers['content-type'] ?? '',
      accept: req.headers.accept ?? '',
      user,
      userAgent: req.headers['user-agent'] ?? '',
    };
    await this.serveResource(request, res);
  }

  private async serveResource(request: ApiRequest, res: ServerResponse): Promise<void> {
    const resource = request.subresource ? `${request.type.plural}/${request.subresource}` : request.type.plural;
    const entry = {
      verb: request.verb, resource, user: request.user.username, userAgent: request.userAgent, status: 0, dryRun: request.query.getAll('dryRun').length > 0,
      ...(request.namespace ? { namespace: request.namespace } : {}), ...(request.name ? { name: request.name } : {}),
    };
    this.parts.log.add(entry);
    this.inflight += 1;
    try {
      const faults = this.parts.faults.take({ verb: request.verb, resource, ...(request.namespace ? { namespace: request.namespace } : {}) });
      if (request.verb !== 'watch') rejectOverSeats(faults, this.inflight - 1);
      await injectFaults(faults);
      this.authorize(request);
      if (request.verb === 'watch') {
        const closeAfterMs = faults.find((f) => f.closeWatchAfterMs !== undefined)?.closeWatchAfterMs;
        entry.status = 200;
        serveWatch(this.parts.sim, request, res, closeAfterMs !== undefined ? { closeAfterMs } : {});
        return;
      }
      const reply = await this.dispatch(request);
      entry.status = reply.status;
      send(res, reply.status, reply.body, {}, reply.warnings);
    } catch (error) {
      entry.status = sendError(res, error);
    } finally {
      this.inflight -= 1;
      this.parts.log.answered(entry);
    }
  }

  private authorize(request: ApiRequest): void {
    const decision = this.parts.sim.rbac.authorize({
      user: request.user, verb: request.verb, resourceRequest: true, apiGroup: request.type.group, resource: request.type.plural,
      ...(request.subresource ? { subresource: request.subresource } : {}),
      ...(request.namespace ? { namespace: request.namespace } : request.type.plural === 'namespaces' && request.name ? { namespace: request.name } : {}),
      // A create names its object in the body; a create on a subresource (serviceaccounts/NAME/token) in the path.
      ...(request.name && (request.verb !== 'create' || request.subresource) ? { name: request.name } : {}),
    });
    if (!decision.allowed) {
      const info: RequestInfo = { ...request, ...(request.type.plural === 'namespaces' && request.name ? { namespace: request.name } : {}) };
      throw forbidden(groupResource(request.type), request.verb === 'create' && !request.subresource ? undefined : request.name, forbiddenMessage(request.user, info));
    }
  }

  private dispatch(request: ApiRequest): ApiReply | Promise<ApiReply> {
    const { sim, controllers } = this.parts;
    if (REVIEW_KINDS.has(request.type.kind)) {
      if (request.verb !== 'create') throw methodNotSupported(groupResource(request.type), request.verb);
      return handleReview(sim, request);
    }
    if (isTokenRequest(request.type, request.subresource)) {
      if (request.verb !== 'create') throw methodNotSupported(groupResource(request.type), request.verb);
      return requestToken(sim, request, managerOf(request));
    }
    if (request.subresource === 'scale') return scaleObject(sim, request);
    switch (request.verb) {
      case 'get': return getObject(sim, request);
      case 'list': return listObjects(sim, request);
      case 'create': return createObject(sim, request);
      case 'update': return updateObject(sim, request);
      case 'patch': return patchObject(sim, request);
      case 'delete': return deleteObject(sim, request, controllers);
      case 'deletecollection': return deleteCollection(sim, request, controllers);
      default: throw methodNotSupported(groupResource(request.type), request.verb);
    }
  }

  /** Discovery, version and OpenAPI: RBAC non-resource URLs (system:discovery grants them to everyone). */
  private serveNonResource(path: string, method: string, user: Authenticated, req: IncomingMessage, res: ServerResponse): void {
    const verb = method.toLowerCase();
    const { sim } = this.parts;
    if (!sim.rbac.authorize({ user, verb, resourceRequest: false, path }).allowed) throw nonResourceForbidden(user.username, verb, path);
    if (method !== 'GET') throw pathNotFound();
    const segments = path.split('/').filter((s) => s !== '');
    const body = ((): unknown => {
      if (path === '/version' || path === '/version/') return versionInfo(sim);
      if (path === '/api') return coreVersions(this.host);
      if (path === '/apis') return groupList(sim);
      if (segments[0] === 'api' && segments.length === 2) return resourceList(sim, '', segments[1]!);
      if (segments[0] === 'apis' && segments.length === 2) return group(sim, segments[1]!);
      if (segments[0] === 'apis' && segments.length === 3) return resourceList(sim, segments[1]!, segments[2]!);
      if (path === '/openapi/v2') return openApiV2(sim, req.headers.accept, res); // writes its own (protobuf) answer; send() then only ends
      if (path === '/openapi/v3') return openApiV3Root(sim);
      if (segments[0] === 'openapi' && segments[1] === 'v3') return openApiV3Document(sim, segments.slice(2).join('/'));
      throw pathNotFound();
    })();
    send(res, 200, body);
  }
}

/** APF's answer when every seat is taken: 429 at once, before any work. */
function rejectOverSeats(faults: Fault[], others: number): void {
  const full = faults.find((f) => f.maxInflight !== undefined && others >= f.maxInflight);
  if (full) throw fromCode(429, 'Too many requests, please try again later.', full.retryAfterSeconds ?? 1);
}

async function injectFaults(faults: Fault[]): Promise<void> {
  const latency = Math.max(0, ...faults.map((f) => f.latencyMs ?? 0));
  if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));
  const failing = faults.find((f) => f.status !== undefined);
  if (failing) {
    throw fromCode(failing.status!, failing.message ?? (failing.status === 429 ? 'Too many requests, please try again later.' : `kube-sim: injected fault (HTTP ${failing.status})`), failing.retryAfterSeconds);
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
