// Server-side printing: the meta.k8s.io Table kubectl asks for (`Accept: application/json;as=Table;
// v=v1;g=meta.k8s.io, ...`) on get, list and watch, built as kube-apiserver 1.26 builds it:
//   - custom kinds from the CRD's additionalPrinterColumns (apiextensions' tableconvertor): an
//     implicit Name column first, a JSONPath per column, only its first result, typed cells;
//   - the built-in kinds Furnish and its docs show, with the printers of pkg/printers/internalversion
//     (columns, descriptions, priorities, cell formatting), always "wide" as the server prints;
//   - every other kind with the default convertor: Name and Created At (RFC 3339).
// Rows carry the object as `includeObject` says (default Metadata: a PartialObjectMetadata).
// Reference: test/fixtures/kube-apiserver-1.26/tables (test/kube-sim/tables.test.ts).
import type { KubeObject } from '../../../shared/kube/types.ts';
import { ApiError, badRequest } from './errors.ts';
import { isObject } from './fieldsets.ts';
import { apiVersionOf, type ResourceType } from './resources.ts';

export interface TableColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableOptions {
  version: 'v1' | 'v1beta1';
  includeObject: 'Metadata' | 'Object' | 'None';
}

type Cell = string | number | boolean | null;

// --- content negotiation -------------------------------------------------------------------

const TABLE_VERSIONS = new Set(['v1', 'v1beta1']);
const SERVED_TYPES = new Set(['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/*', '*/*']);

interface MediaRange {
  type: string;
  params: Map<string, string>;
}

function mediaRanges(accept: string): MediaRange[] {
  return accept.split(',').map((part) => {
    const [type = '', ...params] = part.split(';').map((s) => s.trim());
    return { type: type.toLowerCase(), params: new Map(params.map((p) => [p.slice(0, p.indexOf('=')).trim(), p.slice(p.indexOf('=') + 1).trim()])) };
  }).filter((m) => m.type !== '');
}

/**
 * What the Accept header asks of a read: a Table (its version and includeObject), or undefined for
 * the object itself. As kube-apiserver's negotiation: the first acceptable range wins; a range asking
 * for a conversion the server cannot make (`as=Table;v=v2`) is skipped; none acceptable is 406.
 */
export function tableOptions(accept: string | undefined, query: URLSearchParams): TableOptions | undefined {
  const ranges = accept ? mediaRanges(accept) : [];
  if (ranges.length === 0) return undefined;
  for (const range of ranges) {
    if (!SERVED_TYPES.has(range.type)) continue;
    const as = range.params.get('as');
    // kube-sim serves no PartialObjectMetadata conversion: such a client gets the whole object, as before.
    if (as !== 'Table') return undefined;
    if (as === 'Table' && range.params.get('g') === 'meta.k8s.io' && TABLE_VERSIONS.has(range.params.get('v') ?? '')) {
      return { version: range.params.get('v') as TableOptions['version'], includeObject: includeObjectOf(query) };
    }
  }
  throw new ApiError({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'NotAcceptable', code: 406,
    message: 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf',
  });
}

function includeObjectOf(query: URLSearchParams): TableOptions['includeObject'] {
  const value = query.get('includeObject') ?? '';
  if (value === '' || value === 'Metadata') return 'Metadata';
  if (value === 'Object' || value === 'None') return value;
  throw badRequest(`unrecognized includeObject value: "${value}"`);
}

// --- shared words and formats --------------------------------------------------------------

const NAME_DESCRIPTION = 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names';
const CREATED_DESCRIPTION = 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

const column = (name: string, description: string, extra: Partial<TableColumn> = {}): TableColumn => ({ name, type: 'string', format: '', description, priority: 0, ...extra });
/** A column `kubectl get` shows only with `-o wide`. */
const wide = (name: string, description: string): TableColumn => column(name, description, { priority: 1 });
const NAME = column('Name', NAME_DESCRIPTION, { format: 'name' });
const AGE = column('Age', CREATED_DESCRIPTION);

