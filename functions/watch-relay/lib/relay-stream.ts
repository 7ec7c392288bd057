// One kind's list/watch stream: lists (paged), then watches from the list's resourceVersion with
// bookmarks, reconnects with backoff, relists after 410 Gone or when the watchdog ended a silent
// watch. What it sees goes to a sink; what to publish is the sink's business (relay.ts).
import type { MessageKind } from '../../../shared/bus/envelope.ts';
import { listPages } from '../../../shared/kube/api.ts';
import type { KubeClient, WatchHandle } from '../../../shared/kube/client.ts';
import { backoffDelay, WATCH_RECONNECT } from '../../../shared/kube/retry.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { Logger } from '../../../shared/log.ts';
import { seenOf } from './relay-state.ts';
import { VersionIndex, type Change, type Seen } from './versions.ts';

export interface StreamCounters {
  eventsSeen: number;
  bookmarks: number;
  relists: number;
  gone: number;
  watches: number;
  reconnects: number;
  silentRelists: number;
}

export interface StreamSink {
  /**
   * An object listed (`LISTED`) or watched: remembers what it needs of it and says which message to
   * send, if any. `change` is the one the versions call for, or null when it is unchanged (a
   * watch replay, or a relist that is not a resync).
   */
  seen(obj: KubeObject, event: 'LISTED' | 'ADDED' | 'MODIFIED' | 'DELETED', change: Change | null): Change | null;
  send(change: Change): void;
  /** Room to send: a list waits for it before each message (undefined: room already). */
  room(): Promise<void> | undefined;
  /** An object a relist no longer found (deleted while not watching); `listVersion`: the resourceVersion of the list that found it gone. */
  gone(change: Change, listVersion: string): void;
}

/** What a stream watches of its collection, and how its index names an object. */
export interface StreamScope {
  labelSelector?: string;
  fieldSelector?: string;
  /** The object's entry in the index (default seenOf: by name; ApplySet parents, all named alike, by namespace). */
  identify?: (obj: KubeObject) => Seen;
}

export interface StreamDeps {
  kube: KubeClient;
  log: Logger;
  counters: StreamCounters;
  pageSize: number;
  watchTimeoutSeconds: number;
  watchSilenceSeconds: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  sink: StreamSink;
}

interface WatchEvent {
  type?: string;
  object?: KubeObject & { code?: number; reason?: string };
}

/** Sends each message once there is room (backpressure on the list that found them). */
async function sendWithRoom(sink: StreamSink, messages: Change[]): Promise<void> {
  for (const m of messages) {
    const room = sink.room();
    if (room) await room;
    sink.send(m);
  }
}

export class WatchStream {
  readonly index = new VersionIndex();
  private resourceVersion = '';
  private watch?: WatchHandle;
  private connected = false;
  private listed = false;
  /** When the current watch last said anything (an event or a bookmark), ms since the epoch. */
  private lastSeen = 0;
  /** The watchdog ended the current watch: relist, as after 410. */
  private endedSilent = false;
  private stopped = false;

  readonly kind: MessageKind;
  readonly path: string;
  /** A kind whose API may not be served (its CRD not installed yet): a 404 lists as empty. */
  readonly optional: boolean;
  private readonly deps: StreamDeps;
  private readonly scope: StreamScope;
  private readonly identify: (obj: KubeObject) => Seen;

  constructor(kind: MessageKind, path: string, deps: StreamDeps, optional = false, scope: StreamScope = {}) {
    this.kind = kind;
    this.path = path;
    this.deps = deps;
    this.optional = optional;
    this.scope = scope;
    this.identify = scope.identify ?? seenOf;
  }

  /** A list has completed once (the next one is a relist). */
  get hasListed(): boolean {
    return this.listed;
  }

  /** A half-open connection delivers nothing and never ends: silent for longer than the bound, it is presumed dead. */
  silent(): boolean {
    const ms = this.deps.watchSilenceSeconds * 1000;
    return ms > 0 && this.connected && this.deps.now() - this.lastSeen > ms;
  }

  ready(): boolean {
    return this.optional || (this.listed && this.connected && !this.silent());
  }

  /** The watchdog's tick: ends a silent watch (the loop relists). */
  checkSilence(): void {
    if (!this.silent() || this.endedSilent) return;
    this.endedSilent = true;
    this.watch?.stop();
  }

