// What the relay is handed, in one place for the Deployment (functions/watch-relay/index.ts) and
// `npm start` (both through relay-process.ts): the observers that see every namespace (the
// organizations a message names, the billing tap), the kinds watched beside namespaces and
// templates (LNamespaces), and the drift watches (templates' objects, what LNamespaces hold).
// The relay itself imports none of these features.
import { createBillingTap, billingTapConfig, type BillingTap } from '../../../shared/billing/tap.ts';
import type { Bus } from '../../../shared/bus/types.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { resourcePath } from '../../../shared/kube/resources.ts';
import { driftedLNamespaces, lnamespaceFingerprint, LNS_DRIFT_RESOURCES, LNS_DRIFT_SELECTOR } from '../../../shared/lnamespace/relay.ts';
import { LNAMESPACES } from '../../../shared/lnamespace/types.ts';
import type { Logger } from '../../../shared/log.ts';
import { NamespaceOrganizations } from '../../../shared/org/relay-organizations.ts';
import type { Env } from '../../../shared/reconcile/config.ts';
import type { RelayConfig } from './config.ts';
import type { NamespaceObserver, RelayObservers } from './relay.ts';

/** Namespace messages name the organization(s) they concern: reconcile-organization trues up those only. */
export function organizationsObserver(organizations = new NamespaceOrganizations()): NamespaceObserver {
  return {
    observe: (event, ns) => ({ organizations: organizations.observe(ns, event) }),
    gone: (name) => ({ organizations: organizations.forget(name) }),
  };
}

/** The billing tap sees every namespace and adds nothing to its message. */
export function billingObserver(tap: BillingTap): NamespaceObserver {
  return {
    observe(event, ns) {
      tap.observe(event, ns);
      return undefined;
    },
    gone(name, uid) {
      tap.gone(name, uid);
      return undefined;
    },
    start: () => tap.start(),
    stop: () => tap.stop(),
  };
}

export interface WiringDeps {
  kube: KubeClient;
  bus: Bus;
  log: Logger;
  config: Pick<RelayConfig, 'cluster' | 'pageSize' | 'topics'> & Partial<Pick<RelayConfig, 'driftResources'>>;
  /** The billing tap's settings (FURNISH_TOPIC_BILLING empty: no tap). */
  env: Env;
}

export function relayObservers(deps: WiringDeps): RelayObservers {
  const { kube, bus, log, config } = deps;
  const tapConfig = billingTapConfig(deps.env, config.cluster, config.pageSize);
  const billing = tapConfig ? createBillingTap({ kube, bus, config: tapConfig, log }) : undefined;
  const lnamespaces = Boolean(config.topics.lnamespaces);
  return {
    observers: [organizationsObserver(), ...(billing ? [billingObserver(billing)] : [])],
    // LNamespaces are optional: their CRD may not be installed yet (a 404 lists as empty).
    kinds: lnamespaces ? [{ kind: 'LNamespace', path: resourcePath(LNAMESPACES), fingerprint: lnamespaceFingerprint, optional: true }] : [],
    driftWatches: [
      { kind: 'Namespace', resources: config.driftResources ?? [] },
      // What LNamespaces hold (their RBAC, the shared self-impersonation objects included): repaired in seconds.
      ...(lnamespaces ? [{ kind: 'LNamespace' as const, resources: LNS_DRIFT_RESOURCES, selector: LNS_DRIFT_SELECTOR, decide: driftedLNamespaces }] : []),
    ],
  };
}
