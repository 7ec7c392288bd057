// The only layer that decodes and encodes. A webhook function is a typed AdmissionHandler wrapped
// by small decorators: liveness (GET /healthz, no token), authentication from the path and headers
// before any body is read (401, no decision), and the AdmissionReview codec (415 wrong content
// type, 413 too large, 400 empty or malformed, 405 not POST), which reads the body only then,
// once the review's memory is within the process's budget (memory-budget.ts; 429 when it cannot
// be within half the caller's timeout), and refuses a body too deep or with too many values from
// its bytes, before parsing it (admission/scan.ts).
// Every refusal is a metav1.Status JSON with a clear message; none repeats the request path (it may
// carry a credential).
import type { HttpFunction, Request, Response } from '@google-cloud/functions-framework';
import { AdmissionError, isAdmissionError } from '../admission/errors.ts';
import { decodeAdmissionReview, parseAdmissionReview } from '../admission/decode.ts';
import { BODY_LIMITS, type BodyScan } from '../admission/scan.ts';
import { deny, toReview } from '../admission/response.ts';
import type { AdmissionResponse, DecodedReview } from '../admission/types.ts';
import type { AuthResult, WebhookAuthenticator, WebhookCall } from '../auth/webhook-token.ts';
import { bodyIsHeld, closeUnread, expectedBodyBytes, readBody } from './body.ts';
import { MemoryBudget, reviewCost, type Permit } from './memory-budget.ts';
import type { ClusterConfig, WebhookName } from '../config/types.ts';
import type { AdmissionHandler, WebhookDeps } from './deps.ts';
import { jsonLogger, type Logger } from '../log.ts';
import { readSetting } from '../config/settings.ts';
import { withDecisionRecord, withMetrics } from './observe.ts';

// Decorators stay synchronous on the hot path (a recently verified token, a handler that needs no
// look-up): the functions framework runs every request in a domain, where each promise costs.
type Handle = (req: Request, res: Response) => void | Promise<void>;
type AuthenticatedHandle = (req: Request, res: Response, cluster: ClusterConfig) => void | Promise<void>;
type Decide = (review: DecodedReview, cluster: ClusterConfig) => AdmissionResponse | Promise<AdmissionResponse>;

const REASONS: Record<number, string> = { 400: 'BadRequest', 401: 'Unauthorized', 405: 'MethodNotAllowed', 413: 'RequestEntityTooLarge', 415: 'UnsupportedMediaType', 429: 'TooManyRequests', 500: 'InternalError' };

/** Answers with a metav1.Status, the shape kubectl and kube-apiserver print. */
export function sendStatus(res: Response, code: number, message: string, headers: Record<string, string> = {}): void {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.status(code).type('application/json').send(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason: REASONS[code] ?? 'Failure', message }));
}

export function withLiveness(next: Handle): Handle {
  return (req, res) => {
    if (req.method === 'GET' && req.path.endsWith('/healthz')) {
      res.status(200).type('application/json').send('{"status":"ok"}');
      return;
    }
    return next(req, res);
  };
}

/** How long a refused connection stays half-open, so its client reads the answer before the close. */
const LINGER_MS = 2000;

/** A refusal before the body was read closes the connection, without reading the rest of the body. */
function refuse(req: Request, res: Response, code: number, message: string, headers: Record<string, string> = {}): void {
  if (!bodyIsHeld(req) || req.complete) return sendStatus(res, code, message, headers);
  closeUnread(req, LINGER_MS);
  sendStatus(res, code, message, { ...headers, connection: 'close' });
}

function callOf(req: Request): WebhookCall {
  return { path: req.originalUrl ?? req.url ?? '/', authorization: req.headers.authorization };
}

