// `npm start` registers the webhooks (and, on a server with in-tree policies, writes Furnish's
// ValidatingAdmissionPolicies and bindings) with field manager `furnish-local`, labelled with its
// run's id (KEY.localRun), and removes them on exit, registrations first. A run that is killed would leave them behind, failing
// closed on a local server that is gone (even cluster-admin then could not create a namespace): its
// watchdog removes that run's (scripts/start/watchdog.ts); after a reboot, the next start removes
// every `furnish-local` one (never registrations written by `furnish install` or by hand) before
// it writes anything (docs/adr/0010).
import type { KubeClient } from '../shared/kube/client.ts';
import { isPolicyObject } from '../shared/install/plan.ts';
import { isLocalRegistration, LOCAL_FIELD_MANAGER, POLICY_KINDS as INSTALLED_POLICY_KINDS } from '../shared/install/policies.ts';
import { KEY } from '../shared/keys.ts';
import type { KubeObject } from '../shared/kube/types.ts';
import type { Logger } from '../shared/log.ts';

// Which objects are a run's alone is also what `furnish install` leaves to it (shared/install/policies.ts).
export { isLocalRegistration, LOCAL_FIELD_MANAGER };

const REGISTRATION_KINDS = [
  { kind: 'MutatingWebhookConfiguration', plural: 'mutatingwebhookconfigurations' },
  { kind: 'ValidatingWebhookConfiguration', plural: 'validatingwebhookconfigurations' },
] as const;
/** Bindings before their policies. A server without in-tree policies (1.26) answers their lists 404: nothing to remove. */
const POLICY_KINDS = [...INSTALLED_POLICY_KINDS].reverse();
/** Removal order: registrations first (a webhook relaxed by its matchConditions never runs without the policies). */
const KINDS = [...REGISTRATION_KINDS, ...POLICY_KINDS];

const pluralOf = (kind: string): string | undefined => KINDS.find((k) => k.kind === kind)?.plural;

/**
 * Writes a run's policies, then (once `enforced` finds them in force) its registrations, with
 * server-side apply as `furnish-local`. A policy that cannot be written, or policies not in force,
 * stop it before any registration, and it returns why: the in-tree variant's registrations fail
 * open where only the policies back them (mutate-namespace). A registration that cannot be written
 * is a WARNING (it is not there; the others guard what they guard).
 */
export async function writeRunAdmission(kube: KubeClient, configs: readonly KubeObject[], log: Logger, enforced: () => Promise<string | undefined>): Promise<string | undefined> {
  const write = (c: KubeObject) => kube.call({ method: 'PATCH', path: `/apis/admissionregistration.k8s.io/v1/${pluralOf(c.kind)}/${c.metadata.name}`, query: { fieldManager: LOCAL_FIELD_MANAGER, force: true }, contentType: 'application/apply-patch+yaml', body: c });
  const policies = configs.filter(isPolicyObject);
  for (const c of policies) {
    const res = await write(c);
    if (!res.ok) return `could not write ${c.kind} ${c.metadata.name}: ${res.error ?? `HTTP ${res.status}`}`;
    log.log('INFO', 'admission policy written', { kind: c.kind, name: c.metadata.name });
  }
  const problem = policies.length > 0 ? await enforced() : undefined;
  if (problem !== undefined) return problem;
  for (const c of configs.filter((o) => !isPolicyObject(o))) {
    const res = await write(c);
    log.log(res.ok ? 'INFO' : 'WARNING', res.ok ? 'webhook registered' : 'could not register webhook', { kind: c.kind, name: c.metadata.name, status: res.status, error: res.error });
  }
  return undefined;
}

/** The kubectl command that deletes these webhook registrations (and policies). */
export function removeRegistrationsCommand(configs: readonly KubeObject[]): string {
  return KINDS.map(({ kind }) => [kind.toLowerCase(), configs.filter((c) => c.kind === kind).map((c) => c.metadata.name).join(' ')])
    .filter(([, names]) => names !== '').map(([resource, names]) => `kubectl delete ${resource} ${names}`).join('; ');
}

/** Deletes the registrations an earlier `npm start` left; returns them. */
export async function removeStaleLocalRegistrations(kube: KubeClient, log: Logger): Promise<KubeObject[]> {
  const stale: KubeObject[] = [];
  for (const { kind, plural } of KINDS) {
    const path = `/apis/admissionregistration.k8s.io/v1/${plural}`;
    const list = await kube.call<{ items?: KubeObject[] }>({ method: 'GET', path });
    for (const o of (list.data?.items ?? []).filter(isLocalRegistration)) {
      const res = await kube.call({ method: 'DELETE', path: `${path}/${o.metadata.name}` });
      if (res.ok || res.status === 404) stale.push({ ...o, kind });
      else log.log('WARNING', 'could not remove a webhook registration left by an earlier npm start', { name: o.metadata.name, status: res.status, error: res.error, removeByHand: removeRegistrationsCommand([{ ...o, kind }]) });
    }
  }
  if (stale.length > 0) log.log('WARNING', 'removed webhook registrations left by an earlier npm start that did not stop cleanly', { registrations: stale.map((o) => o.metadata.name), byHand: removeRegistrationsCommand(stale) });
  return stale;
}

/**
 * The kubectl commands that delete the registrations, then the policies, of run `runId` (of any run
 * when omitted): two, since kubectl refuses a whole command naming a kind the server lacks (1.26).
 */
export function removeRunCommand(runId?: string): string {
  const selector = `-l ${KEY.localRun}${runId === undefined ? '' : `=${runId}`}`;
  return [REGISTRATION_KINDS, POLICY_KINDS].map((kinds) => `kubectl delete ${kinds.map((k) => k.plural).join(',')} ${selector}`).join('; ');
}

/**
 * Deletes the registrations of run `runId` that are still as that run left them (uid and
 * resourceVersion preconditions: one a later `npm start` has written over since is its, and stays);
 * returns their names. Throws when a list or a delete fails (the caller tries again).
 */
export async function removeRunRegistrations(kube: KubeClient, runId: string): Promise<string[]> {
  const removed: string[] = [];
  for (const { plural } of KINDS) {
    const path = `/apis/admissionregistration.k8s.io/v1/${plural}`;
    const list = await kube.call<{ items?: KubeObject[] }>({ method: 'GET', path, query: { labelSelector: `${KEY.localRun}=${runId}` } });
    if (list.status === 404 && POLICY_KINDS.some((k) => k.plural === plural)) continue;
    if (!list.ok) throw new Error(`list ${plural}: ${list.error ?? `HTTP ${list.status}`}`);
    for (const o of (list.data?.items ?? []).filter(isLocalRegistration)) {
      const { uid, resourceVersion } = o.metadata;
      const res = await kube.call({ method: 'DELETE', path: `${path}/${o.metadata.name}`, body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid, resourceVersion } } });
      // 404: gone already; 409: written over by a later run since (its registration now).
      if (res.ok) removed.push(o.metadata.name!); // a listed object has its name
      else if (res.status !== 404 && res.status !== 409) throw new Error(`delete ${plural} ${o.metadata.name}: ${res.error ?? `HTTP ${res.status}`}`);
    }
  }
  return removed;
}
