// Dynamic admission, as the API server calls it: every Mutating then every Validating webhook
// whose rules, namespaceSelector and objectSelector match, over HTTPS verified with the
// configuration's caBundle, with an admission.k8s.io/v1 AdmissionReview; JSONPatch responses are
// applied, denials and call failures become the Status errors kubectl prints. Credentials come
// from the admission kubeconfig (webhook-auth.ts), as kube-apiserver's do.
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import type { KubeObject, LabelSelector, StringMap } from '../../../shared/kube/types.ts';
import type { Authenticated } from './authn.ts';
import { ApiError, badRequest, forbidden, internalError } from './errors.ts';
import { isNamespaceType } from './operations/request.ts';
import { applyJsonPatch } from './patch.ts';
import { admitByPolicies, matchConditionsMatch, type Authorize, type MatchCondition, type PolicyAttributes } from './policies.ts';
import { groupResource, type ResourceType } from './resources.ts';
import { namespaceSelectorMatches, objectSelectorMatches, ruleMatches, type MatchRequest, type Rule } from './rules.ts';
import type { WebhookAuthResolver, WebhookCredentials } from './webhook-auth.ts';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionAttributes {
  operation: Operation;
  type: ResourceType;
  subresource?: string;
  namespace?: string;
  name?: string;
  object: KubeObject | null;
  oldObject: KubeObject | null;
  user: Authenticated;
  dryRun: boolean;
  options: Record<string, unknown>;
  /** request.kind when the object is not of the resource's kind (a `/scale` carries an autoscaling/v1 Scale). */
  kind?: { group: string; version: string; kind: string };
}