export function withAuthentication(authenticator: WebhookAuthenticator, next: AuthenticatedHandle): Handle {
  const proceed = (req: Request, res: Response, result: AuthResult) => {
    if (result.ok) return next(req, res, result.cluster);
    refuse(req, res, 401, result.message, { 'www-authenticate': 'Bearer' });
  };
  return (req, res) => {
    const call = callOf(req);
    const known = authenticator.cached(call);
    if (known) return proceed(req, res, known);
    return authenticator.authenticate(call).then((result) => proceed(req, res, result));
  };
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

function decodeBody(req: Request, raw: Buffer, maxBodyBytes: number, onScan?: (scan: BodyScan) => void): DecodedReview {
  if (raw.length === 0) throw new AdmissionError('empty-body', 'request body is empty: expected an AdmissionReview');
  // Where the framework parsed the JSON already (a server the gate does not hold), use its value.
  const parsed = !bodyIsHeld(req) && typeof req.body === 'object' && req.body !== null && !Buffer.isBuffer(req.body);
  return parsed ? decodeAdmissionReview(req.body) : parseAdmissionReview(raw, maxBodyBytes, BODY_LIMITS, onScan);
}

/**
 * The review in an HTTP request, or an AdmissionError saying exactly what is wrong with it.
 * `onScan` learns the body's size and shape before it is parsed.
 */
export function readReview(req: Request, maxBodyBytes: number, onScan?: (scan: BodyScan, bytes: number) => void): DecodedReview | Promise<DecodedReview> {
  const type = mediaType(req.headers['content-type']);
  if (type !== 'application/json') {
    throw new AdmissionError('wrong-content-type', `content type must be application/json, got ${type ? JSON.stringify(type.slice(0, 80)) : 'none'}`);
  }
  const decode = (body: Buffer) => decodeBody(req, body, maxBodyBytes, onScan && ((scan) => onScan(scan, body.length)));
  const raw = readBody(req, maxBodyBytes);
  return raw instanceof Promise ? raw.then(decode) : decode(raw);
}

function answer(res: Response, review: DecodedReview, response: AdmissionResponse): void {
  response.uid = review.request.uid;
  res.status(200).type('application/json').send(JSON.stringify(toReview(response)));
}

function fail(res: Response, review: DecodedReview, e: unknown, log: Logger): void {
  if (isAdmissionError(e)) {
    sendStatus(res, e.status, e.message);
    return;
  }
  log.log('ERROR', 'webhook failed', { uid: review.request.uid, error: (e as Error).stack ?? String(e) });
  sendStatus(res, 500, `internal error deciding request ${review.request.uid}: ${(e as Error).message}`);
}

/**
 * Estimated memory of reviews in progress a webhook process holds at most: 75 % of the deployed
 * 256 MiB (terraform/variables.tf webhook.memory) less the process at rest (~80 MiB RSS) and slack
 * for garbage not yet collected (test/bench/webhooks-memory.bench.ts: 32 at once peak at 150 MiB).
 */
export const DEFAULT_MEMORY_BUDGET = 96 * 1024 * 1024;

/** One budget per process: `npm start` serves every webhook from one. */
const processBudget = new MemoryBudget(DEFAULT_MEMORY_BUDGET);

/** kube-apiserver's default webhook timeout, for a call that does not say (`?timeout=3s`). */
const DEFAULT_TIMEOUT_MS = 10_000;

/** How long a review may wait for memory: half the caller's timeout, leaving it time to retry. */
export function budgetWaitMs(url: string | undefined): number {
  const timeout = new URL(url ?? '/', 'http://webhook').searchParams.get('timeout') ?? '';
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(timeout);
  const ms = m ? Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2] as 'ms' | 's' | 'm'] : DEFAULT_TIMEOUT_MS;
  return Math.min(ms, 30_000) / 2;
}

function unreadable(req: Request, res: Response, e: unknown, log: Logger): void {
  if (!isAdmissionError(e)) throw e;
  // Refused from its bytes, with its uid read from them: the request's denial, as a decision is.
  if (e.uid !== undefined) {
    log.log('INFO', 'review refused before parsing', { uid: e.uid, code: e.status, message: e.message });
    res.status(200).type('application/json').send(JSON.stringify(toReview(deny({ uid: e.uid }, e.message, e.status))));
    return;
  }
  refuse(req, res, e.status, e.message, e.code === 'busy' ? { 'retry-after': '1' } : {});
}

