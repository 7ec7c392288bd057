// Reading a webhook's request body ourselves, after authentication, with a limit. The functions
// framework would otherwise buffer and parse up to 1 GiB of any caller's body before our code runs
// (body-parser, limit '1024mb'). The gate (body-gate.ts) hides a webhook request's body headers
// from the framework, so its parsers skip the body; the unread stream is ours to read here: refused
// from Content-Length when it is over the limit, and while streaming when there is none.
import type { IncomingMessage } from 'node:http';
import { AdmissionError } from '../admission/errors.ts';

/** The body headers the gate took away from the framework. */
export interface HeldBodyHeaders {
  contentLength?: string;
  transferEncoding?: string;
}

const HELD = Symbol.for('furnish.dev/held-body-headers');

type Gated = IncomingMessage & { [HELD]?: HeldBodyHeaders; rawBody?: Buffer };

/**
 * Hides the body from the framework's parsers (they skip a request without Content-Length or
 * Transfer-Encoding) and keeps the headers for `readBody`. Called before the framework sees the request.
 */
export function holdBody(req: IncomingMessage): void {
  const held: HeldBodyHeaders = {};
  const { headers } = req;
  if (headers['content-length'] !== undefined) held.contentLength = headers['content-length'];
  if (headers['transfer-encoding'] !== undefined) held.transferEncoding = headers['transfer-encoding'];
  delete headers['content-length'];
  delete headers['transfer-encoding'];
  (req as Gated)[HELD] = held;
}

/** True when the body is still unread on the socket (the gate held it). */
export function bodyIsHeld(req: IncomingMessage): boolean {
  return (req as Gated)[HELD] !== undefined;
}

function tooLarge(size: number | undefined, max: number): AdmissionError {
  const what = size === undefined ? 'request body streamed past' : `request body is ${size} bytes, more than`;
  return new AdmissionError('too-large', `${what} the limit of ${max} bytes`);
}

/** The declared length, or an error for a malformed one. */
export function declaredLength(value: string | undefined, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,16}$/.test(value)) throw new AdmissionError('invalid-request', `Content-Length ${JSON.stringify(value.slice(0, 40))} is not a number of bytes`);
  const length = Number(value);
  if (length > max) throw tooLarge(length, max);
  return length;
}

/**
 * The most bytes the body will have, known before it is read: its declared length (or, read by
 * the framework already, its length), else `max`.
 */
export function expectedBodyBytes(req: IncomingMessage, max: number): number {
  const gated = req as Gated;
  const held = gated[HELD];
  if (!held) return gated.rawBody?.length ?? 0;
  const declared = held.contentLength;
  return declared !== undefined && /^\d{1,16}$/.test(declared) ? Math.min(Number(declared), max) : max;
}

/**
 * The body, at most `max` bytes. A body the framework already read (a server the gate does not
 * hold) is taken from `rawBody`; a held one is read from the stream, and reading stops at the
 * first byte over the limit.
 */
export function readBody(req: IncomingMessage, max: number): Buffer | Promise<Buffer> {
  const gated = req as Gated;
  const held = gated[HELD];
  if (!held) {
    const raw = gated.rawBody ?? Buffer.alloc(0);
    if (raw.length > max) throw tooLarge(raw.length, max);
    return raw;
  }
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') throw new AdmissionError('wrong-content-type', `content encoding ${JSON.stringify(encoding.slice(0, 40))} is not supported: send identity`);
  const length = declaredLength(held.contentLength, max);
  if (length === 0 || (length === undefined && held.transferEncoding === undefined)) return Buffer.alloc(0);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (error?: Error) => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted);
      if (error) {
        // Stop reading: what is left on the socket is discarded when the answer closes it.
        req.pause();
        reject(error);
      } else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) return done(tooLarge(undefined, max));
      chunks.push(chunk);
    };
    const onEnd = () => done(length !== undefined && size !== length ? new AdmissionError('invalid-request', `request body ended after ${size} of ${length} declared bytes`) : undefined);
    const onError = (e: Error) => done(new AdmissionError('invalid-request', `request body could not be read: ${e.message}`));
    const onAborted = () => done(new AdmissionError('invalid-request', 'request body aborted by the client'));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
  });
}

/**
 * After a refusal sent before the body was read: the connection closes without reading any more of
 * it. Closing at once, with the client's body still arriving, would reset the connection before the
 * client reads the answer; so the answer is followed by a FIN, the socket stops reading (the
 * client's upload stalls on TCP flow control, nothing is buffered here) and is destroyed after
 * `lingerMs`, or as soon as the client closes.
 */
export function closeUnread(req: IncomingMessage, lingerMs: number): void {
  const socket = req.socket;
  req.pause();
  // read(0) marks the request as consumed: Node then does not drain (read and drop) the unread
  // body once the answer is written, which would pull the whole upload through this process.
  req.read(0);
  // Node calls destroySoon() once the answer is written to a connection that is closing.
  socket.destroySoon = function lingeringClose(this: typeof socket) {
    this.pause();
    this.end();
    const timer = setTimeout(() => this.destroy(), lingerMs);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
    this.once('end', () => this.destroy());
  };
}
