// Building AdmissionReview responses. A response always echoes the request's uid; a patch is
// always made by clone–mutate–diff (fast-json-patch `compare`), never by hand-built paths.
import jsonpatch from 'fast-json-patch';
import type { Operation as PatchOperation } from 'fast-json-patch';
import { ADMISSION_API_VERSION, ADMISSION_KIND } from './types.ts';
import type { AdmissionRequest, AdmissionResponse, AdmissionReview } from './types.ts';

const { compare } = jsonpatch;

export interface ResponseExtras {
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

function withExtras(response: AdmissionResponse, extras: ResponseExtras): AdmissionResponse {
  if (extras.warnings && extras.warnings.length > 0) response.warnings = extras.warnings;
  if (extras.auditAnnotations && Object.keys(extras.auditAnnotations).length > 0) response.auditAnnotations = extras.auditAnnotations;
  return response;
}

export function allow(request: Pick<AdmissionRequest, 'uid'>, extras: ResponseExtras = {}): AdmissionResponse {
  return withExtras({ uid: request.uid, allowed: true }, extras);
}

const DENIAL_REASONS: Readonly<Record<number, string>> = { 403: 'Forbidden', 413: 'RequestEntityTooLarge', 422: 'Invalid', 429: 'TooManyRequests' };

/** A denial: kube-apiserver shows `message` to the user as the reason of the refusal. */
export function deny(request: Pick<AdmissionRequest, 'uid'>, message: string, code = 403, extras: ResponseExtras = {}): AdmissionResponse {
  const reason = DENIAL_REASONS[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest');
  return withExtras({ uid: request.uid, allowed: false, status: { status: 'Failure', code, reason, message } }, extras);
}

/** RFC 6902 operations that turn `original` into `mutated`. */
export function diff<T extends object>(original: T, mutated: T): PatchOperation[] {
  return compare(original, mutated);
}

export function encodePatch(operations: PatchOperation[]): string {
  return Buffer.from(JSON.stringify(operations)).toString('base64');
}

/**
 * Allows, carrying the JSONPatch from `original` to `mutated` (no patch when nothing changed).
 * `at` is where `original` sits in the request's object (`/metadata` when only metadata is diffed).
 */
export function allowWithPatch<T extends object>(
  request: Pick<AdmissionRequest, 'uid'>,
  original: T,
  mutated: T,
  extras: ResponseExtras = {},
  at = '',
): AdmissionResponse {
  const response = allow(request, extras);
  const operations = at ? diff(original, mutated).map((op) => ({ ...op, path: at + op.path })) : diff(original, mutated);
  if (operations.length > 0) {
    response.patch = encodePatch(operations);
    response.patchType = 'JSONPatch';
  }
  return response;
}

/**
 * Clone–mutate–diff: `mutate` changes a deep clone, the response carries the difference. Pass the
 * part of the object the webhook may change and where it sits (`at`) to clone and diff only that.
 */
export function mutateClone<T extends object>(
  request: Pick<AdmissionRequest, 'uid'>,
  original: T,
  mutate: (draft: T) => void,
  extras: ResponseExtras = {},
  at = '',
): AdmissionResponse {
  const draft = structuredClone(original);
  mutate(draft);
  return allowWithPatch(request, original, draft, extras, at);
}

export function toReview(response: AdmissionResponse): AdmissionReview {
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_KIND, response };
}

/** Decodes the patch of a response (tests, `furnish admit` output). */
export function decodePatch(response: AdmissionResponse): PatchOperation[] {
  if (!response.patch) return [];
  return JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as PatchOperation[];
}
