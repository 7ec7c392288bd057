// Typed operations on top of the client seam: what the reconcilers and the relay do to the API.
// Each is one `call` (or a paginated series of them) and returns the seam's `{ ok, status, data }`.
import { FIELD_MANAGER } from '../keys.ts';
import type { KubeClient, KubeResponse } from './client.ts';
import { resourcePath, type ResourceInfo, type ResourceResolver } from './resources.ts';
import type { KubeObject } from './types.ts';

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size (the API server's `limit`); lists never hold more than one page in flight. */
  limit?: number;
}

export interface ListResult {
  ok: boolean;
  status: number;
  resourceVersion: string;
  error?: string;
  reason?: string;
  count: number;
}

/**
 * Lists a collection page by page, handing each item to `onItem`: memory stays one page. An
 * `onItem` that returns a promise is awaited (backpressure: the next item waits for it).
 */
export function listEach(client: KubeClient, path: string, opts: ListOptions, onItem: (item: KubeObject) => unknown): Promise<ListResult> {
  return listPages(client, path, opts, async (items) => {
    for (const item of items) {
      const wait = onItem(item);
      if (wait instanceof Promise) await wait;
    }
  });
}

type Page = { ok: true; items: KubeObject[]; resourceVersion?: string; continue?: string } | { ok: false; status: number; error?: string; reason?: string };

async function listPage(client: KubeClient, path: string, opts: ListOptions, cont: string | undefined): Promise<Page> {
  const r: KubeResponse<{ items?: KubeObject[]; metadata?: { continue?: string; resourceVersion?: string } }> = await client.call({
    method: 'GET',
    path,
    query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit: opts.limit ?? 500, continue: cont },
  });
  if (!r.ok) return { ok: false, status: r.status, error: r.error, reason: r.reason };
  return { ok: true, items: r.data?.items ?? [], resourceVersion: r.data?.metadata?.resourceVersion, continue: r.data?.metadata?.continue || undefined };
}

/**
 * Lists a collection page by page, handing each page to `onPage` and letting go of it before
 * awaiting what `onPage` returns (backpressure: the next page waits for it). A page held across
 * such a wait outlives two scavenges and is promoted to V8's old generation, where it stays as
 * garbage until the next full GC: megabytes per page of a resync (README, Memory).
 */
export async function listPages(client: KubeClient, path: string, opts: ListOptions, onPage: (items: KubeObject[]) => unknown): Promise<ListResult> {
  let cont: string | undefined;
  let count = 0;
  let resourceVersion = '';
  do {
    const page = await listPage(client, path, opts, cont);
    if (!page.ok) return { ok: false, status: page.status, resourceVersion, error: page.error, reason: page.reason, count };
    count += page.items.length;
    resourceVersion = page.resourceVersion ?? resourceVersion;
    cont = page.continue;
    const wait = onPage(page.items.splice(0));
    if (wait instanceof Promise) await wait;
  } while (cont);
  return { ok: true, status: 200, resourceVersion, count };
}

export async function listAll(client: KubeClient, path: string, opts: ListOptions = {}): Promise<{ result: ListResult; items: KubeObject[] }> {
  const items: KubeObject[] = [];
  const result = await listEach(client, path, opts, (i) => items.push(i));
  return { result, items };
}

export interface WriteOptions {
  fieldManager?: string;
  /** `dryRun=All`: admission and validation run, nothing is stored (what the server would make of it). */
  dryRun?: boolean;
}

function writeQuery(opts: WriteOptions): Record<string, string | boolean | undefined> {
  return { fieldManager: opts.fieldManager ?? FIELD_MANAGER, dryRun: opts.dryRun ? 'All' : undefined };
}

/** Server-side apply with field manager `furnish`, forcing ownership of the fields we set. */
export function applyObject(client: KubeClient, info: ResourceInfo, obj: KubeObject, opts: WriteOptions = {}): Promise<KubeResponse<KubeObject>> {
  return client.call({
    method: 'PATCH',
    path: resourcePath(info, obj.metadata.namespace, obj.metadata.name),
    query: { ...writeQuery(opts), force: true },
    contentType: 'application/apply-patch+yaml',
    body: obj,
  });
}

export function createObject(client: KubeClient, info: ResourceInfo, obj: KubeObject, opts: WriteOptions = {}): Promise<KubeResponse<KubeObject>> {
  return client.call({ method: 'POST', path: resourcePath(info, obj.metadata.namespace), query: writeQuery(opts), body: obj });
}

/** `uid`: delete only that very object (409 Conflict if the name now holds another one). */
export function deleteObject(client: KubeClient, info: ResourceInfo, namespace: string, name: string, preconditions?: { uid: string }): Promise<KubeResponse<unknown>> {
  return client.call({ method: 'DELETE', path: resourcePath(info, namespace, name), body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', ...(preconditions ? { preconditions } : {}) } });
}

export function mergePatch(client: KubeClient, path: string, patch: unknown, fieldManager = FIELD_MANAGER): Promise<KubeResponse<KubeObject>> {
  return client.call({ method: 'PATCH', path, query: { fieldManager }, contentType: 'application/merge-patch+json', body: patch });
}

export const NAMESPACES: ResourceInfo = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };
export const TEMPLATES: ResourceInfo = { group: 'furnish.dev', version: 'v1alpha1', plural: 'namespacetemplates', namespaced: false };
export const CONFIGMAPS: ResourceInfo = { group: '', version: 'v1', plural: 'configmaps', namespaced: true };
export const EVENTS: ResourceInfo = { group: '', version: 'v1', plural: 'events', namespaced: true };

export type { ResourceResolver };

/**
 * A namespace's labels, annotations and status conditions in one write: `namespaces/status`
 * keeps metadata changes (its strategy resets only the spec), and a strategic merge patch merges
 * `status.conditions` by type, leaving the namespace controller's own conditions alone.
 */
export function patchNamespaceStatus(client: KubeClient, name: string, patch: unknown, fieldManager = FIELD_MANAGER): Promise<KubeResponse<KubeObject>> {
  return client.call({ method: 'PATCH', path: `${resourcePath(NAMESPACES, undefined, name)}/status`, query: { fieldManager }, contentType: 'application/strategic-merge-patch+json', body: patch });
}