export function withAdmissionCodec(maxBodyBytes: number, decide: Decide, log: Logger, budget: MemoryBudget = processBudget): AuthenticatedHandle {
  const decideAndAnswer = (res: Response, review: DecodedReview, cluster: ClusterConfig): void | Promise<void> => {
    let decided: AdmissionResponse | Promise<AdmissionResponse>;
    try {
      decided = decide(review, cluster);
    } catch (e) {
      fail(res, review, e, log);
      return;
    }
    if (decided instanceof Promise) {
      return decided.then(
        (response) => answer(res, review, response),
        (e: unknown) => fail(res, review, e, log),
      );
    }
    answer(res, review, decided);
  };
  const readAndDecide = (req: Request, res: Response, cluster: ClusterConfig, permit: Permit): void | Promise<void> => {
    // The memory is given back once the answer is sent, or the connection is gone.
    if (req.socket.destroyed) return permit.release();
    res.once('close', () => permit.release());
    let review: DecodedReview | Promise<DecodedReview>;
    try {
      // Counted, the review's values are known: what it was granted for more is given back before parsing.
      review = readReview(req, maxBodyBytes, (scan, bytes) => permit.shrink(reviewCost(bytes, scan.values)));
    } catch (e) {
      return unreadable(req, res, e, log);
    }
    if (review instanceof Promise) return review.then((r) => decideAndAnswer(res, r, cluster), (e: unknown) => unreadable(req, res, e, log));
    return decideAndAnswer(res, review, cluster);
  };
  return (req, res, cluster) => {
    if (req.method !== 'POST') {
      refuse(req, res, 405, `method ${String(req.method).slice(0, 20)} not allowed: POST an AdmissionReview (GET /healthz for liveness)`, { allow: 'POST' });
      return;
    }
    const permit = budget.acquire(reviewCost(expectedBodyBytes(req, maxBodyBytes)), budgetWaitMs(req.originalUrl ?? req.url));
    if (permit instanceof Promise) return permit.then((p) => readAndDecide(req, res, cluster, p), (e: unknown) => unreadable(req, res, e, log));
    return readAndDecide(req, res, cluster, permit);
  };
}

export interface WebhookServerOptions {
  webhook: WebhookName;
  handler: AdmissionHandler;
  authenticator: WebhookAuthenticator;
  depsFor: (cluster: ClusterConfig) => WebhookDeps;
  maxBodyBytes: number;
  /** Where failures and the one line per admission decision go; default: one JSON line with severity on stderr (Cloud Logging parses it). */
  log?: Logger;
  /** The memory reviews in progress may hold; default: the process's, DEFAULT_MEMORY_BUDGET. */
  budget?: MemoryBudget;
}

/** The webhooks' logger: the structured one every component uses, on stderr so that the framework's stdout stays its own. */
export function webhookLogger(webhook: string): Logger {
  return jsonLogger(webhook, (line) => process.stderr.write(line), readSetting(process.env, 'logLevel'));
}

function crashed(res: Response, e: unknown, log: Logger): void {
  log.log('ERROR', 'webhook failed', { error: (e as Error).stack ?? String(e) });
  if (!res.headersSent) sendStatus(res, 500, 'internal error');
}

/** The HTTP function of one webhook. */
export function webhookHttpFunction(options: WebhookServerOptions): HttpFunction {
  const { handler, depsFor } = options;
  const log = options.log ?? webhookLogger(options.webhook);
  const decide = withDecisionRecord(options.webhook, log, (review, cluster: ClusterConfig) => handler(review.request, depsFor(cluster)));
  const handle = withLiveness(withMetrics(options.webhook, withAuthentication(options.authenticator, withAdmissionCodec(options.maxBodyBytes, decide, log, options.budget))));
  return (req, res) => {
    try {
      const pending = handle(req, res);
      if (pending) pending.catch((e: unknown) => crashed(res, e, log));
    } catch (e) {
      crashed(res, e, log);
    }
  };
}
