// Forcing a race between a template's fan-out and a namespace reconcile in flight, shared by the
// unit suite (in-memory API) and the cluster suite (kube-sim or a real API server): requests held
// at the client seam until opened, the fan-out's messages collected (or published on a namespaces
// topic of the in-process bus, which delivers one ordering key at a time, as Pub/Sub does), and
// each message answered as the runtime answers it.
import { createMemoryBus } from '../../shared/bus/memory.ts';
import { decodeMessage, encodeMessage, type ReconcileMessage } from '../../shared/bus/envelope.ts';
import type { SubscribableBus } from '../../shared/bus/types.ts';
import type { KubeClient, KubeRequest } from '../../shared/kube/client.ts';
import { TransientError } from '../../shared/kube/errors.ts';
import { silentLogger } from '../../shared/log.ts';
import { reconcileNamespace, type NamespaceDeps, type NamespaceResult } from '../../shared/reconcile/namespace.ts';
import { fanoutNeeded } from '../../shared/reconcile/fanout.ts';
import { reconcileTemplate, type TemplateResult } from '../../shared/reconcile/template.ts';

export type Hold = (req: KubeRequest) => Promise<void> | undefined;

export interface Gate {
  hold: Hold;
  /** Resolves when the first matching request arrives. */
  reached: Promise<void>;
  open: () => void;
}

/** A request held until `open()`; `reached` resolves when the first one arrives. With `once`, only that first one is held. */
export function gate(match: (req: KubeRequest) => boolean, once = false): Gate {
  let open!: () => void;
  let reach!: () => void;
  let held = false;
  const opened = new Promise<void>((r) => (open = r));
  const reached = new Promise<void>((r) => (reach = r));
  return {
    hold: (req) => {
      if (!match(req) || (once && held)) return undefined;
      held = true;
      reach();
      return opened;
    },
    reached,
    open,
  };
}

/** Any write into namespace `ns` (its ApplySet parent first, on a reconcile that names a template for the first time). */
export const writeIn = (ns: string) => (req: KubeRequest): boolean => req.method !== 'GET' && req.path.startsWith(`/api/v1/namespaces/${ns}/`);

/** A client whose every call first waits for `hold()` (when set): a gate, not a fault; the server answers each call. */
export function holdingClient(kube: KubeClient): { kube: KubeClient; set: (hold: Hold | undefined) => void } {
  let hold: Hold | undefined;
  const call: KubeClient['call'] = async (req) => {
    await hold?.(req);
    return kube.call(req);
  };
  return { kube: { ...kube, call }, set: (h) => (hold = h) };
}

export interface Sent {
  message: ReconcileMessage;
  topic: string;
  key: string;
}

/** Topics of the namespace and template messages in these harnesses. */
export const NAMESPACES_TOPIC = 'ns';
export const TEMPLATES_TOPIC = 'tpl';

/** reconcile-template on `deps`' client, publishing to `bus`: a fan-out when `fanOut` (an ADDED, MODIFIED or DELETED message), else a recount. */
function templateReconcile(deps: NamespaceDeps, bus: SubscribableBus, template: string, fanOut: boolean): Promise<TemplateResult> {
  return reconcileTemplate({ kube: deps.kube, resolver: deps.resolver, bus, cluster: 'local', namespaceTopic: NAMESPACES_TOPIC, log: silentLogger, messagesPerSecond: 1e6 }, template, { fanOut });
}

/** The fan-out of `template` (as an ADDED, MODIFIED or DELETED message asks), publishing to `bus`. */
export function publishFanOut(deps: NamespaceDeps, bus: SubscribableBus, template: string): Promise<TemplateResult> {
  return templateReconcile(deps, bus, template, true);
}