/** apimachinery's duration.HumanDuration: how `kubectl get` says how old something is. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${Math.trunc(days / 365)}y` : `${Math.trunc(days / 365)}y${days % 365}d`;
  return `${Math.trunc(days / 365)}y`;
}

/** translateTimestampSince: `<unknown>` for an unset time. */
function since(timestamp: unknown, now: number): string {
  const t = typeof timestamp === 'string' && timestamp !== '' ? Date.parse(timestamp) : NaN;
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const record = (value: unknown): Record<string, unknown> => (isObject(value) ? value as Record<string, unknown> : {});
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const count = (value: unknown): number => Object.keys(record(value)).length;

/** metav1.FormatLabelSelector: requirements sorted by key, `<none>` for the empty selector. */
export function formatLabelSelector(selector: unknown): string {
  const s = record(selector);
  const requirements: Array<[string, string]> = Object.entries(record(s.matchLabels)).map(([k, v]) => [k, `${k}=${str(v)}`]);
  for (const e of list(s.matchExpressions).map(record)) {
    const key = str(e.key);
    const values = [...new Set(list(e.values).map(str))].sort().join(',');
    const text = e.operator === 'In' ? `${key} in (${values})` : e.operator === 'NotIn' ? `${key} notin (${values})` : e.operator === 'Exists' ? key : `!${key}`;
    requirements.push([key, text]);
  }
  const text = requirements.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, t]) => t).join(',');
  return text || '<none>';
}

// --- built-in printers ---------------------------------------------------------------------

interface Printer {
  columns: TableColumn[];
  cells(obj: KubeObject, now: number): Cell[];
  /** Row conditions (only a finished Pod has any). */
  conditions?(obj: KubeObject): unknown[] | undefined;
}

const age = (obj: KubeObject, now: number): string => since(obj.metadata.creationTimestamp, now);

function bindingPrinter(kind: 'roleBinding' | 'clusterRoleBinding', roleDescription: string): Printer {
  return {
    columns: [NAME, column('Role', roleDescription), AGE,
      wide('Users', `Users in the ${kind}`), wide('Groups', `Groups in the ${kind}`),
      wide('ServiceAccounts', `ServiceAccounts in the ${kind}`)],
    cells: (obj, now) => {
      const subjects = list(obj.subjects).map(record);
      const names = (k: string): string => subjects.filter((s) => s.kind === k)
        .map((s) => (k === 'ServiceAccount' ? `${str(s.namespace)}/${str(s.name)}` : str(s.name))).join(', ');
      const roleRef = record(obj.roleRef);
      return [str(obj.metadata.name), `${str(roleRef.kind)}/${str(roleRef.name)}`, age(obj, now), names('User'), names('Group'), names('ServiceAccount')];
    },
  };
}

function webhookPrinter(): Printer {
  return {
    columns: [NAME, column('Webhooks', 'Webhooks indicates the number of webhooks registered in this configuration', { type: 'integer' }), AGE],
    cells: (obj, now) => [str(obj.metadata.name), list(obj.webhooks).length, age(obj, now)],
  };
}

/** `name: used/hard` for each resource in status.hard, sorted; limits.* in the second column. */
function quotaColumns(obj: KubeObject): [string, string] {
  const status = record(obj.status);
  const hard = record(status.hard);
  const used = record(status.used);
  const requests: string[] = [];
  const limits: string[] = [];
  for (const resource of Object.keys(hard).sort()) {
    const pieces = resource.split('.');
    (pieces.length > 1 && pieces[0] === 'limits' ? limits : requests).push(`${resource}: ${str(used[resource]) || '0'}/${str(hard[resource])}`);
  }
  return [requests.join(', '), limits.join(', ')];
}

function eventCells(obj: KubeObject, now: number): Cell[] {
  const first = obj.firstTimestamp ? since(obj.firstTimestamp, now) : since(obj.eventTime, now);
  const series = isObject(obj.series) ? record(obj.series) : undefined;
  const last = series ? since(series.lastObservedTime, now) : obj.lastTimestamp ? since(obj.lastTimestamp, now) : first;
  const times = series ? Number(series.count ?? 0) : Number(obj.count ?? 0) || 1;
  const involved = record(obj.involvedObject);
  const target = str(involved.name) ? `${str(involved.kind).toLowerCase()}/${str(involved.name)}` : str(involved.kind).toLowerCase();
  const source = record(obj.source);
  const component = str(source.component) || str(obj.reportingComponent);
  const instance = str(source.host) || str(obj.reportingInstance);
  return [last, str(obj.type), str(obj.reason), target, str(involved.fieldPath), instance ? `${component}, ${instance}` : component,
    str(obj.message).trim(), first, times, str(obj.metadata.name)];
}

