// `furnish install` and `furnish uninstall` against one cluster: the I/O around plan.ts,
// probes.ts and reachability.ts. Install first GETs each function's liveness URL from this machine
// and stops, writing nothing, if one cannot be reached (naming the layer: DNS, TCP, TLS, HTTP).
// It then reads what the cluster holds under the names it writes, writes Furnish's namespace,
// CRDs, identities and relay (infra/), on a server with in-tree policies Furnish's
// ValidatingAdmissionPolicies first (policies.ts; proven enforced by a dry run; those of an earlier
// install no longer rendered are removed), then registers every webhook with failurePolicy Ignore, probes
// each function with server-side dry runs until it answers as it must, and only then lets each
// probed security webhook fail closed (an unprobed one stays Ignore, probes.ts says which and why).
// If anything fails, the install undoes itself (plan.ts undoSteps): it deletes what it created and
// writes back what was there before, so a failed first install leaves nothing and a failed
// upgrade leaves the previous install. Uninstall removes the registrations first.
import { randomUUID } from 'node:crypto';
import { applyObject, createObject, deleteObject, listEach, NAMESPACES } from '../kube/api.ts';
import type { KubeClient } from '../kube/client.ts';
import { ResourceResolver, resourcePath, type ResourceInfo } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import type { Logger, Severity } from '../log.ts';
import { inTreePolicies } from '../kube/features.ts';
import { defaultPolicySettings, type PolicySettings } from '../config/types.ts';
import { webhookRegistrations, type RegistrationOptions } from '../webhooks/registration.ts';
import { ENFORCEMENT_CHECK, installedPolicies, notEnforced, PART_OF, POLICY_API, POLICY_KINDS, stalePolicies, stillEnforced } from './policies.ts';
import { fillObject, isWebhookConfiguration, loadKustomization } from './manifests.ts';
import { admissionWrittenBack, failClosedConfigurations, failurePolicies, functionOf, imageReferenceProblem, INSTALL_PHASES, installOrder, isPolicyObject, keepsPolicies, undoSteps, uninstallOrder, withFailurePolicy, type FailurePolicy, type InstallPhase, type Prior, type Undo } from './plan.ts';
import { CHECK_NAMESPACE_PREFIX, isInstallerNamespace, isProbed, PROBE_KEY, PROBE_NAMESPACE_PREFIX, PROBE_RULES, PROBE_USER, PROBES, pendingNamespaceObject, unprobed, type Probe, type ProbeNames, type Unprobed } from './probes.ts';
import { attemptGet, reachFunctions } from './reach.ts';
import { calledFunctions } from './reachability.ts';

import { INSTALL_FIELD_MANAGER } from '../keys.ts';

export { INSTALL_FIELD_MANAGER };

export interface InstallTarget {
  /** The installer's own identity (cluster-admin: it writes CRDs, RBAC and registrations, and impersonates the probe user). */
  kube: KubeClient;
  /** The same API server as PROBE_USER (see probes.ts). */
  probeKube: KubeClient;
  log: Logger;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** One GET from this machine (reach.ts); tests may stand in for the network. */
  attempt?: typeof attemptGet;
}

export interface InstallOptions {
  /** Where the functions are (its `inTree` is decided here, by discovery). */
  registration: Omit<RegistrationOptions, 'inTree'>;
  /** The policy settings the functions run with (rendered into the policies and matchConditions); default: the functions' defaults. */
  settings?: PolicySettings;
  /** Where `settings` came from, said as a progress line when they are rendered (the CLI's --config or --vars). */
  settingsSource?: { severity: Severity; message: string };
  /** Values of the `${FURNISH_*}` variables of infra/ (relay image, cluster id, project). */
  vars: Record<string, string>;
  /** How long the functions have to answer every probe. */
  timeoutMs: number;
  /** Between rounds of probes. */
  intervalMs?: number;
  /** A suffix for the probe objects' names (random by default). */
  probeId?: string;
  /** Skip the GET of each function from this machine (only the cluster's network reaches them); the in-cluster probes still decide. */
  skipReachability?: boolean;
  /** Aborted (Ctrl-C): the install stops at its next step and undoes what it wrote. */
  signal?: AbortSignal;
}

export interface Installed {
  /** The webhooks whose manifest says Fail that no probe checks, left at Ignore, with why. */
  ignored: Unprobed[];
  /** The server has in-tree policies: Furnish's were installed, and the registrations carry matchConditions. */
  inTree: boolean;
}