export interface AdmissionEnvironment {
  configurations(kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration'): KubeObject[];
  namespaceLabels(name: string): StringMap | undefined;
  /** Collects response warnings for the `Warning` header. */
  warn(message: string): void;
  /** Every review sent, for tests that assert on what a webhook saw. */
  record?(webhook: string, review: AdmissionReview): void;
  /** The admission kubeconfig's credentials; absent: every call is anonymous. */
  webhookAuth?: WebhookAuthResolver;
  /** The stored namespace (a policy's `namespaceObject`). */
  namespace?(name: string): KubeObject | undefined;
  /**
   * ValidatingAdmissionPolicies, their bindings and the authorizer their CEL asks; absent on a
   * server without them (as 1.26): no policies, and webhook matchConditions are not evaluated.
   */
  policies?: { policies: KubeObject[]; bindings: KubeObject[]; authorize: Authorize };
}

interface Webhook {
  name: string;
  clientConfig: { url?: string; caBundle?: string; service?: { name: string; namespace: string; path?: string; port?: number } };
  rules?: Rule[];
  failurePolicy?: 'Fail' | 'Ignore';
  timeoutSeconds?: number;
  sideEffects?: string;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  admissionReviewVersions?: string[];
  matchConditions?: MatchCondition[];
}

export interface AdmissionReview {
  kind: 'AdmissionReview';
  apiVersion: 'admission.k8s.io/v1';
  request: Record<string, unknown>;
}

interface AdmissionResponse {
  uid?: string;
  allowed?: boolean;
  status?: { code?: number; message?: string; reason?: string; details?: unknown; status?: string };
  patch?: string;
  patchType?: string;
  warnings?: string[];
}

/** kube-apiserver never sends the webhook configurations themselves (nor reviews) to webhooks. */
const EXEMPT_KINDS = new Set(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);

function matchRequestOf(a: AdmissionAttributes): MatchRequest {
  const namespace = isNamespaceType(a.type) ? a.name : a.namespace;
  return {
    operation: a.operation, group: a.type.group, version: a.type.version, resource: a.type.plural,
    ...(a.subresource ? { subresource: a.subresource } : {}), ...(namespace ? { namespace } : {}),
    object: a.object, oldObject: a.oldObject,
  };
}

function matches(webhook: Webhook, a: AdmissionAttributes, env: AdmissionEnvironment): boolean {
  const r = matchRequestOf(a);
  const namespace = r.namespace;
  return (webhook.rules ?? []).some((rule) => ruleMatches(rule, r))
    && namespaceSelectorMatches(webhook.namespaceSelector, r, () => (namespace === undefined ? undefined : env.namespaceLabels(namespace)))
    && objectSelectorMatches(webhook.objectSelector, r)
    && conditionsAllow(webhook, a, env);
}

// The metadata kube-apiserver's namespaceObject type declares (BuildNamespaceType; its `UID` never
// matches the JSON `uid`, so no uid either).
const NAMESPACE_OBJECT_METADATA = ['name', 'generateName', 'namespace', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'finalizers'];

/** `namespaceObject` as kube-apiserver makes it: spec, status and the declared metadata (no managedFields, no kind). */
function namespaceObjectOf(namespace: KubeObject | undefined): KubeObject | null {
  if (!namespace) return null;
  const metadata = Object.fromEntries(NAMESPACE_OBJECT_METADATA.filter((k) => namespace.metadata[k] !== undefined).map((k) => [k, namespace.metadata[k]]));
  return { metadata, spec: namespace.spec, status: namespace.status } as unknown as KubeObject;
}

/** The request as ValidatingAdmissionPolicies and matchConditions see it (policies.ts). */
function policyAttributes(a: AdmissionAttributes, env: AdmissionEnvironment): PolicyAttributes {
  const namespaceObject = a.type.namespaced && a.namespace ? namespaceObjectOf(env.namespace?.(a.namespace)) : null;
  const { username, uid, groups, extra } = a.user;
  return {
    operation: a.operation as PolicyAttributes['operation'],
    userInfo: { username, groups, ...(uid ? { uid } : {}), ...(extra ? { extra } : {}) },
    object: a.object, oldObject: a.oldObject, namespaceObject,
    resource: { group: a.type.group, version: a.type.version, resource: a.type.plural },
    ...(a.subresource ? { subResource: a.subresource } : {}),
    name: a.name ?? '',
    ...(matchRequestOf(a).namespace ? { namespace: matchRequestOf(a).namespace } : {}),
    kind: a.kind ?? { group: a.type.group, version: a.type.version, kind: a.type.kind },
    dryRun: a.dryRun, options: a.options,
  };
}

/**
 * A webhook's matchConditions (where the server has them): all true, call it; one false, skip it;
 * an evaluation error, its failurePolicy (Fail: 403, as kube-apiserver's ShouldCallHook).
 */
function conditionsAllow(webhook: Webhook, a: AdmissionAttributes, env: AdmissionEnvironment): boolean {
  if (!env.policies || !webhook.matchConditions?.length) return true;
  const result = matchConditionsMatch(webhook.matchConditions, policyAttributes(a, env), env.policies.authorize);
  if (!(result instanceof Error)) return result;
  if (webhook.failurePolicy === 'Ignore') return false;
  throw forbidden(groupResource(a.type), a.name, result.message);
}

export function buildReview(a: AdmissionAttributes): AdmissionReview {
  const gvk = a.kind ?? { group: a.type.group, version: a.type.version, kind: a.type.kind };
  const gvr = { group: a.type.group, version: a.type.version, resource: a.type.plural };
  const namespace = a.type.kind === 'Namespace' && !a.type.group ? a.name : a.namespace;
  const userInfo: Record<string, unknown> = { username: a.user.username };
  if (a.user.uid) userInfo.uid = a.user.uid;
  userInfo.groups = a.user.groups;
  if (a.user.extra) userInfo.extra = a.user.extra;
  return {
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: {
      uid: randomUUID(),
      kind: gvk,
      resource: gvr,
      ...(a.subresource ? { subResource: a.subresource } : {}),
      requestKind: gvk,
      requestResource: gvr,
      ...(a.subresource ? { requestSubResource: a.subresource } : {}),
      ...(a.name ? { name: a.name } : {}),
      ...(namespace ? { namespace } : {}),
      operation: a.operation,
      userInfo,
      object: a.object,
      oldObject: a.oldObject,
      dryRun: a.dryRun,
      options: a.options,
    },
  };
}

function webhookUrl(webhook: Webhook, timeoutSeconds: number): URL {
  if (!webhook.clientConfig.url) {
    const s = webhook.clientConfig.service;
    throw new Error(`failed to call webhook: service ${s?.namespace}/${s?.name} cannot be resolved: kube-sim has no Services; use clientConfig.url`);
  }
  const url = new URL(webhook.clientConfig.url);
  url.searchParams.set('timeout', `${timeoutSeconds}s`);
  return url;
}

function post(url: URL, body: string, caBundle: string | undefined, credentials: WebhookCredentials, timeoutMs: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = https.request(url, {
      method: 'POST',
      headers: {
        'User-Agent': 'kube-apiserver-admission',
        Accept: 'application/json, */*',
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(body),
        ...credentials.headers,
      },
      ...(caBundle ? { ca: Buffer.from(caBundle, 'base64').toString('utf8') } : {}),
      ...(credentials.cert !== undefined ? { cert: credentials.cert } : {}),
      ...(credentials.key !== undefined ? { key: credentials.key } : {}),
      timeout: timeoutMs,
      agent: false,
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error('context deadline exceeded')));
    request.on('error', reject);
    request.end(body);
  });
}