/** The templates topic of `bus` answered as the runtime answers it (fan-out or recount by the message's type); each result, with its message. */
export function templateLane(deps: NamespaceDeps, bus: SubscribableBus, accept: (m: ReconcileMessage) => boolean): { message: ReconcileMessage; result: TemplateResult }[] {
  const results: { message: ReconcileMessage; result: TemplateResult }[] = [];
  bus.subscribe(TEMPLATES_TOPIC, async (d) => {
    const m = decodeMessage(d.data);
    if (m.ok && accept(m.message)) results.push({ message: m.message, result: await templateReconcile(deps, bus, m.message.name, fanoutNeeded(m.message.type)) });
  }, { minBackoffMs: 1, maxBackoffMs: 10 });
  return results;
}

/** The fan-out of `template`: its messages, collected rather than delivered, with their topics and ordering keys. */
export async function fanOut(deps: NamespaceDeps, template: string): Promise<Sent[]> {
  const bus = createMemoryBus();
  const out: Sent[] = [];
  bus.subscribe(NAMESPACES_TOPIC, async (d) => {
    const m = decodeMessage(d.data);
    if (m.ok) out.push({ message: m.message, topic: NAMESPACES_TOPIC, key: d.orderingKey });
  });
  await publishFanOut(deps, bus, template);
  await bus.idle();
  return out;
}

/** As the runtime answers a namespace message: the namespace, planned from templates at least as recent as the message's revision. */
export function answer(deps: NamespaceDeps, m: ReconcileMessage): Promise<NamespaceResult> {
  return reconcileNamespace(deps, m.name, { resourceVersion: m.resourceVersion });
}

/** As the bus delivers: a delivery that fails transiently is delivered again (here at once); the number of deliveries it took. */
export async function delivered(run: () => Promise<unknown>): Promise<number> {
  for (let n = 1; ; n++) {
    try {
      await run();
      return n;
    } catch (e) {
      if (!(e instanceof TransientError) || n === 3) throw e;
    }
  }
}

/** The namespaces a fan-out's messages name. */
export const namedBy = (sent: readonly Sent[]): string[] => sent.map(({ message }) => message.name);

export interface Answered {
  message: ReconcileMessage;
  result?: NamespaceResult;
  error?: string;
}

export interface NamespaceLane {
  /** The bus: its namespaces topic answers each message with `deps`, one ordering key at a time. */
  bus: SubscribableBus;
  /** Every delivery, in the order they started. */
  started: ReconcileMessage[];
  /** Every delivery, in the order they finished. */
  answered: Answered[];
  /** Publishes a namespace message (as the relay does) on the namespace's ordering key. */
  send(message: ReconcileMessage): Promise<void>;
}

/**
 * The namespaces topic of the in-process bus, answered as the runtime answers it: the messages
 * of one namespace one at a time, a transient failure redelivered. `accept`: which messages to
 * answer (a shared cluster holds other suites' namespaces).
 */
export function namespaceLane(deps: NamespaceDeps, accept: (m: ReconcileMessage) => boolean = () => true): NamespaceLane {
  const bus = createMemoryBus();
  const answered: Answered[] = [];
  const started: ReconcileMessage[] = [];
  bus.subscribe(NAMESPACES_TOPIC, async (d) => {
    const m = decodeMessage(d.data);
    if (!m.ok || !accept(m.message)) return;
    started.push(m.message);
    try {
      answered.push({ message: m.message, result: await answer(deps, m.message) });
    } catch (e) {
      answered.push({ message: m.message, error: String(e) });
      throw e;
    }
  }, { minBackoffMs: 1, maxBackoffMs: 10 });
  return { bus, started, answered, send: async (message) => void (await bus.publish(NAMESPACES_TOPIC, encodeMessage(message))) };
}

/** A namespace message as the relay sends one for a change of the namespace at `resourceVersion`. */
export const namespaceMessage = (name: string, resourceVersion?: string, type: ReconcileMessage['type'] = 'MODIFIED'): ReconcileMessage => ({ v: 1, cluster: 'local', kind: 'Namespace', name, type, ...(resourceVersion ? { resourceVersion } : {}) });