/** The install stopped (and undid what it wrote, its message says how far). */
export class InstallError extends Error {
  override name = 'InstallError';
}

/** Everything of infra/ but the registrations, with its variables filled, in install order. */
export function clusterObjects(vars?: Record<string, string>): KubeObject[] {
  const objects = loadKustomization().filter((o) => !isWebhookConfiguration(o));
  return installOrder(vars ? objects.map((o) => fillObject(o, vars)) : objects);
}

async function resolve(resolver: ResourceResolver, o: KubeObject): Promise<ResourceInfo> {
  const info = await resolver.forObject(o.apiVersion, o.kind);
  if (!info) throw new InstallError(`${o.kind}/${o.metadata.name}: the cluster serves no ${o.apiVersion} ${o.kind}`);
  return info;
}

const named = (o: KubeObject) => ({ kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) });

/** Server-side apply; `quiet`: no progress line (the probe namespace, written again every round). */
async function apply(t: Pick<InstallTarget, 'kube' | 'log'>, resolver: ResourceResolver, o: KubeObject, quiet = false): Promise<void> {
  const res = await applyObject(t.kube, await resolve(resolver, o), o, { fieldManager: INSTALL_FIELD_MANAGER });
  if (!res.ok) throw new InstallError(`could not apply ${o.kind}/${o.metadata.name}: ${res.error ?? `HTTP ${res.status}`}`);
  if (!quiet) t.log.log('INFO', 'applied', named(o));
}

/** CRDs are usable once their group version lists them. */
async function waitForCrds(t: InstallTarget, crds: readonly KubeObject[], deadline: number): Promise<void> {
  const byGroupVersion = new Map<string, string[]>();
  for (const crd of crds) {
    const spec = crd.spec as { group: string; names: { plural: string }; versions: { name: string; served?: boolean }[] };
    for (const v of spec.versions.filter((x) => x.served !== false)) byGroupVersion.set(`${spec.group}/${v.name}`, [...(byGroupVersion.get(`${spec.group}/${v.name}`) ?? []), spec.names.plural]);
  }
  const sleep = t.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const now = t.now ?? Date.now;
  // Served, and listed: for a moment after discovery shows a new CRD, kube-apiserver 1.30+ answers
  // its (unpaged) lists 429 "storage is (re)initializing" while its watch cache fills.
  const listed = async (gv: string, plural: string) => (await t.kube.call({ method: 'GET', path: `/apis/${gv}/${plural}` })).ok;
  for (const [gv, plurals] of byGroupVersion) {
    for (;;) {
      const r = await t.kube.call<{ resources?: { name: string }[] }>({ method: 'GET', path: `/apis/${gv}` });
      const served = new Set((r.data?.resources ?? []).map((x) => x.name));
      if (r.ok && plurals.every((p) => served.has(p)) && (await Promise.all(plurals.map((p) => listed(gv, p)))).every(Boolean)) break;
      if (now() > deadline) throw new InstallError(`the CRDs of ${gv} (${plurals.join(', ')}) are not served yet; rerun furnish install`);
      await sleep(200);
    }
  }
}

async function register(t: InstallTarget, resolver: ResourceResolver, configs: readonly KubeObject[], policy: FailurePolicy | 'as-planned'): Promise<void> {
  for (const c of configs) await apply(t, resolver, policy === 'as-planned' ? c : withFailurePolicy(c, policy));
  if (policy === 'as-planned') {
    const closed = Object.entries(failurePolicies(configs)).filter(([, p]) => p === 'Fail').map(([w]) => w);
    t.log.log('INFO', 'security webhooks switched to failurePolicy Fail', { registrations: configs.map((c) => c.metadata.name), webhooks: closed });
  } else t.log.log('INFO', `webhooks registered with failurePolicy ${policy} (an unanswered call lets the request through)`, { registrations: configs.map((c) => c.metadata.name) });
}

const probeRole = (): KubeObject[] => [
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'furnish-install-probe' }, rules: PROBE_RULES },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'furnish-install-probe' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'furnish-install-probe' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: PROBE_USER }],
  },
];

async function remove(t: Pick<InstallTarget, 'kube' | 'log'>, resolver: ResourceResolver, o: KubeObject): Promise<void> {
  const res = await deleteObject(t.kube, await resolve(resolver, o), o.metadata.namespace ?? '', o.metadata.name!);
  if (!res.ok && res.status !== 404) throw new InstallError(`could not delete ${o.kind}/${o.metadata.name}: ${res.error ?? `HTTP ${res.status}`}`);
  if (res.ok) t.log.log('INFO', 'deleted', named(o));
}