const NOMINATED_DESCRIPTION = 'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.';
const READINESS_GATES_DESCRIPTION = 'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates';

/** A finished pod's row carries a Completed condition, as printPod sets it. */
function podConditions(obj: KubeObject): unknown[] | undefined {
  const phase = record(obj.status).phase;
  if (phase === 'Succeeded') return [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }];
  if (phase === 'Failed') return [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }];
  return undefined;
}

interface ContainerStatus {
  ready?: boolean;
  restartCount?: number;
  state?: { waiting?: { reason?: string }; running?: unknown; terminated?: { reason?: string; exitCode?: number; signal?: number } };
  lastState?: { terminated?: { finishedAt?: string } };
}

/** How a terminated container reads: its reason, else its signal or exit code. */
const terminatedReason = (t: { reason?: string; exitCode?: number; signal?: number }, prefix: string): string =>
  t.reason ? `${prefix}${t.reason}` : t.signal ? `${prefix}Signal:${t.signal}` : `${prefix}ExitCode:${t.exitCode ?? 0}`;

/** printPod: ready containers, the reason (init containers first, then containers last to first), restarts. */
function podCells(obj: KubeObject, now: number): Cell[] {
  const spec = record(obj.spec);
  const status = record(obj.status);
  const conditions = list(status.conditions).map(record);
  let reason = str(status.reason) || str(status.phase);
  if (conditions.some((c) => c.type === 'PodScheduled' && c.reason === 'SchedulingGated')) reason = 'SchedulingGated';
  let restarts = 0;
  let lastRestart = 0;
  const counted = (c: ContainerStatus): void => {
    restarts += c.restartCount ?? 0;
    const finished = Date.parse(c.lastState?.terminated?.finishedAt ?? '');
    if (!Number.isNaN(finished) && finished > lastRestart) lastRestart = finished;
  };
  let initializing = false;
  const inits = list(status.initContainerStatuses) as ContainerStatus[];
  for (const [i, c] of inits.entries()) {
    counted(c);
    const terminated = c.state?.terminated;
    if (terminated && (terminated.exitCode ?? 0) === 0) continue;
    initializing = true;
    if (terminated) reason = terminatedReason(terminated, 'Init:');
    else if (c.state?.waiting?.reason && c.state.waiting.reason !== 'PodInitializing') reason = `Init:${c.state.waiting.reason}`;
    else reason = `Init:${i}/${list(spec.initContainers).length}`;
    break;
  }
  let ready = 0;
  if (!initializing) {
    restarts = 0;
    let running = false;
    for (const c of [...(list(status.containerStatuses) as ContainerStatus[])].reverse()) {
      counted(c);
      const { waiting, terminated } = c.state ?? {};
      if (waiting?.reason) reason = waiting.reason;
      else if (terminated) reason = terminatedReason(terminated, '');
      else if (c.ready && c.state?.running) {
        running = true;
        ready += 1;
      }
    }
    if (reason === 'Completed' && running) reason = conditions.some((c) => c.type === 'Ready' && c.status === 'True') ? 'Running' : 'NotReady';
  }
  if (obj.metadata.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  const gates = list(spec.readinessGates).map(record);
  const gatesTrue = gates.filter((g) => conditions.find((c) => c.type === g.conditionType)?.status === 'True').length;
  const ips = list(status.podIPs).map(record);
  return [str(obj.metadata.name), `${ready}/${list(spec.containers).length}`, reason,
    lastRestart ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : String(restarts), age(obj, now),
    str(ips[0]?.ip) || str(status.podIP) || '<none>', str(spec.nodeName) || '<none>', str(status.nominatedNodeName) || '<none>',
    gates.length > 0 ? `${gatesTrue}/${gates.length}` : '<none>'];
}

const PRINTERS: Record<string, Printer> = {
  '/Pod': {
    // [name, description, shown only with -o wide]; Age after Restarts.
    columns: ([
      ['Name', NAME_DESCRIPTION, false], ['Ready', 'The aggregate readiness state of this pod for accepting traffic.', false],
      ['Status', 'The aggregate status of the containers in this pod.', false],
      ['Restarts', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.', false],
      ['Age', CREATED_DESCRIPTION, false], ['IP', 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.', true],
      ['Node', 'NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements.', true],
      ['Nominated Node', NOMINATED_DESCRIPTION, true], ['Readiness Gates', READINESS_GATES_DESCRIPTION, true],
    ] as const).map(([name, description, isWide]) => (name === 'Name' ? NAME : isWide ? wide(name, description) : column(name, description))),
    cells: podCells,
    conditions: podConditions,
  },
  '/Namespace': {
    columns: [NAME, column('Status', 'The status of the namespace'), AGE],
    cells: (obj, now) => [str(obj.metadata.name), str(record(obj.status).phase), age(obj, now)],
  },
  '/ConfigMap': {
    columns: [NAME, column('Data', "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process."), AGE],
    cells: (obj, now) => [str(obj.metadata.name), count(obj.data) + count(obj.binaryData), age(obj, now)],
  },
  '/Secret': {
    columns: [NAME, column('Type', 'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types'),
      column('Data', "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4"), AGE],
    cells: (obj, now) => [str(obj.metadata.name), str(obj.type), count(obj.data), age(obj, now)],
  },
  '/ServiceAccount': {
    columns: [NAME, column('Secrets', 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "kubernetes.io/enforce-mountable-secrets" annotation set to "true". This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret'), AGE],
    cells: (obj, now) => [str(obj.metadata.name), list(obj.secrets).length, age(obj, now)],
  },
  '/ResourceQuota': {
    columns: [NAME, AGE, column('Request', 'Request represents a minimum amount of cpu/memory that a container may consume.'),
      column('Limit', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.')],
    cells: (obj, now) => [str(obj.metadata.name), age(obj, now), ...quotaColumns(obj)],
  },
  '/Event': {
    columns: [column('Last Seen', 'The time at which the most recent occurrence of this event was recorded.'),
      column('Type', 'Type of this event (Normal, Warning), new types could be added in the future'),
      column('Reason', "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
      column('Object', 'The object that this event is about.'),
      wide('Subobject', 'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.'),
      wide('Source', 'The component reporting this event. Should be a short machine understandable string.'),
      column('Message', 'A human-readable description of the status of this operation.'),
      wide('First Seen', 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)'),
      wide('Count', 'The number of times this event has occurred.'),
      { ...NAME, priority: 1 }],
    cells: eventCells,
  },
  'networking.k8s.io/NetworkPolicy': {
    columns: [NAME, column('Pod-Selector', 'Selects the pods to which this NetworkPolicy object applies.  The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods.  In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.'), AGE],
    cells: (obj, now) => [str(obj.metadata.name), formatLabelSelector(record(obj.spec).podSelector), age(obj, now)],
  },
  'rbac.authorization.k8s.io/RoleBinding': bindingPrinter('roleBinding', 'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.'),
  'rbac.authorization.k8s.io/ClusterRoleBinding': bindingPrinter('clusterRoleBinding', 'RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.'),
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration': webhookPrinter(),
  'admissionregistration.k8s.io/MutatingWebhookConfiguration': webhookPrinter(),
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy': {
    columns: [NAME, column('Validations', 'Validations indicates the number of validation rules defined in this configuration', { type: 'integer' }),
      column('ParamKind', 'ParamKind specifies the kind of resources used to parameterize this policy'), AGE],
    cells: (obj, now) => {
      const paramKind = record(record(obj.spec).paramKind);
      return [str(obj.metadata.name), list(record(obj.spec).validations).length, paramKind.kind ? `${str(paramKind.apiVersion)}/${str(paramKind.kind)}` : '<unset>', age(obj, now)];
    },
  },
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding': {
    columns: [NAME, column('PolicyName', 'PolicyName indicates the policy definition which the policy binding binded to'),
      column('ParamRef', 'ParamRef indicates the param resource which sets the configration param'), AGE],
    // kube-sim takes no paramRef (policies.ts): always <unset>.
    cells: (obj, now) => [str(obj.metadata.name), str(record(obj.spec).policyName), '<unset>', age(obj, now)],
  },
  'apps/Deployment': {
    columns: [NAME, column('Ready', 'Number of the pod with ready state'),
      column('Up-to-date', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.'),
      column('Available', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.'), AGE,
      wide('Containers', 'Names of each container in the template.'),
      wide('Images', 'Images referenced by each container in the template.'),
      wide('Selector', 'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.')],
    cells: (obj, now) => {
      const spec = record(obj.spec);
      const status = record(obj.status);
      const containers = list(record(record(spec.template).spec).containers).map(record);
      const n = (v: unknown): number => (typeof v === 'number' ? v : 0);
      return [str(obj.metadata.name), `${n(status.readyReplicas)}/${n(spec.replicas)}`, n(status.updatedReplicas), n(status.availableReplicas), age(obj, now),
        containers.map((c) => str(c.name)).join(','), containers.map((c) => str(c.image)).join(','), formatLabelSelector(spec.selector)];
    },
  },
};

/** Kinds without a printer: the default convertor's Name and Created At. */
const DEFAULT_PRINTER: Printer = {
  columns: [NAME, column('Created At', CREATED_DESCRIPTION, { type: 'date' })],
  cells: (obj) => [str(obj.metadata.name), str(obj.metadata.creationTimestamp)],
};

// --- custom resources: additionalPrinterColumns ---------------------------------------------

type Segment = { field: string } | { index: number } | { all: true } | { filter: string[]; op: '==' | '!='; value: unknown };

/** The JSONPath subset printer columns use: `.a.b`, `furnish\.dev` escapes, `[n]`, `[*]`, `['key']`, `[?(@.a=="x")]`. */
export function parseJsonPath(path: string): Segment[] {
  const text = path.trim().replace(/^\{(.*)\}$/, '$1');
  const segments: Segment[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '.') {
      let field = '';
      for (i += 1; i < text.length && text[i] !== '.' && text[i] !== '['; i += 1) {
        if (text[i] === '\\' && i + 1 < text.length) i += 1;
        field += text[i];
      }
      if (field) segments.push({ field });
    } else if (text[i] === '[') {
      const end = text.indexOf(']', i);
      if (end < 0) throw new Error(`unclosed [ in ${path}`);
      segments.push(bracket(text.slice(i + 1, end), path));
      i = end + 1;
    } else {
      throw new Error(`unexpected ${text[i]} in ${path}`);
    }
  }
  return segments;
}

function bracket(inner: string, path: string): Segment {
  if (inner === '*') return { all: true };
  if (/^-?\d+$/.test(inner)) return { index: Number(inner) };
  const quoted = /^'(.*)'$|^"(.*)"$/.exec(inner);
  if (quoted) return { field: quoted[1] ?? quoted[2]! };
  const filter = /^\?\(@((?:\.[^.=!\s]+)+)\s*(==|!=)\s*(.+)\)$/.exec(inner);
  if (!filter) throw new Error(`unsupported [${inner}] in ${path}`);
  const raw = filter[3]!.trim();
  const value: unknown = /^(['"]).*\1$/.test(raw) ? raw.slice(1, -1) : JSON.parse(raw);
  return { filter: filter[1]!.slice(1).split('.'), op: filter[2] as '==' | '!=', value };
}

function step(node: unknown, segment: Segment): unknown[] {
  if ('field' in segment) return isObject(node) && segment.field in (node as Record<string, unknown>) ? [(node as Record<string, unknown>)[segment.field]] : [];
  if ('index' in segment) {
    if (!Array.isArray(node)) return [];
    const item: unknown = node[segment.index < 0 ? node.length + segment.index : segment.index];
    return item === undefined ? [] : [item];
  }
  if ('all' in segment) return Array.isArray(node) ? node : isObject(node) ? Object.values(node as Record<string, unknown>) : [];
  if (!Array.isArray(node)) return [];
  return node.filter((item) => {
    const found = segment.filter.reduce<unknown>((v, f) => record(v)[f], item);
    return found !== undefined && (found === segment.value) === (segment.op === '==');
  });
}

export function evaluateJsonPath(path: string, obj: unknown): unknown[] {
  return parseJsonPath(path).reduce<unknown[]>((nodes, segment) => nodes.flatMap((n) => step(n, segment)), [obj]);
}

/** How a found value reads in a column of its type (apiextensions' cellForJSONValue; strings as jsonpath prints them). */
function typedCell(type: string, value: unknown, now: number): Cell {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'string':
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      if (typeof value !== 'string') return null;
      if (value === '') return '<unknown>';
      return Number.isNaN(Date.parse(value)) || !/^\d{4}-\d\d-\d\dT/.test(value) ? '<invalid>' : since(value, now);
    default:
      return null;
  }
}

type PrinterColumn = NonNullable<ResourceType['printerColumns']>[number] & { format?: string; priority?: number };

function crdPrinter(t: ResourceType): Printer {
  const declared = (t.printerColumns ?? []) as PrinterColumn[];
  const columns: PrinterColumn[] = declared.length > 0 ? declared : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: CREATED_DESCRIPTION }];
  return {
    columns: [NAME, ...columns.map((c) => ({
      name: c.name, type: c.type, format: c.format ?? '', priority: c.priority ?? 0,
      description: c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
    }))],
    cells: (obj, now) => [str(obj.metadata.name), ...columns.map((c) => {
      let found: unknown[];
      try { found = evaluateJsonPath(c.jsonPath, obj); } catch { found = []; }
      return found.length > 0 ? typedCell(c.type, found[0], now) : null;
    })],
  };
}

function printerOf(t: ResourceType): Printer {
  if (t.crdName) return crdPrinter(t);
  return PRINTERS[`${t.group}/${t.kind}`] ?? DEFAULT_PRINTER;
}

/** The columns kube-sim prints a kind with (for tests and docs). */
export function tableColumns(t: ResourceType): TableColumn[] {
  return printerOf(t).columns;
}

// --- the Table -----------------------------------------------------------------------------

function rowObject(t: ResourceType, obj: KubeObject, options: TableOptions): unknown {
  if (options.includeObject === 'None') return null;
  // Stored objects may lack apiVersion and kind; the real server's rows always carry them, first.
  if (options.includeObject === 'Object') return Object.assign({ apiVersion: apiVersionOf(t), kind: t.kind }, obj);
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${options.version}`, metadata: obj.metadata };
}

interface ListBody {
  metadata?: Record<string, unknown>;
  items?: KubeObject[];
}

/**
 * A list's or one object's Table. `headers: false` leaves columnDefinitions null (watch events
 * after the first); a list without items has `rows: []`, except with the default convertor,
 * which leaves them null, as the real server encodes them.
 */
export function asTable(t: ResourceType, body: KubeObject | ListBody, options: TableOptions, headers = true, now = Date.now()): Record<string, unknown> {
  const printer = printerOf(t);
  const isList = Array.isArray((body as ListBody).items);
  const objects = isList ? (body as ListBody).items! : [body as KubeObject];
  const rows = objects.map((obj) => {
    const conditions = printer.conditions?.(obj);
    return { cells: printer.cells(obj, now), ...(conditions ? { conditions } : {}), object: rowObject(t, obj, options) };
  });
  const listMeta = record(body.metadata);
  const metadata = isList
    ? Object.fromEntries(['resourceVersion', 'continue', 'remainingItemCount'].filter((k) => listMeta[k] !== undefined).map((k) => [k, listMeta[k]]))
    : { resourceVersion: (body as KubeObject).metadata.resourceVersion };
  return {
    kind: 'Table', apiVersion: `meta.k8s.io/${options.version}`, metadata,
    columnDefinitions: headers ? printer.columns : null,
    rows: rows.length === 0 && printer === DEFAULT_PRINTER ? null : rows,
  };
}
