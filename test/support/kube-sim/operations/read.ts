// get and list (selectors, pages with continue tokens); watch selects through `selectObjects`.
import type { KubeObject } from '../../../../shared/kube/types.ts';
import { badRequest, notFound } from '../errors.ts';
import { apiVersionOf, groupResource, type ResourceType } from '../resources.ts';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from '../selectors.ts';
import type { Sim } from '../sim.ts';
import { objectKey } from '../store.ts';
import { asTable, tableOptions } from '../tables.ts';
import { checkListVersion, listVersion, snapshotOf } from './list-version.ts';
import type { ApiReply, ApiRequest } from './request.ts';

export function getObject(sim: Sim, req: ApiRequest): ApiReply {
  const table = tableOptions(req.accept, req.query); // 406 before 404, as the real server negotiates first
  const obj = sim.store.get(sim.keyOf(req.type), req.namespace, req.name!);
  if (!obj) throw notFound(groupResource(req.type), req.name!);
  return { status: 200, body: table ? asTable(req.type, obj, table) : obj };
}

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

function decodeContinue(token: string | null): Pick<ContinueToken, 'rv' | 'start'> | undefined {
  if (!token) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as ContinueToken;
    if (parsed.v !== 'meta.k8s.io/v1' || typeof parsed.start !== 'string' || typeof parsed.rv !== 'number') throw new Error('bad version');
    return { rv: parsed.rv, start: parsed.start };
  } catch {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
}

function encodeContinue(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${lastKey}\u0000` })).toString('base64url');
}

/** The objects a list or watch selects, in key order; at `rv`, as they stood then (a continued list). */
export function selectObjects(sim: Sim, req: ApiRequest, rv?: number): KubeObject[] {
  const labels = parseLabelSelector(req.query.get('labelSelector') ?? undefined);
  const fields = parseFieldSelector(req.query.get('fieldSelector') ?? undefined, req.type.kind);
  const keep = (o: KubeObject) => matchesLabels(labels, o.metadata.labels) && matchesFields(fields, o);
  const namespace = req.type.namespaced ? req.namespace : undefined;
  return (rv !== undefined ? sim.store.listAt(sim.keyOf(req.type), rv, namespace, keep) : undefined) ?? sim.store.list(sim.keyOf(req.type), namespace, keep);
}

/** Built-in lists carry items without apiVersion and kind, as typed lists do; custom ones keep them. */
export function listItem(type: ResourceType, obj: KubeObject): unknown {
  if (type.crdName) return obj;
  const { apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}

/**
 * A list at a resourceVersion (list-version.ts) waits for it or reads the collection as it stood then.
 * Every page of a list shows the collection as of its first page and carries that page's
 * resourceVersion (as now when kube-sim's history no longer reaches back: etcd's compaction window
 * is far longer than kube-sim's bounded history).
 */
export async function listObjects(sim: Sim, req: ApiRequest): Promise<ApiReply> {
  const table = tableOptions(req.accept, req.query);
  const token = decodeContinue(req.query.get('continue'));
  const version = listVersion(req.query);
  await checkListVersion(sim, req, version);
  const snapshot = token && token.rv >= sim.store.oldestResumableResourceVersion() ? token.rv : snapshotOf(version);
  const rv = snapshot ?? sim.store.currentResourceVersion();
  const all = selectObjects(sim, req, snapshot);
  const afterStart = token === undefined ? all : all.filter((o) => objectKey(o.metadata.namespace, o.metadata.name!) >= token.start);
  const limit = Number(req.query.get('limit') ?? 0);
  const page = limit > 0 ? afterStart.slice(0, limit) : afterStart;
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  if (page.length < afterStart.length) {
    const last = page[page.length - 1]!;
    metadata.continue = encodeContinue(rv, objectKey(last.metadata.namespace, last.metadata.name!));
    if (!req.query.get('labelSelector') && !req.query.get('fieldSelector')) metadata.remainingItemCount = afterStart.length - page.length;
  }
  if (table) return { status: 200, body: asTable(req.type, { metadata, items: page }, table) };
  return {
    status: 200,
    body: { kind: req.type.listKind, apiVersion: apiVersionOf(req.type), metadata, items: page.map((o) => listItem(req.type, o)) },
  };
}
