// Every way an admission call can be refused before a decision is made, each with its own
// HTTP status. Only the HTTP layer turns these into responses; everything else throws them.

export type AdmissionErrorCode =
  | 'empty-body'
  | 'wrong-content-type'
  | 'too-large'
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

  constructor(code: AdmissionErrorCode, message: string) {
    super(message);
    this.name = 'AdmissionError';
    this.code = code;
    this.status = HTTP_STATUS_OF[code];
  }
}

export function isAdmissionError(e: unknown): e is AdmissionError {
  return e instanceof AdmissionError;
}