class CallFailure extends Error {}

/** As kube-apiserver fails to build the webhook's client: `could not get REST client: ...`. */
function credentialsOf(webhook: Webhook, auth: WebhookAuthResolver | undefined): WebhookCredentials {
  if (!auth || !webhook.clientConfig.url) return { headers: {} };
  try {
    return auth.credentialsFor(new URL(webhook.clientConfig.url));
  } catch (error) {
    throw new CallFailure(`failed calling webhook "${webhook.name}": could not get REST client: ${(error as Error).message}`);
  }
}

/** The webhook answered, but not with a usable AdmissionReview (no `Post "url":` prefix, as client-go). */
class AnswerError extends Error {}

/** Messages client-go gives an answer without a Status body (errors.NewGenericServerResponse). */
const GENERIC: Record<number, string> = {
  400: 'the server rejected our request for an unknown reason',
  401: 'the server has asked for the client to provide credentials',
  403: 'the server does not allow access to the requested resource',
  404: 'the server could not find the requested resource',
  405: 'the server does not allow this method on the requested resource',
  409: 'the server reported a conflict',
  413: 'the server has rejected the request because it is too large',
  415: 'the server does not support the media type of the request',
  422: 'the server rejected our request due to an error in our request',
  429: 'the server has received too many requests and has asked us to try again later',
  503: 'the server is currently unable to handle the request',
  504: 'the server was unable to return a response in the time allotted, but may still be processing the request',
};

/**
 * What the API server's REST client makes of a webhook's non-2xx answer: the message of a Status
 * body, else client-go's generic text for the code (never the code and body themselves).
 */
export function responseError(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { kind?: string; message?: string };
    if (body?.kind === 'Status' && typeof body.message === 'string' && body.message !== '') return body.message;
  } catch { /* not JSON: the generic message */ }
  if (status === 500) return `an error on the server (${JSON.stringify(text.trim() || 'unknown')}) has prevented the request from succeeding`;
  return GENERIC[status] ?? `the server responded with the status code ${status} but did not return more information`;
}

/** What Go's net package says where Node says `connect ECONNREFUSED 127.0.0.1:1` (kube-apiserver quotes it). */
function goDialError(error: NodeJS.ErrnoException & { address?: string; port?: number }): string | undefined {
  if (error.syscall !== 'connect' || error.address === undefined) return undefined;
  const cause = { ECONNREFUSED: 'connection refused', ETIMEDOUT: 'connection timed out', EHOSTUNREACH: 'no route to host' }[error.code ?? ''];
  return cause && `dial tcp ${error.address}:${error.port}: connect: ${cause}`;
}

async function call(webhook: Webhook, review: AdmissionReview, auth: WebhookAuthResolver | undefined): Promise<AdmissionResponse> {
  const timeoutSeconds = webhook.timeoutSeconds ?? 10;
  const credentials = credentialsOf(webhook, auth);
  let url: URL | undefined;
  try {
    url = webhookUrl(webhook, timeoutSeconds);
    const { status, text } = await post(url, JSON.stringify(review), webhook.clientConfig.caBundle, credentials, timeoutSeconds * 1000);
    if (status < 200 || status >= 300) throw new AnswerError(responseError(status, text));
    const answer = JSON.parse(text) as { response?: AdmissionResponse };
    if (!answer.response) throw new AnswerError('webhook response was absent');
    if (answer.response.uid !== review.request.uid) {
      throw new AnswerError(`expected response.uid="${String(review.request.uid)}", got "${String(answer.response.uid)}"`);
    }
    return answer.response;
  } catch (error) {
    const reason = goDialError(error as NodeJS.ErrnoException) ?? (error as Error).message;
    const detail = url && !(error instanceof AnswerError) ? `Post "${url.href}": ${reason}` : reason;
    throw new CallFailure(`failed calling webhook "${webhook.name}": failed to call webhook: ${detail}`);
  }
}

