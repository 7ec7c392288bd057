// A fan-out batch: one delivery asks many namespaces to converge on a template change. They are
// read with one list (by the label `kubernetes.io/metadata.name`, which the API server keeps on
// every namespace) in a small cluster, by a GET each in a large one: the API server reads a
// labelled list of namespaces whole from etcd and filters it afterwards, so the list costs the
// cluster's size and the GETs the batch's (the fan-out decides: fanout.ts batchesList). They are
// reconciled together (the client's pacing bounds the calls in flight, not a
// fixed number of namespaces), the templates are read once for all of them, and reconcile-template
// hears once which templates changed state; when a namespace wrote objects or named a template for
// the first time, the templates are listed once more after the writes, once for the batch (recheck.ts). A
// transient failure in any namespace fails the delivery, so Pub/Sub redelivers the batch with its
// backoff; the namespaces that had converged cost a read (and at most a repeated, idempotent
// apply) the second time.
import type { FanoutTarget, ReconcileMessage } from '../bus/envelope.ts';
import { KEY } from '../keys.ts';
import { listEach, NAMESPACES } from '../kube/api.ts';
import type { KubeClient } from '../kube/client.ts';
import { TransientError } from '../kube/errors.ts';
import { resourcePath } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import type { Logger } from '../log.ts';
import { mapLimit } from './concurrency.ts';
import { templatesDigest } from './fingerprints.ts';
import { readTemplates } from './namespace-reads.ts';
import { sortedUnique } from './objects.ts';
import { NAMES_PER_LIST } from './fanout.ts';
import { confirmTemplates } from './recheck.ts';
import { reconcileNamespace, type NamespaceDeps, type NamespaceResult } from './namespace.ts';

export interface BatchRequest {
  /** The template that changed: what `targets[].h` describe. */
  template: string;
  /** The fan-out's digest of every template (templatesDigest); the batch plans from the templates as they are when it runs. */
  templates?: string;
  targets: readonly FanoutTarget[];
  /** Read the namespaces by one list (fanout.ts batchesList), not a GET each. */
  listTargets?: boolean;
  /** The kinds `targets[].h` covers; absent: every kind. */
  heldKinds?: readonly string[];
}

/** The batch a FANOUT message asks for, or null when it names one namespace. */
export function batchRequest(m: ReconcileMessage): BatchRequest | null {
  return m.targets && m.template ? { template: m.template, templates: m.templates, targets: m.targets, listTargets: m.listTargets, heldKinds: m.heldKinds } : null;
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

/** The label selector that lists exactly these namespaces. */
export function namespacesSelector(names: readonly string[]): string {
  return `${KEY.metadataName} in (${names.join(',')})`;
}

/**
 * The batch's namespaces, one list per hundred names. A namespace not listed (gone, or a cluster
 * without the label) or a list that fails is read by its own reconcile, which tells gone from
 * failed; a list is a read as fresh as a get.
 */
export async function readBatchNamespaces(kube: KubeClient, names: readonly string[], log: Logger): Promise<Map<string, KubeObject>> {
  const found = new Map<string, KubeObject>();
  for (let i = 0; i < names.length; i += NAMES_PER_LIST) {
    const some = names.slice(i, i + NAMES_PER_LIST);
    const listed = await listEach(kube, resourcePath(NAMESPACES), { labelSelector: namespacesSelector(some), limit: NAMES_PER_LIST }, (ns) => {
      const name = ns.metadata.name ?? '';
      if (some.includes(name)) found.set(name, { ...ns, apiVersion: 'v1', kind: 'Namespace' });
    });
    if (!listed.ok) log.log('WARNING', 'could not list a fan-out batch\'s namespaces; reading them one by one', { status: listed.status, error: listed.error });
  }
  return found;
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
  const none = new Map<string, KubeObject>();
  const [read, templates] = await Promise.all([request.listTargets ? readBatchNamespaces(deps.kube, request.targets.map((t) => t.n), deps.log) : none, currentTemplates(deps, request)]);
  const touched = new Set<string>();
  const planned = new Set<string>();
  const collect = { ...deps, notifyTemplates: async (templates: string[]) => void templates.forEach((t) => touched.add(t)), recheckTemplates: (from: readonly string[]) => void from.forEach((p) => planned.add(p)) };
  const outcomes = await mapLimit(request.targets, BATCH_CONCURRENCY, async (t) => {
    try {
      return await reconcileNamespace(collect, t.n, { fanout: true, templates, held: t.h ? { template: request.template, hashes: t.h, kinds: request.heldKinds } : undefined, namespace: read.get(t.n) });
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
