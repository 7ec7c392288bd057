// The API server's error vocabulary: every failure leaves kube-sim as a metav1.Status with the
// same code, reason, message and details that kube-apiserver produces, because clients
// (kubectl, client-go, @kubernetes/client-node, Furnish) branch on reason and code.

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** What the error names: `configmaps` in the core group, `namespacetemplates.furnish.dev` elsewhere. */
export interface GroupResource {
  group: string;
  resource: string;
}

export function groupResourceString(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

export class ApiError extends Error {
  readonly status: Status;
  readonly headers: Record<string, string>;

  constructor(status: Status, headers: Record<string, string> = {}) {
    super(status.message ?? status.reason ?? `HTTP ${status.code}`);
    this.status = status;
    this.headers = headers;
  }

  get code(): number {
    return this.status.code;
  }
}

function failure(code: number, reason: string | undefined, message: string, details?: StatusDetails): Status {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code };
  if (reason) status.reason = reason;
  if (details) status.details = details;
  return status;
}

function resourceDetails(gr: GroupResource, name?: string): StatusDetails {
  const details: StatusDetails = {};
  if (name !== undefined && name !== '') details.name = name;
  if (gr.group) details.group = gr.group;
  details.kind = gr.resource;
  return details;
}

export function notFound(gr: GroupResource, name: string): ApiError {
  return new ApiError(failure(404, 'NotFound', `${groupResourceString(gr)} "${name}" not found`, resourceDetails(gr, name)));
}

/** A path that names no resource at all: kube-apiserver answers with a bare 404 Status. */
export function pathNotFound(): ApiError {
  return new ApiError(failure(404, 'NotFound', 'the server could not find the requested resource', {}));
}

export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return new ApiError(failure(409, 'AlreadyExists', `${groupResourceString(gr)} "${name}" already exists`, resourceDetails(gr, name)));
}

export function staleConflict(gr: GroupResource, name: string): ApiError {
  const message = `Operation cannot be fulfilled on ${groupResourceString(gr)} "${name}": the object has been modified; please apply your changes to the latest version and try again`;
  return new ApiError(failure(409, 'Conflict', message, resourceDetails(gr, name)));
}

export function preconditionConflict(gr: GroupResource, name: string, what: string): ApiError {
  const message = `Operation cannot be fulfilled on ${groupResourceString(gr)} "${name}": ${what}`;
  return new ApiError(failure(409, 'Conflict', message, resourceDetails(gr, name)));
}

export interface FieldError {
  type: 'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueForbidden' | 'FieldValueNotSupported' | 'FieldValueDuplicate' | 'FieldValueTypeInvalid';
  field: string;
  /** the detail after "Invalid value: ...:" or "Required value: " */
  detail: string;
  value?: unknown;
}

function fieldErrorMessage(e: FieldError): string {
  switch (e.type) {
    case 'FieldValueRequired':
      return `Required value${e.detail ? `: ${e.detail}` : ''}`;
    case 'FieldValueForbidden':
      return `Forbidden: ${e.detail}`;
    case 'FieldValueDuplicate':
      return `Duplicate value: ${JSON.stringify(e.value)}`;
    case 'FieldValueNotSupported':
      return `Unsupported value: ${JSON.stringify(e.value)}${e.detail ? `: ${e.detail}` : ''}`;
    case 'FieldValueTypeInvalid':
      return `Invalid value: ${JSON.stringify(e.value)}: ${e.detail}`;
    default:
      return `Invalid value: ${JSON.stringify(e.value)}: ${e.detail}`;
  }
}

/** 422 Invalid, as `NewInvalid(kind, name, fieldErrors)`: details.kind is the Kind, not the resource. */
export function invalid(group: string, kind: string, name: string, errors: FieldError[]): ApiError {
  const causes = errors.map((e) => ({ reason: e.type, message: fieldErrorMessage(e), field: e.field }));
  const summary = errors.map((e) => `${e.field}: ${fieldErrorMessage(e)}`);
  const qualified = group ? `${kind}.${group}` : kind;
  const message = `${qualified} "${name}" is invalid: ${summary.length === 1 ? summary[0] : `[${summary.join(', ')}]`}`;
  const details: StatusDetails = { name, ...(group ? { group } : {}), kind, causes };
  if (!name) delete details.name;
  return new ApiError(failure(422, 'Invalid', message, details));
}

