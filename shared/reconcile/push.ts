// Pub/Sub push delivery, decoded once for both reconcilers. The HTTP status is the ack:
//   2xx  acknowledged (converged, skipped, gone, a permanent failure already reported, or a
//        message that can never be processed: it is logged, not redelivered forever);
//   503  transient failure: Pub/Sub redelivers with the subscription's backoff;
//   500  unexpected error: redelivered too;
//   400  not a push envelope; 401/403 the OIDC token did not verify.
import type { PushVerifier } from '../auth/oidc.ts';
import { withCause } from '../kube/cause.ts';
import { PermanentError, TransientError } from '../kube/errors.ts';
import type { Logger } from '../log.ts';
import { decodeMessage, type MessageKind, type ReconcileMessage } from '../bus/envelope.ts';

export interface PushEnvelope {
  message: { data?: string; attributes?: Record<string, string>; messageId?: string; message_id?: string; orderingKey?: string; publishTime?: string };
  subscription?: string;
  deliveryAttempt?: number;
}

export type EnvelopeCheck = { ok: true; envelope: PushEnvelope } | { ok: false; reason: string };

export function checkEnvelope(body: unknown): EnvelopeCheck {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { ok: false, reason: 'body is not a Pub/Sub push envelope (expected {message, subscription})' };
  const message = (body as { message?: unknown }).message;
  if (!message || typeof message !== 'object' || Array.isArray(message)) return { ok: false, reason: 'envelope has no message object' };
  const data = (message as { data?: unknown }).data;
  if (data !== undefined && typeof data !== 'string') return { ok: false, reason: 'message.data must be a base64 string' };
  return { ok: true, envelope: body as PushEnvelope };
}

export interface PushAnswer {
  status: number;
  body: Record<string, unknown>;
}

export type MessageHandler = (msg: ReconcileMessage) => Promise<Record<string, unknown>>;

export interface DeliveryOptions {
  accept: MessageKind;
  handle: MessageHandler;
  log: Logger;
  /** `performance.now()` after which the delivery sends no Kubernetes call (Cause.callsUntil). */
  callsUntil?: number;
}

/** Decodes, authenticates and dispatches one delivery; never throws. */
export async function handlePush(opts: DeliveryOptions & { verify: PushVerifier }, authorization: string | undefined, body: unknown): Promise<PushAnswer> {
  return (await refusedPush(opts.verify, authorization, opts.log)) ?? handleEnvelope(opts, body);
}

/** The answer to a push whose OIDC token does not verify; undefined when it may proceed. */
export async function refusedPush(verify: PushVerifier, authorization: string | undefined, log: Logger): Promise<PushAnswer | undefined> {
  const auth = await verify(authorization);
  if (auth.ok) return undefined;
  log.log('WARNING', 'push request refused', { status: auth.status, reason: auth.reason });
  return { status: auth.status, body: { error: auth.reason } };
}

type Decode<T> = (data: string | undefined) => { ok: true; message: T } | { ok: false; reason: string };
export type OpenedEnvelope<T> = { ok: true; message: T; messageId: string } | { ok: false; answer: PushAnswer };

/**
 * The steps every push function shares before its own work: a body that is not an envelope is
 * 400; data that does not decode can never be processed, so it is logged and acknowledged (204).
 */
export function openEnvelope<T>(body: unknown, decode: Decode<T>, log: Logger, what = 'message'): OpenedEnvelope<T> {
  const checked = checkEnvelope(body);
  if (!checked.ok) return { ok: false, answer: { status: 400, body: { error: checked.reason } } };
  const { message } = checked.envelope;
  const messageId = message.messageId ?? message.message_id ?? '';
  const decoded = decode(message.data);
  if (decoded.ok) return { ok: true, message: decoded.message, messageId };
  log.log('ERROR', `undecodable ${what} acknowledged`, { messageId, reason: decoded.reason });
  return { ok: false, answer: { status: 204, body: { acknowledged: true, error: decoded.reason } } };
}

export async function handleEnvelope(opts: DeliveryOptions, body: unknown): Promise<PushAnswer> {
  const decoded = openEnvelope(body, decodeMessage, opts.log);
  if (!decoded.ok) return decoded.answer;
  const { messageId } = decoded;
  if (decoded.message.kind !== opts.accept) {
    opts.log.log('WARNING', 'message of another kind acknowledged', { messageId, kind: decoded.message.kind });
    return { status: 204, body: { acknowledged: true, ignored: decoded.message.kind } };
  }
  try {
    const { kind, name, cause: by } = decoded.message;
    // Every API call this delivery makes carries its cause (cause.ts), and stops at its deadline.
    const result = await withCause({ kind, name, by, callsUntil: opts.callsUntil }, () => opts.handle(decoded.message));
    return { status: 200, body: { acknowledged: true, ...result } };
  } catch (e) {
    if (e instanceof TransientError) {
      opts.log.log('WARNING', 'transient failure, delivery will be retried', { messageId, name: decoded.message.name, error: e.message });
      return { status: 503, body: { error: e.message } };
    }
    if (e instanceof PermanentError) {
      opts.log.log('ERROR', 'permanent failure, delivery acknowledged', { messageId, name: decoded.message.name, status: e.failure.status, error: e.message });
      return { status: 200, body: { acknowledged: true, error: e.message } };
    }
    opts.log.log('ERROR', 'reconcile crashed, delivery will be retried', { messageId, name: decoded.message.name, error: (e as Error).stack ?? String(e) });
    return { status: 500, body: { error: (e as Error).message } };
  }
}
