// Decoding an AdmissionReview: tells apart "not JSON", "not an AdmissionReview", "no request",
// "no uid" and a request with a field of the wrong type, each as its own AdmissionError. Checks
// only the fields Furnish reads, so a newer kube-apiserver adding fields never breaks us.
import { AdmissionError } from './errors.ts';
import { BODY_LIMITS, bodyProblemMessage, scanBody, type BodyLimits, type BodyScan } from './scan.ts';
import { ADMISSION_API_VERSION, ADMISSION_KIND, OPERATIONS } from './types.ts';
import type { AdmissionRequest, DecodedReview } from './types.ts';

/** Default request body limit: an AdmissionReview carries object and oldObject (each ≤ 1.5 MiB in etcd). */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return `a ${typeof v}`;
}

function invalid(path: string, expected: string, got: unknown): AdmissionError {
  return new AdmissionError('invalid-request', `${path} must be ${expected}, got ${describe(got)}`);
}

function checkString(obj: Json, key: string, path: string, required = false): void {
  const v = obj[key];
  if (v === undefined && !required) return;
  if (typeof v !== 'string') throw invalid(`${path}.${key}`, 'a string', v);
}

function checkStringMap(v: unknown, path: string): void {
  if (v === undefined || v === null) return;
  if (!isObject(v)) throw invalid(path, 'a map of strings', v);
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string') throw invalid(`${path}[${JSON.stringify(k)}]`, 'a string', val);
  }
}

function checkStringArray(v: unknown, path: string): void {
  if (v === undefined || v === null) return;
  if (!Array.isArray(v)) throw invalid(path, 'an array of strings', v);
  v.forEach((item, i) => {
    if (typeof item !== 'string') throw invalid(`${path}[${i}]`, 'a string', item);
  });
}

function checkGroupVersion(v: unknown, path: string, last: 'kind' | 'resource'): void {
  if (!isObject(v)) throw invalid(path, `an object with group, version and ${last}`, v);
  checkString(v, 'group', path, true);
  checkString(v, 'version', path, true);
  checkString(v, last, path, true);
}

function checkUserInfo(v: unknown): void {
  const path = 'request.userInfo';
  if (!isObject(v)) throw invalid(path, 'an object', v);
  checkString(v, 'username', path);
  checkString(v, 'uid', path);
  checkStringArray(v.groups, `${path}.groups`);
  if (v.extra === undefined || v.extra === null) return;
  if (!isObject(v.extra)) throw invalid(`${path}.extra`, 'a map of string arrays', v.extra);
  for (const [k, val] of Object.entries(v.extra)) checkStringArray(val, `${path}.extra[${JSON.stringify(k)}]`);
}

function checkObject(v: unknown, path: string): void {
  if (v === undefined || v === null) return;
  if (!isObject(v)) throw invalid(path, 'a Kubernetes object or null', v);
  const meta = v.metadata;
  if (meta === undefined || meta === null) return;
  if (!isObject(meta)) throw invalid(`${path}.metadata`, 'an object', meta);
  checkString(meta, 'name', `${path}.metadata`);
  checkString(meta, 'namespace', `${path}.metadata`);
  checkStringMap(meta.labels, `${path}.metadata.labels`);
  checkStringMap(meta.annotations, `${path}.metadata.annotations`);
}

function checkRequest(r: Json): AdmissionRequest {
  if (typeof r.uid !== 'string' || r.uid.length === 0) {
    throw new AdmissionError('no-uid', `request.uid must be a non-empty string, got ${r.uid === undefined ? 'nothing' : describe(r.uid)}`);
  }
  checkGroupVersion(r.kind, 'request.kind', 'kind');
  checkGroupVersion(r.resource, 'request.resource', 'resource');
  if (typeof r.operation !== 'string' || !(OPERATIONS as readonly string[]).includes(r.operation)) {
    throw new AdmissionError('invalid-request', `request.operation must be one of ${OPERATIONS.join(', ')}, got ${JSON.stringify(r.operation) ?? 'nothing'}`);
  }
  for (const key of ['name', 'namespace', 'subResource']) checkString(r, key, 'request');
  checkUserInfo(r.userInfo);
  checkObject(r.object, 'request.object');
  checkObject(r.oldObject, 'request.oldObject');
  if (r.dryRun !== undefined && r.dryRun !== null && typeof r.dryRun !== 'boolean') throw invalid('request.dryRun', 'a boolean', r.dryRun);
  return r as unknown as AdmissionRequest;
}

/** Checks an already-parsed value. Throws AdmissionError; never anything else. */
export function decodeAdmissionReview(value: unknown): DecodedReview {
  if (!isObject(value)) {
    throw new AdmissionError('not-admission-review', `body is not an AdmissionReview: expected a JSON object, got ${describe(value)}`);
  }
  if (value.kind !== ADMISSION_KIND) {
    throw new AdmissionError('not-admission-review', `body is not an AdmissionReview: kind is ${JSON.stringify(value.kind) ?? 'missing'}`);
  }
  if (value.apiVersion !== ADMISSION_API_VERSION) {
    throw new AdmissionError(
      'not-admission-review',
      `AdmissionReview apiVersion ${JSON.stringify(value.apiVersion) ?? 'missing'} is not supported: register the webhook with admissionReviewVersions: [v1]`,
    );
  }
  if (value.request === undefined || value.request === null) {
    throw new AdmissionError('no-request', 'AdmissionReview has no request');
  }
  if (!isObject(value.request)) throw invalid('request', 'an object', value.request);
  checkRequest(value.request);
  return value as unknown as DecodedReview;
}

/** The longest uid read from a body that is refused unparsed (kube-apiserver's are 36 bytes). */
const MAX_UID_BYTES = 256;

function uidOf(bytes: Buffer, scan: BodyScan): string | undefined {
  if (!scan.uid || scan.uid[1] - scan.uid[0] > MAX_UID_BYTES) return undefined;
  try {
    const uid = JSON.parse(`"${bytes.toString('utf8', scan.uid[0], scan.uid[1])}"`) as string;
    return uid.length > 0 ? uid : undefined;
  } catch {
    return undefined;
  }
}

function asBuffer(body: string | Uint8Array): Buffer {
  if (typeof body === 'string') return Buffer.from(body);
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/**
 * Parses and checks the raw body. Throws AdmissionError; never anything else. A body nested too
 * deep or with too many values (scan.ts) is refused before it is parsed, as the request's denial
 * when its uid could be read. `onScan` learns the body's shape before it is parsed.
 */
export function parseAdmissionReview(body: string | Uint8Array, maxBytes = DEFAULT_MAX_BODY_BYTES, limits: BodyLimits = BODY_LIMITS, onScan?: (scan: BodyScan) => void): DecodedReview {
  const bytes = asBuffer(body);
  if (bytes.length === 0) throw new AdmissionError('empty-body', 'request body is empty: expected an AdmissionReview');
  if (bytes.length > maxBytes) throw new AdmissionError('too-large', `request body is ${bytes.length} bytes, more than the limit of ${maxBytes}`);
  const scan = scanBody(bytes, limits);
  onScan?.(scan);
  if (scan.problem) throw new AdmissionError(scan.problem.kind, bodyProblemMessage(scan.problem), uidOf(bytes, scan));
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new AdmissionError('not-json', `request body is not JSON: ${(e as Error).message}`);
  }
  return decodeAdmissionReview(value);
}