async function runProbe(t: InstallTarget, resolver: ResourceResolver, probe: Probe, names: ProbeNames): Promise<string | undefined> {
  const object = probe.object(names);
  const client = probe.as === 'probe-user' ? t.probeKube : t.kube;
  const res = await createObject(client, await resolve(resolver, object), object, { dryRun: true, fieldManager: probe.fieldManager ?? INSTALL_FIELD_MANAGER });
  return probe.judge({ status: res.status, data: res.data, error: res.error });
}

/** Rounds of probes until each has passed once, or the deadline; returns what still fails, by webhook. */
/** Between steps: an interrupted install stops there, and undoes what it wrote. */
function stopIfInterrupted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new InstallError('interrupted (SIGINT) before it was done');
}

async function probeUntilAnswered(t: InstallTarget, resolver: ResourceResolver, webhooks: readonly string[], names: ProbeNames, deadline: number, intervalMs: number, signal?: AbortSignal): Promise<Map<string, string>> {
  const sleep = t.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const now = t.now ?? Date.now;
  const waiting = new Map(PROBES.filter((p) => webhooks.includes(p.webhook)).map((p) => [p.webhook, p]));
  const why = new Map<string, string>();
  for (;;) {
    // A reconciler may have furnished the probe namespace since the last round: pending again (the installer holds `initialize`).
    let noPendingNamespace: string | undefined;
    if (waiting.has('guard-initializing')) {
      noPendingNamespace = await apply(t, resolver, pendingNamespaceObject(names.pendingNamespace), true).then(() => undefined, (e: unknown) => `guard-initializing: its probe namespace: ${(e as Error).message}`);
    }
    for (const [webhook, probe] of waiting) {
      const problem = webhook === 'guard-initializing' && noPendingNamespace ? noPendingNamespace : await runProbe(t, resolver, probe, names);
      if (problem === undefined) {
        waiting.delete(webhook);
        why.delete(webhook);
        t.log.log('INFO', 'function answers', { webhook });
      } else why.set(webhook, problem);
    }
    if (waiting.size === 0 || now() + intervalMs > deadline) return why;
    await sleep(intervalMs);
    stopIfInterrupted(signal);
  }
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** GETs every function's liveness URL from this machine, logging each; returns why each that failed did. */
async function unreachableFunctions(t: InstallTarget, configurations: readonly object[], o: InstallOptions): Promise<{ name: string; problem: string }[]> {
  const reached = await reachFunctions(calledFunctions(configurations), Math.min(o.timeoutMs, REACH_TIMEOUT_MS), t.attempt);
  const failed: { name: string; problem: string }[] = [];
  for (const { name, url, reach } of reached) {
    if (reach.reachable) t.log.log('INFO', 'function reachable', { function: name, url });
    else {
      t.log.log('ERROR', 'function unreachable', { function: name, url, layer: reach.layer, problem: reach.problem });
      failed.push({ name, problem: reach.problem });
    }
  }
  return failed;
}

/** How long one GET of a function's liveness URL may take (a cold start included). */
const REACH_TIMEOUT_MS = 15_000;

/** Installs Furnish in the cluster; resolves once every probed security webhook fails closed, or undoes what it wrote and throws. */
export async function install(t: InstallTarget, o: InstallOptions): Promise<Installed> {
  const image = o.vars.FURNISH_RELAY_IMAGE;
  const problem = image === undefined ? 'FURNISH_RELAY_IMAGE has no value' : imageReferenceProblem(image);
  if (problem) throw new InstallError(`relay image: ${problem}`);
  const settings = o.settings ?? defaultPolicySettings();
  const inTree = await inTreePolicies(t.kube).catch((e: unknown) => {
    throw new InstallError(`${(e as Error).message}; nothing was written`);
  });
  t.log.log('INFO', inTree ? 'the server evaluates ValidatingAdmissionPolicies: installing Furnish\'s, and matchConditions on the webhooks' : 'the server has no ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1): webhooks only', {});
  if (inTree && o.settingsSource) t.log.log(o.settingsSource.severity, o.settingsSource.message, {});
  const registrations = webhookRegistrations({ ...o.registration, ...(inTree ? { inTree: settings } : {}) }) as KubeObject[];
  const policies = inTree ? installedPolicies(settings) : [];
  if (!o.skipReachability) {
    const unreachable = await unreachableFunctions(t, registrations, o);
    if (unreachable.length > 0) {
      throw new InstallError([
        `${plural(unreachable.length, 'function')} of ${calledFunctions(registrations).length} cannot be reached from this machine, so nothing was written to the cluster:`,
        ...unreachable.map((f) => `  - ${f.name}: ${f.problem}`),
        'kube-apiserver would call the same URLs with the same CA bundle. Fix the URL (--url, FURNISH_FUNCTIONS_URL) or the functions, then run furnish install again (--skip-reachability if only the cluster\'s network reaches them).',
      ].join('\n'));
    }
  }
  const resolver = new ResourceResolver(t.kube);
  const objects = clusterObjects(o.vars);
  const priors = await readPriors(t, resolver, [...registrations, ...objects, ...policies]);
  // Furnish's policies of an earlier install no longer rendered: deleted, written back by the undo.
  const stale = inTree ? stalePolicies(await livePolicies(t), policies) : [];
  priors.push(...stale.map((object) => ({ object, before: object })));
  // What this install wrote (or sent a write for): all the undo may touch.
  const written = new Set<KubeObject>();
  try {
    return { ...await applyAndProbe(t, resolver, o, objects, { registrations, policies, stale }, priors, written), inTree };
  } catch (e) {
    const undone = await undo(t, resolver, priors.filter((p) => written.has(p.object)), o.skipReachability === true);
    if (e instanceof InstallError) throw new InstallError(`${e.message}\n${undone}`);
    t.log.log('ERROR', undone);
    throw e;
  }
}

/** Policies and bindings labelled Furnish's, as listed (each with its kind). */
async function livePolicies(t: Pick<InstallTarget, 'kube'>, when = 'before installing (nothing was written)'): Promise<KubeObject[]> {
  const all: KubeObject[] = [];
  for (const { kind, plural } of POLICY_KINDS) {
    const res = await t.kube.call<{ items?: KubeObject[] }>({ method: 'GET', path: `/apis/${POLICY_API}/${plural}`, query: { labelSelector: `${PART_OF.key}=${PART_OF.value}` } });
    if (!res.ok) throw new InstallError(`could not list ${plural} ${when}: HTTP ${res.status}: ${res.error ?? ''}`);
    all.push(...(res.data?.items ?? []).map((o) => ({ ...o, apiVersion: POLICY_API, kind })));
  }
  return all;
}

interface Admission {
  registrations: readonly KubeObject[];
  /** Policies then bindings to apply (none on a server without in-tree policies). */
  policies: readonly KubeObject[];
  /** Furnish's policies and bindings no longer rendered: deleted. */
  stale: readonly KubeObject[];
}

async function applyAndProbe(t: InstallTarget, resolver: ResourceResolver, o: InstallOptions, objects: readonly KubeObject[], { registrations, policies, stale }: Admission, priors: readonly Prior[], written: Set<KubeObject>): Promise<Omit<Installed, 'inTree'>> {
  const writing = (some: readonly KubeObject[]) => some.forEach((x) => written.add(x));
  const now = t.now ?? Date.now;
  const deadline = now() + o.timeoutMs;
  const id = o.probeId ?? Math.random().toString(36).slice(2, 8);
  // Not furnish-*: Furnish reserves those names, and the probes must not be refused for their name.
  const names: ProbeNames = { dryRun: `install-dry-run-${id}`, pendingNamespace: `${PROBE_NAMESPACE_PREFIX}${id}`, furnishNamespace: objects.find((x) => x.kind === 'Namespace')!.metadata.name! };
  const rbac = probeRole();
  const manifest = failurePolicies(registrations);
  let failing = new Map<string, string>();
  const phases: Record<InstallPhase, () => Promise<void>> = {
    // The in-tree rules hold before any webhook is registered or relaxed by its matchConditions.
    policies: async () => {
      for (const object of policies) {
        stopIfInterrupted(o.signal);
        writing([object]);
        await apply(t, resolver, object);
      }
    },
    // Registrations left by an earlier install or a killed `npm start` may fail closed on functions
    // that are gone, and would refuse the writes below: Ignore first.
    'previous-registrations': async () => {
      const existing = registrations.filter((c) => priors.some((p) => p.object === c && p.before));
      stopIfInterrupted(o.signal);
      writing(existing);
      if (existing.length > 0) await register(t, resolver, existing, 'Ignore');
    },
    enforced: async () => {
      if (policies.length === 0) return;
      const problem = await enforcementProblem(t.kube, `${CHECK_NAMESPACE_PREFIX}${id}`, { sleep: t.sleep, now: t.now, until: Math.min(deadline, now() + ENFORCEMENT_WAIT_MS) });
      if (problem) throw new InstallError(`Furnish's ValidatingAdmissionPolicies are written but not enforced: ${problem}`);
      t.log.log('INFO', 'in-tree policies enforced', { policy: ENFORCEMENT_CHECK.policy });
    },
    infra: async () => {
      for (const object of objects) {
        stopIfInterrupted(o.signal);
        writing([object]);
        await apply(t, resolver, object);
        if (object.kind === 'CustomResourceDefinition' && objects.at(objects.indexOf(object) + 1)?.kind !== 'CustomResourceDefinition') {
          await waitForCrds(t, objects.filter((x) => x.kind === 'CustomResourceDefinition'), deadline);
        }
      }
    },
    registrations: async () => {
      writing(registrations);
      await register(t, resolver, registrations, 'Ignore');
    },
    // After the registrations that no longer need them; bindings first, so that no binding is left naming a policy that is gone.
    'stale-policies': async () => {
      for (const object of [...stale].reverse()) {
        writing([object]);
        await remove(t, resolver, object);
      }
    },
    probes: async () => {
      for (const object of rbac) await apply(t, resolver, object);
      failing = await probeUntilAnswered(t, resolver, Object.keys(manifest).map(functionOf), names, deadline, o.intervalMs ?? 1000, o.signal);
    },
  };
  try {
    for (const phase of INSTALL_PHASES) await phases[phase]();
  } finally {
    for (const object of [...rbac, pendingNamespaceObject(names.pendingNamespace)]) await remove(t, resolver, object).catch((e: unknown) => t.log.log('WARNING', 'could not remove a probe object', { error: (e as Error).message }));
  }
  if (failing.size > 0) {
    throw new InstallError([
      `${plural(failing.size, 'function')} did not answer the cluster's probes as expected within ${Math.round(o.timeoutMs / 1000)} s:`,
      ...[...failing.values()].map((w) => `  - ${w}`),
      o.skipReachability
        ? 'Check the functions\' URL, CA bundle, credential and API access, then run furnish install again.'
        : 'Each answers its liveness URL from this machine, so look at the cluster\'s side: its network path to the URL, the CA bundle, the path credential (install_vars or --credential-env), and the functions\' API access (a first install on a cluster without Google identities: mint the furnish-webhook token, kept by the undo below, for Terraform\'s cluster_webhook_tokens); then run furnish install again.',
    ].join('\n'));
  }
  stopIfInterrupted(o.signal);
  const ignored = unprobed(Object.entries(manifest).filter(([, policy]) => policy === 'Fail').map(([w]) => functionOf(w)));
  for (const { webhook, why } of ignored) t.log.log('WARNING', 'not probed: left at failurePolicy Ignore (not enforced while its function does not answer)', { webhook, why });
  await register(t, resolver, failClosedConfigurations(registrations, isProbed), 'as-planned');
  return { ignored };
}

/** What the cluster holds under each name the install writes, read before it writes anything. */
async function readPriors(t: InstallTarget, resolver: ResourceResolver, objects: readonly KubeObject[]): Promise<Prior[]> {
  const priors: Prior[] = [];
  for (const object of objects) {
    // A kind the cluster does not serve yet (a CRD's) has no object to find.
    const info = await resolver.forObject(object.apiVersion, object.kind);
    const res = info ? await t.kube.call<KubeObject>({ method: 'GET', path: resourcePath(info, object.metadata.namespace, object.metadata.name) }) : undefined;
    if (res && !res.ok && res.status !== 404) throw new InstallError(`could not read ${object.kind}/${object.metadata.name} before installing (HTTP ${res.status}: ${res.error ?? ''}); nothing was written`);
    priors.push({ object, before: res?.ok ? res.data : undefined });
  }
  return priors;
}

/** Whether a CRD still serves objects (a failed install keeps it then: deleting it would delete them). */
async function crdHoldsObjects(t: InstallTarget, crd: KubeObject): Promise<boolean> {
  const spec = crd.spec as { group: string; names: { plural: string }; versions: { name: string; served?: boolean }[] };
  const version = spec.versions.find((v) => v.served !== false)?.name;
  const res = await t.kube.call<{ items?: unknown[] }>({ method: 'GET', path: `/apis/${spec.group}/${version}/${spec.names.plural}`, query: { limit: '1' } });
  return !res.ok || (res.data?.items ?? []).length > 0;
}

/** Waits (bounded) until what was deleted is gone, so that a rerun does not meet a terminating namespace or CRD. */
async function waitGone(t: InstallTarget, resolver: ResourceResolver, deleted: readonly KubeObject[]): Promise<KubeObject[]> {
  const sleep = t.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const now = t.now ?? Date.now;
  const until = now() + UNDO_WAIT_MS;
  let left = deleted.filter((o) => o.kind === 'Namespace' || o.kind === 'CustomResourceDefinition');
  while (left.length > 0 && now() < until) {
    const still: KubeObject[] = [];
    for (const o of left) if ((await t.kube.call({ method: 'GET', path: resourcePath(await resolve(resolver, o), undefined, o.metadata.name) })).status !== 404) still.push(o);
    left = still;
    if (left.length > 0) await sleep(500);
  }
  return left;
}

const UNDO_WAIT_MS = 60_000;

/**
 * The liveness URLs of the functions the registrations found before the install called, that
 * answer from this machine; with --skip-reachability (this machine does not reach them) every one,
 * and the lockout check after the undo judges them as the cluster calls them.
 */
async function previousFunctionsAnswering(t: InstallTarget, priors: readonly Prior[], skipReachability: boolean): Promise<Set<string>> {
  try {
    const previous = calledFunctions(priors.flatMap((p) => (p.before && isWebhookConfiguration(p.object) ? [p.before] : [])));
    if (skipReachability) return new Set(previous.map((f) => f.url));
    return new Set((await reachFunctions(previous, REACH_TIMEOUT_MS, t.attempt)).filter((f) => f.reach.reachable).map((f) => f.url));
  } catch {
    return new Set(); // A URL that does not parse calls no function that answers.
  }
}

const shown = (o: KubeObject) => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

/** Objects by kind, for one line: a kind's only object by name, several as a count (the progress lines name each). */
function summary(objects: readonly KubeObject[]): string {
  const byKind = new Map<string, KubeObject[]>();
  for (const o of objects) byKind.set(o.kind, [...(byKind.get(o.kind) ?? []), o]);
  return [...byKind].map(([kind, of]) => (of.length === 1 ? shown(of[0]!) : `${of.length} × ${kind}`)).join(', ');
}

/**
 * Takes back what a failed install wrote (plan.ts undoSteps), and says what it did. Never throws:
 * a step that fails is named, with what is left to do by hand. Last, a dry-run namespace create
 * checks nobody is locked out; if it is refused (a restored webhook whose function refuses),
 * every registration is removed.
 */
async function undo(t: InstallTarget, resolver: ResourceResolver, priors: readonly Prior[], skipReachability: boolean): Promise<string> {
  const answering = await previousFunctionsAnswering(t, priors, skipReachability);
  const steps = undoSteps(priors, answering);
  const done: Undo[] = [];
  const kept: string[] = [];
  const identities: KubeObject[] = [];
  const failed: string[] = [];
  const failedObjects: KubeObject[] = [];
  t.log.log('WARNING', 'undoing the install', { steps: steps.length });
  for (const step of steps) {
    if (step.action === 'keep') {
      identities.push(step.object);
      continue;
    }
    // Registrations come first: one left as the install wrote it keeps the policies it relies on.
    if (isPolicyObject(step.object) && keepsPolicies(failedObjects)) {
      failed.push(`${shown(step.object)}: kept as the install wrote it, since a registration above was not taken back and relies on it`);
      continue;
    }
    try {
      if (step.action === 'delete' && step.object.kind === 'CustomResourceDefinition' && (await crdHoldsObjects(t, step.object))) {
        kept.push(`${shown(step.object)} (it holds objects now)`);
        continue;
      }
      if (step.action === 'delete') await remove(t, resolver, step.object);
      else await apply(t, resolver, step.object);
      done.push(step);
    } catch (e) {
      failedObjects.push(step.object);
      failed.push(`${shown(step.object)}: ${(e as Error).message}`);
    }
  }
  const deleted = done.filter((s) => s.action === 'delete').map((s) => s.object);
  const restored = done.filter((s) => s.action === 'restore');
  const terminating = await waitGone(t, resolver, deleted).catch(() => []);
  const downgraded = restored.flatMap((s) => (s.action === 'restore' ? s.downgraded : []));
  // Unknown when the check itself cannot reach the API server (the steps above then say NOT undone).
  const lockout = restored.some((s) => isWebhookConfiguration(s.object)) ? await namespaceCreateRefused(t, resolver).catch(() => undefined) : undefined;
  const removedAgain = lockout === undefined ? [] : admissionWrittenBack(restored.map((s) => s.object));
  for (const o of removedAgain) await remove(t, resolver, o).catch((e: unknown) => failed.push(`${shown(o)}: ${(e as Error).message}`));
  const lines = [
    failed.length === 0 && kept.length === 0 ? 'The install was undone:' : 'The install was undone, except as said below:',
    deleted.length > 0 ? `  - deleted what it had created (${deleted.length}): ${summary(deleted)}` : undefined,
    restored.length > 0 ? `  - wrote back as they were the ${restored.length} objects that existed before it (a previous install stays): ${summary(restored.map((s) => s.object))}` : undefined,
    downgraded.length > 0 ? `  - except that ${downgraded.join(', ')} now fail${downgraded.length === 1 ? 's' : ''} open (failurePolicy Ignore): this machine does not reach ${downgraded.length === 1 ? 'its' : 'their'} previous function, and failing closed on a function that is gone locks the cluster` : undefined,
    lockout !== undefined ? `  - then a namespace create was refused (${lockout}): a webhook that answers with a refusal refuses whatever its failurePolicy, so what was written back of admission was removed again (${summary(removedAgain)}): nothing of Furnish is enforced until furnish install succeeds` : undefined,
    identities.length > 0 ? `  - kept the identities it created (${identities.length}), which grant nothing without the RBAC it deleted: ${summary(identities)} (a token minted for them meanwhile stays valid; furnish uninstall removes them)` : undefined,
    ...kept.map((k) => `  - kept ${k}: furnish uninstall --crds removes it`),
    ...terminating.map((o) => `  - ${shown(o)} is still being deleted: wait for it before installing again`),
    ...failed.map((f) => `  - NOT undone: ${f} (furnish uninstall removes everything of Furnish)`),
    steps.length === 0 ? '  - nothing had been written' : undefined,
  ];
  return lines.filter((l) => l !== undefined).join('\n');
}

/** Why the installer's own dry-run namespace create is refused, or undefined when it is admitted. */
async function namespaceCreateRefused(t: InstallTarget, resolver: ResourceResolver): Promise<string | undefined> {
  const object: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `install-dry-run-${Math.random().toString(36).slice(2, 8)}` } };
  const res = await createObject(t.kube, await resolve(resolver, object), object, { dryRun: true, fieldManager: INSTALL_FIELD_MANAGER });
  return res.ok ? undefined : `HTTP ${res.status}: ${res.error ?? ''}`;
}

