// Which API failures are worth retrying. One pure function so that every caller (the kube
// seam, the reconcilers, the relay) agrees, and so that a permanent failure is never retried
// forever nor a transient one acknowledged and lost.

export type ErrorClass = 'transient' | 'permanent';

export interface ApiFailure {
  /** HTTP status; 0 when no response arrived (connection refused, reset, timeout). */
  status: number;
  /** `reason` of a metav1.Status body, when there was one (`Invalid`, `Forbidden`, ...). */
  reason?: string;
  message?: string;
}

export interface Classification {
  class: ErrorClass;
  /** Short explanation for logs and Events. */
  why: string;
}

const TRANSIENT_STATUS = new Set([0, 408, 425, 429, 500, 502, 503, 504]);

/**
 * The 500s no retry mends: kube-apiserver could not type or convert the object a server-side apply
 * sent (a string where a number belongs: "failed to create typed patch object ..."; a quantity that
 * does not parse: "failed to convert new object ..."), as when a template token renders such a
 * value. Both are answered with code 500 and no reason, and depend on the object alone.
 */
const UNCONVERTIBLE = ['failed to create typed patch object ', 'failed to convert new object '];

export function unconvertible(failure: ApiFailure): boolean {
  return failure.status === 500 && failure.reason === undefined && UNCONVERTIBLE.some((p) => (failure.message ?? '').startsWith(p));
}

/**
 * kube-apiserver 1.31 and later (ResilientWatchCacheInitialization) answer a list or watch of a
 * resource whose watch cache is still filling (a CRD just established or changed, or a cache
 * re-listing) with 429 "storage is (re)initializing" and Retry-After 1; 1.26 held the request until
 * the cache was ready. It passes within milliseconds to a second.
 */
export function storageInitializing(failure: ApiFailure): boolean {
  return failure.status === 429 && (failure.message ?? '').includes('storage is (re)initializing');
}

/** 409 means two very different things: a conflict (retry) or AlreadyExists (the caller decides). */
export function classifyApiError(failure: ApiFailure): Classification {
  const { status, reason } = failure;
  if (unconvertible(failure)) return { class: 'permanent', why: 'HTTP 500 (the API server cannot convert the object: a field holds a value of the wrong form)' };
  if (TRANSIENT_STATUS.has(status)) return { class: 'transient', why: status === 0 ? 'no response (network or timeout)' : `HTTP ${status}${reason ? ` ${reason}` : ''}` };
  if (status === 409 && reason !== 'AlreadyExists') return { class: 'transient', why: `HTTP 409 ${reason ?? 'Conflict'}` };
  // 401 usually means an expired token that the next attempt refreshes.
  if (status === 401) return { class: 'transient', why: 'HTTP 401 Unauthorized' };
  if (status >= 500) return { class: 'transient', why: `HTTP ${status}` };
  return { class: 'permanent', why: `HTTP ${status}${reason ? ` ${reason}` : ''}` };
}

export function isTransient(failure: ApiFailure): boolean {
  return classifyApiError(failure).class === 'transient';
}

/** An API failure classified once; the class says what the delivery does with it. */
abstract class ClassifiedError extends Error {
  readonly failure: ApiFailure;
  constructor(message: string, failure: ApiFailure) {
    super(message);
    this.name = new.target.name;
    this.failure = failure;
  }
}

/** Thrown by a reconciler when the delivery must fail so that Pub/Sub redelivers it. */
export class TransientError extends ClassifiedError {}

/**
 * Thrown by a reconciler when retrying cannot help (403, a kind that is not served, an invalid
 * request): the delivery is acknowledged and the error reported, never redelivered up to the
 * dead-letter limit.
 */
export class PermanentError extends ClassifiedError {}

/** The error a failed API call becomes, classified once: TransientError (redeliver) or PermanentError (acknowledge). */
export function apiError(what: string, failure: ApiFailure): TransientError | PermanentError {
  const c = classifyApiError(failure);
  const message = `${what}: ${c.why}: ${failure.message ?? ''}`;
  return c.class === 'transient' ? new TransientError(message, failure) : new PermanentError(message, failure);
}

/** Message of a metav1.Status body, or a fallback. */
export function statusMessage(data: unknown, fallback: string): string {
  if (data && typeof data === 'object' && typeof (data as { message?: unknown }).message === 'string') return (data as { message: string }).message;
  return fallback;
}

export function statusReason(data: unknown): string | undefined {
  if (data && typeof data === 'object' && typeof (data as { reason?: unknown }).reason === 'string') return (data as { reason: string }).reason;
  return undefined;
}
