// The relay's pure state and decisions: what each kind's reconciler last saw of an object (a
// fingerprint, to skip changes it cannot see), which namespaces are still pending and since when
// (to re-drive those whose message was lost). No I/O; the clock is passed in.
import { KEY, PHASE } from '../../../shared/keys.ts';
import type { MessageKind, MessageType } from '../../../shared/bus/envelope.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { namespaceChangeMatters, namespaceFingerprint, templateFingerprint } from '../../../shared/reconcile/fingerprints.ts';
import type { Change, Seen } from './versions.ts';

/** What a kind's reconciler sees of an object, as a short hex hash: a change that leaves it equal is worth no message. */
export type Fingerprint = (obj: KubeObject) => string;

/**
 * What the relay keeps of a fingerprint: the first 48 bits of a hex digest as a number (a 12-byte
 * heap number), not the string (a slice of the 64-digit digest, which it keeps alive: about 110
 * bytes per object); another fingerprint as it is. Two digests that differ only past 48 bits
 * (2^-48 per change) cost one message, which the next resync sends.
 */
export const compactFingerprint = (fp: string): number | string => (/^[0-9a-f]{12}/.test(fp) ? Number.parseInt(fp.slice(0, 12), 16) : fp);

/** Namespaces' and templates' fingerprints are the population's; other kinds' (LNamespaces) are handed in. */
export const BUILT_IN_FINGERPRINTS: Partial<Record<MessageKind, Fingerprint>> = {
  Namespace: namespaceFingerprint,
  NamespaceTemplate: (obj) => templateFingerprint(obj as NamespaceTemplate),
};

/** A namespace its creator is waiting on: labelled pending and not on its way out. */
export function isPendingNamespace(obj: KubeObject, type: MessageType): boolean {
  return type !== 'DELETED' && obj.metadata.labels?.[KEY.phase] === PHASE.pending && !obj.metadata.deletionTimestamp;
}

export function seenOf(obj: KubeObject): Seen {
  return { name: obj.metadata.name ?? '', uid: obj.metadata.uid ?? '', resourceVersion: obj.metadata.resourceVersion ?? '', generation: obj.metadata.generation };
}

interface Pending {
  uid: string;
  resourceVersion: string;
  /** When its last message was sent, ms since the epoch. */
  since: number;
}

/** How many recent waits (last message → ready or failed) the redrive period is judged on. */
const RECENT_WAITS = 100;
/** Waits older than this say nothing about now (a burst an hour ago). */
const WAIT_MAX_AGE_MS = 10 * 60_000;
/** The redrive period grows at most to this many times the configured one: a lost message is never left for long. */
const REDRIVE_MAX_FACTOR = 5;

/** One namespace's wait from its last message until it left pending, and when that was. */
export interface Wait {
  at: number;
  ms: number;
}

/**
 * How long a pending namespace waits before its message is presumed lost: the configured period,
 * or twice what namespaces take to leave pending now (the 90th percentile of the waits of the last
 * ten minutes), whichever is longer, and at most five periods. In a burst, namespaces queue for
 * longer than the period behind each other: their messages are not lost, and sending them again
 * would only double the backlog's work. The cap bounds what slow initializers or an outage can do
 * to the period.
 */
export function redriveAfter(periodMs: number, waits: readonly Wait[], now: number): number {
  const recent = waits.filter((w) => now - w.at <= WAIT_MAX_AGE_MS).map((w) => w.ms).sort((a, b) => a - b);
  if (recent.length === 0) return periodMs;
  const p90 = recent[Math.min(recent.length - 1, Math.floor(recent.length * 0.9))]!;
  return Math.min(REDRIVE_MAX_FACTOR * periodMs, Math.max(periodMs, 2 * p90));
}

export class RelayState {
  private readonly fingerprints: Record<MessageKind, Map<string, number | string>> = { Namespace: new Map(), NamespaceTemplate: new Map(), LNamespace: new Map() };
  private readonly pending = new Map<string, Pending>();
  /** The last RECENT_WAITS waits from a namespace's last message until it left pending (a ring). */
  private readonly waits: Wait[] = [];
  private nextWait = 0;

  private readonly now: () => number;
  private readonly fingerprintOf: Partial<Record<MessageKind, Fingerprint>>;

  constructor(now: () => number, fingerprints: Partial<Record<MessageKind, Fingerprint>> = {}) {
    this.now = now;
    this.fingerprintOf = { ...BUILT_IN_FINGERPRINTS, ...fingerprints };
  }

  /**
   * Remembers what the object looks like now and says whether the change is worth a message: a
   * change the reconcilers cannot see is not (a template's status, a namespace becoming ready by
   * the reconciler's own write). SYNC, ADDED and DELETED always are.
   */
  observe(kind: MessageKind, obj: KubeObject, type: MessageType): boolean {
    const name = obj.metadata.name ?? '';
    if (kind === 'Namespace') this.trackPending(obj, type);
    const known = this.fingerprints[kind];
    if (type === 'DELETED') {
      known.delete(name);
      return true;
    }
    const fingerprint = this.fingerprintOf[kind];
    if (!fingerprint) throw new Error(`relay: no fingerprint for kind ${kind}`);
    const fp = compactFingerprint(fingerprint(obj));
    const before = known.get(name);
    known.set(name, fp);
    if (type === 'SYNC' || type === 'ADDED') return true;
    return kind === 'Namespace' ? namespaceChangeMatters(obj, before, fp) : before !== fp;
  }

  /** An object found gone by a relist. */
  forget(kind: MessageKind, name: string): void {
    this.fingerprints[kind].delete(name);
    if (kind === 'Namespace') this.pending.delete(name);
  }

  private trackPending(obj: KubeObject, type: MessageType): void {
    const name = obj.metadata.name ?? '';
    const was = this.pending.get(name);
    if (!isPendingNamespace(obj, type)) {
      if (was && type !== 'DELETED' && !obj.metadata.deletionTimestamp) this.recordWait(this.now() - was.since);
      this.pending.delete(name);
      return;
    }
    const now = this.now();
    this.pending.set(name, { uid: obj.metadata.uid ?? '', resourceVersion: obj.metadata.resourceVersion ?? '', since: was?.since ?? now });
  }

  private recordWait(ms: number): void {
    this.waits[this.nextWait] = { at: this.now(), ms };
    this.nextWait = (this.nextWait + 1) % RECENT_WAITS;
  }

  /**
   * Namespaces pending since their last message for `periodMs`, or longer while namespaces take
   * longer than that to be furnished (redriveAfter), at most `limit` (a backlog, every namespace
   * pending behind a slow API, must not be doubled): each is marked sent now.
   */
  dueForRedrive(periodMs: number, limit: number): Change[] {
    const now = this.now();
    const after = redriveAfter(periodMs, this.waits, now);
    const due: Change[] = [];
    for (const [name, p] of this.pending) {
      if (due.length >= limit) break;
      if (now - p.since < after) continue;
      p.since = now;
      due.push({ name, uid: p.uid, resourceVersion: p.resourceVersion, type: 'SYNC' });
    }
    return due;
  }

  get pendingCount(): number {
    return this.pending.size;
  }
}