/** How long a policy just written (or removed) may take to be enforced (or lifted): kube-apiserver loads policies from its informer. Shared with npm start. */
export const ENFORCEMENT_WAIT_MS = 30_000;

/**
 * Proves Furnish's policies are enforced (policies.ts ENFORCEMENT_CHECK), or with `lifted` that
 * they no longer are: creates namespace `name` unmarked (as an administrator may while
 * mutate-namespace is not registered), dry-runs the check's phase label until the answer says so
 * or `until`, and deletes that namespace again; why it does not, or undefined. Created, never
 * applied, and deleted only with its uid as precondition: a namespace of that name that someone
 * else made first (or again, after this one went) is neither taken over nor deleted. Shared with
 * `npm start`.
 */
export async function enforcementProblem(kube: KubeClient, name: string, o: { fieldManager?: string; sleep?: (ms: number) => Promise<void>; now?: () => number; until: number; lifted?: boolean }): Promise<string | undefined> {
  const sleep = o.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const now = o.now ?? Date.now;
  const fieldManager = o.fieldManager ?? INSTALL_FIELD_MANAGER;
  const judge = o.lifted ? stillEnforced : notEnforced;
  const path = `/api/v1/namespaces/${name}`;
  // The client retries a create that timed out or failed on the server's side, which may have
  // made it: the namespace is this check's when it carries this check's nonce.
  const nonce = randomUUID();
  const created = await kube.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', query: { fieldManager }, body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, annotations: { [PROBE_KEY]: nonce } } } });
  const uid = (created.ok ? created.data?.metadata.uid : undefined) ?? await probeUid(kube, path, nonce);
  if (uid === undefined) {
    const why = created.status === 409 ? 'it already exists (someone else\'s: it was left alone); run again: each check picks a new name'
      : created.ok ? `the server answered HTTP ${created.status} without its uid (nothing to delete it by)` : `HTTP ${created.status}: ${created.error ?? ''}`;
    return `could not create namespace ${name} to check them: ${why}`;
  }
  try {
    for (;;) {
      const problem = judge(await kube.call({ method: 'PATCH', path, query: { dryRun: 'All', fieldManager }, contentType: 'application/merge-patch+json', body: ENFORCEMENT_CHECK.patch }));
      if (problem === undefined || now() >= o.until) return problem;
      await sleep(500);
    }
  } finally {
    await deleteObject(kube, NAMESPACES, '', name, { uid });
  }
}

