// Which state a list answers with, from its `resourceVersion` and `resourceVersionMatch`, validated
// and answered as kube-apiserver 1.26 does (captured: test/fixtures/kube-apiserver-1.26/api/
// list-namespaces-{not-older-than,rv-too-large,match-without-rv}.http). kube-sim has one
// resourceVersion counter that every kind shares, so any version it has handed out is "reached";
// the real watch cache is per resource and may never reach a version of another resource (504).
import { invalid, listExpired, storageError, tooLargeResourceVersion, type FieldError } from '../errors.ts';
import type { Sim } from '../sim.ts';
import type { ApiRequest } from './request.ts';

/** latest: read from storage now. notOlderThan: the watch cache once it reached `rv`. exact: the collection as it stood at `rv`. */
export type ListVersion = { kind: 'latest' } | { kind: 'notOlderThan'; rv: number } | { kind: 'exact'; rv: number };

const MATCHES = ['Exact', 'NotOlderThan', ''];

/** What ListOptions validation says about the pair (422 Invalid, every cause at once, as the real server). */
function matchErrors(rv: string, match: string): FieldError[] {
  const errors: FieldError[] = [];
  if (match && !rv) errors.push({ type: 'FieldValueForbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden unless resourceVersion is provided' });
  if (!MATCHES.includes(match)) errors.push({ type: 'FieldValueNotSupported', field: 'resourceVersionMatch', value: match, detail: `supported values: ${MATCHES.map((m) => JSON.stringify(m)).join(', ')}` });
  if (match === 'Exact' && rv === '0') errors.push({ type: 'FieldValueForbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"' });
  return errors;
}

/**
 * The version a list asks for. No resourceVersion, or "0" (any state, the cache's): the latest.
 * A number without a match: NotOlderThan (the 1.26 semantics of a list without `limit`; with a
 * `limit` the real server reads etcd Exact, kube-sim the latest, as before).
 */
export function listVersion(query: URLSearchParams): ListVersion {
  const rv = query.get('resourceVersion') ?? '';
  const match = query.get('resourceVersionMatch') ?? '';
  const errors = matchErrors(rv, match);
  if (errors.length > 0) throw invalid('meta.k8s.io', 'ListOptions', '', errors);
  if (rv === '' || rv === '0') return { kind: 'latest' };
  if (!/^[0-9]+$/.test(rv)) throw storageError(`resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: invalid syntax`);
  const n = Number(rv);
  if (match === 'Exact') return { kind: 'exact', rv: n };
  if (match === 'NotOlderThan' || !query.get('limit')) return { kind: 'notOlderThan', rv: n };
  return { kind: 'latest' };
}

/** Resolves once the store reached `rv`, or after `waitMs` (false). */
function reached(sim: Sim, rv: number, waitMs: number): Promise<boolean> {
  if (sim.store.currentResourceVersion() >= rv) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      unsubscribe();
      resolve(ok);
    };
    const unsubscribe = sim.store.subscribe(() => {
      if (sim.store.currentResourceVersion() >= rv) done(true);
    });
    const timer = setTimeout(() => done(false), waitMs);
  });
}

/**
 * Waits for a NotOlderThan version as the watch cache does: up to 3 s when served from the cache
 * (no `limit`), not at all from etcd (`limit`), then 504. Exact: a version kube-sim never reached
 * is etcd's "future revision" (500), one older than its history 410.
 */
export async function checkListVersion(sim: Sim, req: ApiRequest, version: ListVersion): Promise<void> {
  if (version.kind === 'latest') return;
  const current = sim.store.currentResourceVersion();
  if (version.kind === 'exact') {
    if (version.rv > current) throw storageError('etcdserver: mvcc: required revision is a future revision');
    if (version.rv < sim.store.oldestResumableResourceVersion()) throw listExpired();
    return;
  }
  const waitMs = req.query.get('limit') ? 0 : sim.options.listResourceVersionWaitMs;
  if (!(await reached(sim, version.rv, waitMs))) throw tooLargeResourceVersion(version.rv, sim.store.currentResourceVersion());
}

/** The snapshot an exact list reads (undefined: the latest). */
export function snapshotOf(version: ListVersion): number | undefined {
  return version.kind === 'exact' ? version.rv : undefined;
}
