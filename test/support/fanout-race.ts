// Forcing a race between a template's fan-out and a namespace reconcile in flight, shared by the
// unit suite (in-memory API) and the cluster suite (kube-sim or a real API server): requests held
// at the client seam until opened, the fan-out's messages collected rather than delivered, and
// each message answered as the runtime answers it, a transient failure delivered again.
import { createMemoryBus } from '../../shared/bus/memory.ts';
import { decodeMessage, type ReconcileMessage } from '../../shared/bus/envelope.ts';
import type { KubeClient, KubeRequest } from '../../shared/kube/client.ts';
import { TransientError } from '../../shared/kube/errors.ts';
import { silentLogger } from '../../shared/log.ts';
import { reconcileNamespace, type NamespaceDeps } from '../../shared/reconcile/namespace.ts';
import { batchRequest, reconcileBatch } from '../../shared/reconcile/namespace-batch.ts';
import { reconcileTemplate } from '../../shared/reconcile/template.ts';

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

/** The fan-out of `template`: its messages, collected rather than delivered, with their topics and ordering keys. */
export async function fanOut(deps: NamespaceDeps, template: string): Promise<Sent[]> {
  const bus = createMemoryBus();
  const out: Sent[] = [];
  for (const topic of ['ns', 'ns-pending']) {
    bus.subscribe(topic, async (d) => {
      const m = decodeMessage(d.data);
      if (m.ok) out.push({ message: m.message, topic, key: d.orderingKey });
    });
  }
  await reconcileTemplate({ kube: deps.kube, resolver: deps.resolver, bus, cluster: 'local', namespaceTopic: 'ns', pendingTopic: 'ns-pending', log: silentLogger, messagesPerSecond: 1e6 }, template);
  await bus.idle();
  return out;
}

/** As the runtime answers a namespace message. */
export function answer(deps: NamespaceDeps, m: ReconcileMessage): Promise<unknown> {
  const batch = batchRequest(m);
  return batch ? reconcileBatch(deps, batch) : reconcileNamespace(deps, m.name, { fanout: m.type === 'FANOUT', templates: m.templates });
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

/** The namespaces a fan-out's messages name: a batch's targets, or the namespace a message names alone. */
export const namedBy = (sent: readonly Sent[]): string[] => sent.flatMap(({ message }) => message.targets?.map((t) => t.n) ?? [message.name]);