export function badRequest(message: string): ApiError {
  return new ApiError(failure(400, 'BadRequest', message));
}

export function unauthorized(): ApiError {
  return new ApiError(failure(401, 'Unauthorized', 'Unauthorized'));
}

export function forbidden(gr: GroupResource, name: string | undefined, reason: string): ApiError {
  const subject = name ? `${groupResourceString(gr)} "${name}"` : groupResourceString(gr);
  return new ApiError(failure(403, 'Forbidden', `${subject} is forbidden: ${reason}`, resourceDetails(gr, name)), {
    'X-Content-Type-Options': 'nosniff',
  });
}

export function nonResourceForbidden(user: string, verb: string, path: string): ApiError {
  return new ApiError(failure(403, 'Forbidden', `forbidden: User "${user}" cannot ${verb} path "${path}"`, {}), {
    'X-Content-Type-Options': 'nosniff',
  });
}

export function methodNotSupported(gr: GroupResource, verb: string): ApiError {
  return new ApiError(failure(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${groupResourceString(gr)}"`, resourceDetails(gr)));
}

export function unsupportedMediaType(contentType: string): ApiError {
  return new ApiError(failure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got ${contentType})`));
}

export function tooManyRequests(retryAfterSeconds: number, message = 'Too many requests, please try again later.'): ApiError {
  return new ApiError(
    failure(429, 'TooManyRequests', message, { retryAfterSeconds }),
    { 'Retry-After': String(retryAfterSeconds) },
  );
}

/** A failure with no reason, as kube-apiserver answers an object it cannot convert (500). */
export function statusError(code: number, message: string): ApiError {
  return new ApiError(failure(code, undefined, message));
}

export function internalError(message: string, causes?: StatusCause[]): ApiError {
  return new ApiError(failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: causes ?? [{ message }] }));
}

export function serviceUnavailable(message: string): ApiError {
  return new ApiError(failure(503, 'ServiceUnavailable', message));
}

export function timeoutError(message: string): ApiError {
  return new ApiError(failure(504, 'Timeout', message, {}));
}

/** The status of a watch that started too far back: sent as an ERROR event, then the stream ends. */
export function expired(requested: string, oldest: number): Status {
  return failure(410, 'Expired', `too old resource version: ${requested} (${oldest})`);
}

/** Any status code chosen by a test or a webhook; the reason follows the code like kube-apiserver's. */
export function fromCode(code: number, message: string, retryAfterSeconds?: number): ApiError {
  if (code === 429) return tooManyRequests(retryAfterSeconds ?? 1, message);
  const reasons: Record<number, string> = {
    400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict', 410: 'Gone',
    422: 'Invalid', 500: 'InternalError', 503: 'ServiceUnavailable', 504: 'Timeout',
  };
  const error = new ApiError(failure(code, reasons[code], message));
  if (retryAfterSeconds !== undefined) {
    error.status.details = { retryAfterSeconds };
    error.headers['Retry-After'] = String(retryAfterSeconds);
  }
  return error;
}

export function successStatus(details?: StatusDetails): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', ...(details ? { details } : {}) };
}

/** 504 for a resourceVersion the server has not reached (kube-apiserver 1.26's words and details; Retry-After 1). */
export function tooLargeResourceVersion(requested: number, current: number): ApiError {
  const details: StatusDetails = { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 };
  return new ApiError(failure(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, details), { 'Retry-After': '1' });
}

/** A storage error passed through as is: 500 without a reason (an unparsable resourceVersion, etcd's "future revision"). */
export function storageError(message: string): ApiError {
  return new ApiError(failure(500, undefined, message));
}

/** 410 for a list at a resourceVersion older than the history kept (etcd: compacted). */
export function listExpired(): ApiError {
  return new ApiError(failure(410, 'Expired', 'The resourceVersion for the provided list is too old.'));
}