/** A denial, as ToStatusErr: code at least 400, message prefixed with the webhook's name. */
function denial(webhook: Webhook, status: AdmissionResponse['status']): ApiError {
  const code = status?.code && status.code >= 400 ? status.code : 400;
  const deniedBy = `admission webhook "${webhook.name}" denied the request`;
  const message = status?.message ? `${deniedBy}: ${status.message}` : status?.reason ? `${deniedBy}: ${status.reason}` : `${deniedBy} without explanation`;
  return new ApiError({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message,
    ...(status?.reason ? { reason: status.reason } : {}),
    ...(status?.details ? { details: status.details as Record<string, never> } : {}),
    code,
  });
}

function webhooksOf(kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration', env: AdmissionEnvironment): Webhook[] {
  return env.configurations(kind)
    .sort((x, y) => (x.metadata.name! < y.metadata.name! ? -1 : 1))
    .flatMap((config) => (config.webhooks ?? []) as Webhook[]);
}

async function consult(webhook: Webhook, a: AdmissionAttributes, env: AdmissionEnvironment): Promise<AdmissionResponse | undefined> {
  if (a.dryRun && !['None', 'NoneOnDryRun'].includes(webhook.sideEffects ?? 'Unknown')) {
    throw badRequest(`admission webhook "${webhook.name}" does not support dry run`);
  }
  const review = buildReview(a);
  env.record?.(webhook.name, review);
  try {
    const response = await call(webhook, review, env.webhookAuth);
    for (const w of response.warnings ?? []) env.warn(w);
    return response;
  } catch (error) {
    if (!(error instanceof CallFailure)) throw error;
    if ((webhook.failurePolicy ?? 'Fail') === 'Ignore') return undefined;
    throw internalError(error.message);
  }
}

/** Runs the mutating webhooks in order; returns the object with every JSONPatch applied. */
export async function admitMutating(a: AdmissionAttributes, env: AdmissionEnvironment): Promise<KubeObject | null> {
  if (EXEMPT_KINDS.has(a.type.kind)) return a.object;
  let object = a.object;
  for (const webhook of webhooksOf('MutatingWebhookConfiguration', env)) {
    const attrs = { ...a, object };
    if (!matches(webhook, attrs, env)) continue;
    const response = await consult(webhook, attrs, env);
    if (!response) continue;
    if (!response.allowed) throw denial(webhook, response.status);
    if (response.patch && object) {
      if (response.patchType && response.patchType !== 'JSONPatch') throw internalError(`unsupported patch type "${response.patchType}"`);
      const operations = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as unknown;
      object = applyJsonPatch(object as unknown as Record<string, unknown>, operations) as unknown as KubeObject;
    }
  }
  return object;
}

/** ValidatingAdmissionPolicies (policies.ts), which kube-apiserver runs before the validating webhooks. */
function admitByValidatingPolicies(a: AdmissionAttributes, env: AdmissionEnvironment): void {
  if (!env.policies) return;
  const decision = admitByPolicies(env.policies, policyAttributes(a, env), env.policies.authorize);
  if (!decision.allowed) {
    const { status, reason, message, details } = decision;
    throw new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details, code: status });
  }
  for (const w of decision.warnings) env.warn(w);
}

/** Runs the ValidatingAdmissionPolicies, then the validating webhooks; the first denial wins. */
export async function admitValidating(a: AdmissionAttributes, env: AdmissionEnvironment): Promise<void> {
  if (EXEMPT_KINDS.has(a.type.kind)) return;
  admitByValidatingPolicies(a, env);
  for (const webhook of webhooksOf('ValidatingWebhookConfiguration', env)) {
    if (!matches(webhook, a, env)) continue;
    const response = await consult(webhook, a, env);
    if (response && !response.allowed) throw denial(webhook, response.status);
  }
}
