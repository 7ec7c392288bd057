// Every way an admission call can be refused before a decision is made, each with its own
// HTTP status. Only the HTTP layer turns these into responses; everything else throws them. One
// that knows the request's uid (a body refused for its shape, whose uid was read from the raw
// bytes) is answered as an AdmissionReview denial with that status instead: kube-apiserver shows
// its message to the user, and a webhook registered with failurePolicy Ignore still refuses.

export type AdmissionErrorCode =
  | 'empty-body'
  | 'wrong-content-type'
  | 'too-large'
  | 'too-deep'
  | 'too-many-values'
  | 'busy'
  | 'not-json'
  | 'not-admission-review'
  | 'no-request'
  | 'no-uid'
  | 'invalid-request'
  | 'unsupported-resource';

export const HTTP_STATUS_OF: Readonly<Record<AdmissionErrorCode, number>> = {
  'empty-body': 400,
  'wrong-content-type': 415,
  'too-large': 413,
  'too-deep': 422,
  'too-many-values': 413,
  busy: 429,
  'not-json': 400,
  'not-admission-review': 400,
  'no-request': 400,
  'no-uid': 400,
  'invalid-request': 400,
  'unsupported-resource': 400,
};

export class AdmissionError extends Error {
  readonly code: AdmissionErrorCode;
  readonly status: number;
  /** The request's uid, when known before the body was decoded. */
  readonly uid?: string;

  constructor(code: AdmissionErrorCode, message: string, uid?: string) {
    super(message);
    this.name = 'AdmissionError';
    this.code = code;
    this.status = HTTP_STATUS_OF[code];
    if (uid !== undefined) this.uid = uid;
  }
}

export function isAdmissionError(e: unknown): e is AdmissionError {
  return e instanceof AdmissionError;
}
