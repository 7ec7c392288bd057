// Watches: newline-delimited JSON events over a chunked response, starting from the current state
// (no resourceVersion, or "0") or resuming after a resourceVersion from the store's history, with
// selectors applied the way the watch cache applies them (an object leaving the selection is
// DELETED, one entering it is ADDED), periodic BOOKMARKs, a server-side timeout, and a 410 Expired
// ERROR event when the history no longer reaches back far enough.
import type { ServerResponse } from 'node:http';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { expired } from './errors.ts';
import { selectObjects, type ApiRequest } from './operations.ts';
import { apiVersionOf } from './resources.ts';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import type { Sim } from './sim.ts';
import type { StoredEvent, WatchEventType } from './store.ts';
import { asTable, tableOptions } from './tables.ts';

export interface WatchOptions {
  /** Fault injection: end the stream after this long. */
  closeAfterMs?: number;
  /** Called once the stream has ended, whatever ended it. */
  onEnd?: () => void;
}

type EventType = WatchEventType | 'BOOKMARK' | 'ERROR';

function selection(sim: Sim, req: ApiRequest): (obj: KubeObject | undefined) => boolean {
  const labels = parseLabelSelector(req.query.get('labelSelector') ?? undefined);
  const fields = parseFieldSelector(req.query.get('fieldSelector') ?? undefined, req.type.kind);
  const namespace = req.type.namespaced ? req.namespace : undefined;
  return (obj) => obj !== undefined && (namespace === undefined || obj.metadata.namespace === namespace)
    && matchesLabels(labels, obj.metadata.labels) && matchesFields(fields, obj);
}

/** What a filtered watcher sees of one stored change. */
function translate(event: StoredEvent, selected: (obj: KubeObject | undefined) => boolean): WatchEventType | undefined {
  const now = selected(event.object);
  if (event.type !== 'MODIFIED') return now ? event.type : undefined;
  const before = selected(event.previous);
  if (now && before) return 'MODIFIED';
  if (now) return 'ADDED';
  return before ? 'DELETED' : undefined;
}

export function serveWatch(sim: Sim, req: ApiRequest, res: ServerResponse, options: WatchOptions = {}): void {
  const typeKey = sim.keyOf(req.type);
  const selected = selection(sim, req); // throws 400 on a bad selector, before any header is sent
  const table = tableOptions(req.accept, req.query); // `kubectl get -w`: every object a one-row Table
  const rvParam = req.query.get('resourceVersion') ?? '';
  const sendInitial = req.query.get('sendInitialEvents') === 'true';
  const bookmarks = req.query.get('allowWatchBookmarks') === 'true';
  const timeoutSeconds = Number(req.query.get('timeoutSeconds') ?? sim.options.defaultWatchTimeoutSeconds);

  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  let headers = true; // column definitions in the first event only, as kube-apiserver sends them
  const write = (type: EventType, object: unknown): void => {
    if (res.writableEnded) return;
    const sent = table && type !== 'ERROR' ? asTable(req.type, object as KubeObject, table, headers) : object;
    if (sent !== object) headers = false;
    res.write(`${JSON.stringify({ type, object: sent })}\n`);
  };
  const bookmark = (annotations?: Record<string, string>): void => write('BOOKMARK', {
    kind: req.type.kind, apiVersion: apiVersionOf(req.type),
    metadata: { resourceVersion: String(sim.store.currentResourceVersion()), ...(req.type.crdName ? {} : { creationTimestamp: null }), ...(annotations ? { annotations } : {}) },
  });

  let lastSent = 0;
  const deliver = (event: StoredEvent): void => {
    if (event.typeKey !== typeKey || event.rv <= lastSent) return;
    lastSent = event.rv;
    const type = translate(event, selected);
    if (type) write(type, event.object);
  };

  const timers: Array<ReturnType<typeof setTimeout>> = [];
  let unsubscribe = (): void => {};
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    unsubscribe();
    for (const t of timers) clearTimeout(t);
    if (!res.writableEnded) res.end();
    options.onEnd?.();
  };
  res.on('close', end);

  if (rvParam === '' || rvParam === '0' || sendInitial) {
    for (const obj of selectObjects(sim, req)) write('ADDED', obj);
    lastSent = sim.store.currentResourceVersion();
    if (sendInitial && bookmarks) bookmark({ 'k8s.io/initial-events-end': 'true' });
  } else {
    const from = Number(rvParam);
    const history = Number.isFinite(from) ? sim.store.eventsSince(typeKey, from) : undefined;
    if (!history) {
      write('ERROR', expired(rvParam, sim.store.oldestResumableResourceVersion() + 1));
      end();
      return;
    }
    lastSent = from;
    for (const event of history) deliver(event);
    lastSent = Math.max(lastSent, sim.store.currentResourceVersion());
  }
  unsubscribe = sim.store.subscribe(deliver);

  if (bookmarks) timers.push(setInterval(() => bookmark(), sim.options.bookmarkIntervalMs));
  if (timeoutSeconds > 0) timers.push(setTimeout(end, timeoutSeconds * 1000));
  if (options.closeAfterMs !== undefined) timers.push(setTimeout(end, options.closeAfterMs));
}
