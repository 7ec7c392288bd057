// The message that travels from the relay (and the template fan-out) to the reconcilers. It only
// names what changed and the revision it changed at: reconcilers read current state, at least
// that recent, so a message may be lost or duplicated without harm. The messages of one object
// share an ordering key, so its reconciles run one at a time (docs/adr/0009).

export const MESSAGE_VERSION = 1;

export type MessageKind = 'Namespace' | 'NamespaceTemplate' | 'LNamespace';
/**
 * Watch event types, plus SYNC (periodic resync), FANOUT (a template asks a namespace to
 * converge) and STATUS (a namespace's state for a template changed: recount its status).
 */
export type MessageType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'SYNC' | 'FANOUT' | 'STATUS';

export interface ReconcileMessage {
  v: typeof MESSAGE_VERSION;
  cluster: string;
  kind: MessageKind;
  name: string;
  uid?: string;
  /**
   * The revision of the change the message names (the object's, a parent's write, or what a
   * fan-out read): the receiver reads state at least this recent. Never trusted for more: a
   * forged one costs a list.
   */
  resourceVersion?: string;
  generation?: number;
  type: MessageType;
  /** Why, for logs: `template/<name>@<resourceVersion>` for FANOUT. */
  cause?: string;
  /**
   * Namespace messages from the relay: the namespace's organization (label furnish.dev/organization)
   * now and, when it differed, before (a transfer); [] when it has none. Absent: not known, so
   * reconcile-organization trues up every Organization.
   */
  organizations?: string[];
}

/** What a bus carries: opaque bytes, string attributes (filterable in Pub/Sub), an ordering key. */
export interface Envelope {
  data: Buffer;
  attributes: Record<string, string>;
  orderingKey: string;
}

const KINDS = new Set<string>(['Namespace', 'NamespaceTemplate', 'LNamespace']);
const TYPES = new Set<string>(['ADDED', 'MODIFIED', 'DELETED', 'SYNC', 'FANOUT', 'STATUS']);

/**
 * One ordering key per object: Pub/Sub delivers one object's messages in publish order, one at a
 * time (the next after the last is acknowledged): a namespace's reconciles never overlap. STATUS
 * messages ("recount") need no order, and one key per sending namespace lets a burst of them be
 * delivered at once and folded into one recount, instead of queueing one behind the other.
 */
export function orderingKey(msg: Pick<ReconcileMessage, 'cluster' | 'kind' | 'name'> & Partial<Pick<ReconcileMessage, 'type' | 'cause'>>): string {
  const key = `${msg.cluster}/${msg.kind}/${msg.name}`;
  return msg.type === 'STATUS' ? `${key}/status/${msg.cause ?? ''}` : key;
}

/** A STATUS message: reconcile-template recounts `template` (its ordering key is the cause's, so a burst is not delivered one by one). */
export function statusMessage(cluster: string, template: string, cause: string): ReconcileMessage {
  return { v: MESSAGE_VERSION, cluster, kind: 'NamespaceTemplate', name: template, type: 'STATUS', cause };
}

export function encodeMessage(msg: ReconcileMessage): Envelope {
  const attributes: Record<string, string> = { kind: msg.kind, type: msg.type, cluster: msg.cluster, name: msg.name };
  return { data: Buffer.from(JSON.stringify(msg)), attributes, orderingKey: orderingKey(msg) };
}

export type Decoded = { ok: true; message: ReconcileMessage } | { ok: false; reason: string };

/** A message's JSON object: from bytes (a bus delivery) or base64 (a push envelope). Never throws. */
export function parseMessageData(data: Buffer | string | undefined): { ok: true; value: Record<string, unknown> } | { ok: false; reason: string } {
  if (data === undefined || data.length === 0) return { ok: false, reason: 'empty message data' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data, 'base64').toString('utf8'));
  } catch {
    return { ok: false, reason: 'message data is not base64 JSON' };
  }
  if (!parsed || typeof parsed !== 'object') return { ok: false, reason: 'message data is not an object' };
  return { ok: true, value: parsed as Record<string, unknown> };
}

/** Label values (at most 63 characters), a few of them: anything else is dropped, which only costs a wider true-up. */
function isOrganizationList(v: unknown): v is string[] {
  return Array.isArray(v) && v.length <= 2 && v.every((o) => typeof o === 'string' && o !== '' && o.length <= 63);
}

/** Never throws: a malformed message is acknowledged and logged, never redelivered forever. */
export function decodeMessage(data: Buffer | string | undefined): Decoded {
  const parsed = parseMessageData(data);
  if (!parsed.ok) return parsed;
  const m = parsed.value;
  if (m.v !== MESSAGE_VERSION) return { ok: false, reason: `unsupported message version ${String(m.v)}` };
  if (typeof m.kind !== 'string' || !KINDS.has(m.kind)) return { ok: false, reason: `unknown kind ${String(m.kind)}` };
  if (typeof m.type !== 'string' || !TYPES.has(m.type)) return { ok: false, reason: `unknown type ${String(m.type)}` };
  if (typeof m.name !== 'string' || m.name === '' || m.name.length > 253) return { ok: false, reason: 'missing or invalid name' };
  if (typeof m.cluster !== 'string' || m.cluster === '') return { ok: false, reason: 'missing cluster' };
  const message: ReconcileMessage = { v: MESSAGE_VERSION, cluster: m.cluster, kind: m.kind as MessageKind, name: m.name, type: m.type as MessageType };
  if (typeof m.uid === 'string') message.uid = m.uid;
  if (typeof m.resourceVersion === 'string') message.resourceVersion = m.resourceVersion;
  if (typeof m.generation === 'number') message.generation = m.generation;
  if (typeof m.cause === 'string') message.cause = m.cause.slice(0, 300);
  if (isOrganizationList(m.organizations)) message.organizations = m.organizations;
  return { ok: true, message };
}