/** The uid of namespace `path` if this check made it (it carries `nonce`); undefined otherwise. */
async function probeUid(kube: KubeClient, path: string, nonce: string): Promise<string | undefined> {
  const res = await kube.call<KubeObject>({ method: 'GET', path });
  return res.ok && res.data?.metadata.annotations?.[PROBE_KEY] === nonce ? res.data.metadata.uid : undefined;
}

/** Removes the registrations first, then the rest of infra/ (CRDs, and with them every custom resource, only if `crds`). */
export async function uninstall(t: Pick<InstallTarget, 'kube' | 'log'>, o: { crds: boolean }): Promise<void> {
  const resolver = new ResourceResolver(t.kube);
  // Only the names matter here: no URL nor variable is filled in.
  const registrations = webhookRegistrations({ functionsUrl: 'https://unused' }) as KubeObject[];
  // Furnish's policies, whatever settings rendered them (after the registrations: a webhook relaxed by its matchConditions never runs without them).
  const inTree = await inTreePolicies(t.kube).catch((e: unknown) => {
    throw new InstallError(`${(e as Error).message}; nothing was removed (whether Furnish's in-tree policies are there is unknown)`);
  });
  const policies = inTree ? stalePolicies(await livePolicies(t, 'to remove them (nothing was removed)'), []) : [];
  // The probe identity too, should an install have been interrupted while probing.
  for (const object of uninstallOrder([...registrations, ...clusterObjects(), ...policies, ...probeRole()], { crds: o.crds })) await remove(t, resolver, object);
  if (policies.some((p) => p.metadata.name === ENFORCEMENT_CHECK.policy)) await waitLifted(t);
  await removeInstallerNamespaces(t);
}