  stop(): void {
    this.stopped = true;
    this.watch?.stop();
  }

  /** Lists everything; reports changes (and SYNC for unchanged objects when `syncAll`). Returns false on failure. */
  async relist(syncAll: boolean): Promise<boolean> {
    const { counters, sink } = this.deps;
    counters.relists += 1;
    const pass = this.index.relist();
    // A whole page is judged at once; only its messages (names and versions) wait for room to be
    // sent, the page itself is let go (listPages).
    const { labelSelector, fieldSelector } = this.scope;
    const res = await listPages(this.deps.kube, this.path, { limit: this.deps.pageSize, labelSelector, fieldSelector }, (items) => {
      const messages: Change[] = [];
      for (const obj of items) {
        const seen = this.identify(obj);
        const change = pass.listed(seen);
        const message = sink.seen(obj, 'LISTED', change ?? (syncAll ? { ...seen, type: 'SYNC' } : null));
        if (message) messages.push(message);
      }
      return messages.length > 0 ? sendWithRoom(sink, messages) : undefined;
    });
    if (!res.ok && !(res.status === 404 && this.optional)) {
      this.deps.log.log('WARNING', 'list failed', { kind: this.kind, status: res.status, error: res.error });
      return false;
    }
    for (const gone of pass.finish()) sink.gone(gone, res.resourceVersion);
    this.resourceVersion = res.resourceVersion;
    this.listed = true;
    return true;
  }

  private onEvent(ev: WatchEvent, markGone: () => void): void {
    const { counters } = this.deps;
    this.lastSeen = this.deps.now();
    const obj = ev.object;
    if (!obj) return;
    if (ev.type === 'BOOKMARK') {
      counters.bookmarks += 1;
      if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
      return;
    }
    if (ev.type === 'ERROR') {
      if (obj.code === 410 || obj.reason === 'Expired' || obj.reason === 'Gone') markGone();
      else this.deps.log.log('WARNING', 'watch error event', { kind: this.kind, code: obj.code, reason: obj.reason });
      return;
    }
    if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED' && ev.type !== 'DELETED') return;
    counters.eventsSeen += 1;
    if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
    const message = this.deps.sink.seen(obj, ev.type, this.index.observe(ev.type, this.identify(obj)));
    if (message) this.deps.sink.send(message);
  }

  /** Watches until stopped; relists when needed. */
  async run(): Promise<void> {
    const { counters, log } = this.deps;
    let failures = 0;
    let needList = !this.listed;
    while (!this.stopped) {
      if (needList) {
        if (!(await this.relist(false))) {
          failures += 1;
          await this.deps.sleep(backoffDelay(WATCH_RECONNECT, failures));
          continue;
        }
        needList = false;
        // Stopped while listing: a watch opened now would outlive stop() (up to its timeout).
        if (this.stopped) break;
      }
      let gone = false;
      const handle = this.deps.kube.watch({ method: 'GET', path: this.path, query: { watch: 1, labelSelector: this.scope.labelSelector, fieldSelector: this.scope.fieldSelector, resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: this.deps.watchTimeoutSeconds } }, (ev) =>
        this.onEvent(ev as WatchEvent, () => {
          gone = true;
          handle.stop();
        }),
      );
      this.watch = handle;
      this.connected = true;
      this.lastSeen = this.deps.now();
      counters.watches += 1;
      const res = await handle.done;
      this.connected = false;
      if (this.stopped) break;
      if (this.endedSilent) {
        this.endedSilent = false;
        counters.silentRelists += 1;
        log.log('WARNING', 'watch silent for too long: relisting', { kind: this.kind, silentSeconds: this.deps.watchSilenceSeconds });
        needList = true;
        continue;
      }
      if (gone || res.status === 410) {
        counters.gone += 1;
        log.log('INFO', 'resourceVersion expired (410 Gone): relisting', { kind: this.kind, resourceVersion: this.resourceVersion });
        needList = true;
        failures = 0;
        continue;
      }
      if (res.ok) {
        failures = 0;
        continue;
      }
      failures += 1;
      counters.reconnects += 1;
      const delay = backoffDelay(WATCH_RECONNECT, failures);
      log.log('WARNING', 'watch failed; reconnecting', { kind: this.kind, status: res.status, error: res.error, delayMs: delay });
      await this.deps.sleep(delay);
    }
  }
}
