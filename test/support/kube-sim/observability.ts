// What tests observe and steer: the request log (one entry per API request, counted by verb and
// resource) and fault injection (latency, 5xx, 429 with Retry-After, watches closed early).

export interface RequestLogEntry {
  verb: string;
  resource: string;
  namespace?: string;
  name?: string;
  user: string;
  /** The client's User-Agent header ('' without one). */
  userAgent: string;
  status: number;
  dryRun: boolean;
}

export type LogFilter = Partial<Pick<RequestLogEntry, 'verb' | 'resource' | 'namespace' | 'user' | 'userAgent'>>;

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

function matches(entry: RequestLogEntry, filter: LogFilter): boolean {
  return (Object.keys(filter) as Array<keyof LogFilter>).every((k) => filter[k] === undefined || entry[k] === filter[k]);
}

export class RequestLog {
  readonly entries: RequestLogEntry[] = [];
  private readonly listeners: Array<(entry: RequestLogEntry) => void> = [];

  add(entry: RequestLogEntry): void {
    this.entries.push(entry);
  }

  /** Calls `listener` with each entry once its request is answered (its status known): `--audit-log`. */
  onAnswered(listener: (entry: RequestLogEntry) => void): void {
    this.listeners.push(listener);
  }

  answered(entry: RequestLogEntry): void {
    for (const l of this.listeners) l(entry);
  }

  count(filter: LogFilter = {}): number {
    return this.entries.filter((e) => matches(e, filter)).length;
  }

  /** Writes that reached storage's door: create/update/patch/delete, dry runs excluded. */
  writes(filter: LogFilter = {}): number {
    return this.entries.filter((e) => WRITE_VERBS.has(e.verb) && !e.dryRun && matches(e, filter)).length;
  }

  reset(): void {
    this.entries.length = 0;
  }
}

/**
 * An entry as one line of kube-apiserver's audit log (level Metadata, stage ResponseComplete), the
 * fields test/support/audit.ts reads, so that a bench counts writes the same way on both servers.
 * `requestURI` is the resource path without its API group prefix (enough to tell a dry run).
 */
export function auditEvent(entry: RequestLogEntry): string {
  const [resource, subresource] = entry.resource.split('/');
  const path = `${entry.namespace ? `/namespaces/${entry.namespace}` : ''}/${resource}${entry.name ? `/${entry.name}` : ''}${subresource ? `/${subresource}` : ''}`;
  return JSON.stringify({
    kind: 'Event', apiVersion: 'audit.k8s.io/v1', level: 'Metadata', stage: 'ResponseComplete', verb: entry.verb,
    requestURI: `${path}${entry.dryRun ? '?dryRun=All' : ''}`, user: { username: entry.user }, userAgent: entry.userAgent,
    objectRef: { resource, ...(subresource ? { subresource } : {}), ...(entry.namespace ? { namespace: entry.namespace } : {}), ...(entry.name ? { name: entry.name } : {}) },
    responseStatus: { code: entry.status },
  });
}

export interface Fault {
  verb?: string;
  resource?: string;
  namespace?: string;
  /** How many requests it affects; unlimited when absent. */
  times?: number;
  latencyMs?: number;
  /** 5xx or 429. */
  status?: number;
  retryAfterSeconds?: number;
  /**
   * The Status message of the failure (default: kube-sim's own). E.g. 'storage is (re)initializing'
   * with status 429: kube-apiserver 1.31+'s answer to a list of a CRD whose watch cache is filling.
   */
  message?: string;
  /** For watches: end the stream this long after it starts. */
  closeWatchAfterMs?: number;
  /**
   * Like API Priority and Fairness with its seats taken: a request arriving while this many
   * others (watches excluded) are in flight gets 429 with Retry-After (`retryAfterSeconds`, default 1).
   */
  maxInflight?: number;
}

interface ActiveFault {
  fault: Fault;
  remaining: number;
}

export interface RequestTarget {
  verb: string;
  resource: string;
  namespace?: string;
}

export class Faults {
  private active: ActiveFault[] = [];

  inject(fault: Fault): () => void {
    const entry: ActiveFault = { fault, remaining: fault.times ?? Number.POSITIVE_INFINITY };
    this.active.push(entry);
    return () => {
      this.active = this.active.filter((a) => a !== entry);
    };
  }

  clear(): void {
    this.active = [];
  }

  /** The faults that hit this request (each consumes one of its `times`). */
  take(target: RequestTarget): Fault[] {
    const hits = this.active.filter(({ fault, remaining }) => remaining > 0
      && (fault.verb === undefined || fault.verb === target.verb)
      && (fault.resource === undefined || fault.resource === target.resource)
      && (fault.namespace === undefined || fault.namespace === target.namespace));
    for (const hit of hits) hit.remaining -= 1;
    this.active = this.active.filter((a) => a.remaining > 0);
    return hits.map((h) => h.fault);
  }
}