/** The installer's own namespaces an install killed while probing left behind (isInstallerNamespace), each deleted with its uid as precondition. */
async function removeInstallerNamespaces(t: Pick<InstallTarget, 'kube' | 'log'>): Promise<void> {
  const left: KubeObject[] = [];
  const listed = await listEach(t.kube, resourcePath(NAMESPACES), { limit: 500 }, (ns) => void (isInstallerNamespace(ns) && left.push(ns)));
  if (!listed.ok) throw new InstallError(`could not list namespaces to find those an interrupted install left (HTTP ${listed.status}: ${listed.error ?? ''}); everything else was removed: run furnish uninstall again`);
  for (const ns of left) {
    const res = await deleteObject(t.kube, NAMESPACES, '', ns.metadata.name!, { uid: ns.metadata.uid! });
    if (!res.ok && res.status !== 404 && res.status !== 409) throw new InstallError(`could not delete namespace ${ns.metadata.name} (an interrupted install's): HTTP ${res.status}: ${res.error ?? ''}`);
    t.log.log('INFO', 'deleted', { kind: 'Namespace', name: ns.metadata.name, why: 'an interrupted install left it' });
  }
}

/** Returns once the server no longer enforces Furnish's removed policies (it drops them within about a second), or warns after ENFORCEMENT_WAIT_MS. */
async function waitLifted(t: Pick<InstallTarget, 'kube' | 'log'>): Promise<void> {
  const problem = await enforcementProblem(t.kube, `${CHECK_NAMESPACE_PREFIX}${Math.random().toString(36).slice(2, 8)}`, { until: Date.now() + ENFORCEMENT_WAIT_MS, lifted: true });
  if (problem !== undefined) t.log.log('WARNING', 'Furnish\'s policies are removed, but the server was not seen to stop enforcing them', { problem });
}
