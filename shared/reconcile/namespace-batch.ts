// A fan-out batch: one delivery asks many namespaces to converge on a template change. Each is
// read by a GET of its own, not by one list of the batch's names: the API server reads a labelled
// list of namespaces from etcd whole and filters it afterwards, so such a list costs the cluster's
// size (1,000 namespaces: about what the batch's GETs cost; 5,000: 3x them, every batch). They are
// reconciled together (the client's pacing bounds the calls in flight, not a
// fixed number of namespaces), the templates are read once for all of them, and reconcile-template
// hears once which templates changed state; when a namespace wrote objects or named a template for
// the first time, the templates are listed once more after the writes, once for the batch (recheck.ts). A
// transient failure in any namespace fails the delivery, so Pub/Sub redelivers the batch with its
// backoff; the namespaces that had converged cost a read (and at most a repeated, idempotent
// apply) the second time.
import type { FanoutTarget } from '../bus/envelope.ts';
import { TransientError } from '../kube/errors.ts';
import { mapLimit } from './concurrency.ts';
import { templatesDigest } from './fingerprints.ts';
import { readTemplates } from './namespace-reads.ts';
import { sortedUnique } from './objects.ts';
import { confirmTemplates } from './recheck.ts';
import { reconcileNamespace, type NamespaceDeps, type NamespaceResult } from './namespace.ts';

export interface BatchRequest {
  /** The template that changed: what `targets[].h` describe. */
  template: string;
  /** The fan-out's digest of every template (templatesDigest); the batch plans from the templates as they are when it runs. */
  templates?: string;
  targets: readonly FanoutTarget[];
}

export interface BatchResult {
  result: 'batch';
  namespaces: number;
  counts: Record<NamespaceResult['result'], number>;
  writes: number;
  /** Namespaces whose reconcile failed for a permanent reason (reported on each namespace). */
  failed: string[];
}

/** The namespaces of a batch reconcile at once; this bounds only the reconciles started, the client paces the calls. */
const BATCH_CONCURRENCY = 1000;

/** What a batch's outcomes add up to; the transient failures, if any, as one error for the whole delivery. */
export function summariseBatch(outcomes: readonly (NamespaceResult | { transient: string; namespace: string })[]): { result: BatchResult; transient: TransientError | null } {
  const result: BatchResult = { result: 'batch', namespaces: outcomes.length, counts: { converged: 0, failed: 0, skipped: 0, gone: 0 }, writes: 0, failed: [] };
  const transient: string[] = [];
  for (const o of outcomes) {
    if ('transient' in o) {
      transient.push(`${o.namespace}: ${o.transient}`);
      continue;
    }
    result.counts[o.result] += 1;
    result.writes += o.writes;
    if (o.result === 'failed') result.failed.push(o.namespace);
  }
  const error = transient.length > 0 ? new TransientError(`${transient.length} of ${outcomes.length} namespaces failed transiently: ${transient.slice(0, 3).join('; ')}`, { status: 503 }) : null;
  return { result, transient: error };
}

/**
 * The templates as they are now, listed once for the batch: the digest its namespaces plan with (the
 * snapshot this instance then holds). A batch delivered late (redelivered, or overtaken by a later
 * fan-out) that took the message's digest from an instance still holding those templates would put
 * their older version back: a batch planned from the namespaces' records reads no object that
 * could tell (heldSnapshotOutdated). Undefined when the list is refused: each namespace then
 * lists them itself and reports why.
 */
async function currentTemplates(deps: NamespaceDeps, request: BatchRequest): Promise<string | undefined> {
  const listed = await readTemplates(deps.kube);
  if (!listed.ok) return undefined;
  const now = templatesDigest(listed.value.templates);
  if (request.templates !== undefined && request.templates !== now) deps.log.log('INFO', 'fan-out batch older than the templates: planned from them as they are now', { template: request.template });
  return now;
}

export async function reconcileBatch(deps: NamespaceDeps, request: BatchRequest): Promise<BatchResult> {
  const templates = await currentTemplates(deps, request);
  const touched = new Set<string>();
  const planned = new Set<string>();
  const collect = { ...deps, notifyTemplates: async (templates: string[]) => void templates.forEach((t) => touched.add(t)), recheckTemplates: (digest: string) => void planned.add(digest) };
  const outcomes = await mapLimit(request.targets, BATCH_CONCURRENCY, async (t) => {
    try {
      return await reconcileNamespace(collect, t.n, { fanout: true, templates, held: t.h ? { template: request.template, hashes: t.h } : undefined });
    } catch (e) {
      // A crash fails the delivery too (it is redelivered, as a crash of one namespace's message is), after the others are done.
      return { transient: e instanceof TransientError ? e.message : `crashed: ${(e as Error).stack ?? String(e)}`, namespace: t.n };
    }
  });
  if (touched.size > 0 && deps.notifyTemplates) {
    await deps.notifyTemplates(sortedUnique([...touched])).catch((e: unknown) => deps.log.log('WARNING', 'could not notify reconcile-template', { template: request.template, error: String(e) }));
  }
  const { result, transient } = summariseBatch(outcomes);
  deps.log.log(result.failed.length > 0 || transient ? 'WARNING' : 'INFO', 'fan-out batch reconciled', { template: request.template, namespaces: result.namespaces, ...result.counts, writes: result.writes, transient: transient?.message });
  if (transient) throw transient;
  // A namespace that wrote objects or named a template for the first time: the templates once more, for them all (recheck.ts).
  await confirmTemplates(deps, planned, `fan-out batch of template ${request.template}`);
  return result;
}
