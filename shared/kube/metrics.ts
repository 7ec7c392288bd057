// What the reconcilers' client counts about its requests: totals, writes per resource, statuses,
// retries and time spent waiting for the rate limit. Pure bookkeeping, read by benchmarks,
// /metrics and tests.

export interface KubeMetrics {
  requests: number;
  /** Requests that changed something (POST/PUT/PATCH/DELETE), including failed ones. */
  writes: number;
  retries: number;
  failures: number;
  throttledMs: number;
  byStatus: Record<string, number>;
  byVerb: Record<string, number>;
  /** Write requests per resource (`configmaps`, `namespaces/status`, ...), dry runs excluded. */
  writesByResource: Record<string, number>;
}

export function emptyMetrics(): KubeMetrics {
  return { requests: 0, writes: 0, retries: 0, failures: 0, throttledMs: 0, byStatus: {}, byVerb: {}, writesByResource: {} };
}

/** `configmaps` for /api/v1/namespaces/x/configmaps/y, `namespacetemplates/status` for a status write. */
export function resourceOfPath(path: string): string {
  const segs = path.split('?')[0]!.split('/').filter(Boolean);
  const rest = segs[0] === 'api' ? segs.slice(2) : segs.slice(3);
  // namespaces/NAME/status and /finalize are the namespace's own subresources, not a namespaced resource.
  const r = rest[0] === 'namespaces' && rest.length >= 3 && !(segs[0] === 'api' && rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize')) ? rest.slice(2) : rest;
  return r[2] ? `${r[0]}/${r[2]}` : (r[0] ?? '');
}

const bump = (counts: Record<string, number>, key: string) => (counts[key] = (counts[key] ?? 0) + 1);

/** Counts one answered (or failed) request. */
export function recordRequest(metrics: KubeMetrics, req: { method: string; path: string; query?: Record<string, unknown> }, status: number): void {
  metrics.requests += 1;
  // A dry run stores nothing: it is a read of what the server would make of a write.
  if (req.method !== 'GET' && req.query?.dryRun === undefined) {
    metrics.writes += 1;
    bump(metrics.writesByResource, resourceOfPath(req.path));
  }
  bump(metrics.byStatus, String(status));
  bump(metrics.byVerb, req.method);
}
