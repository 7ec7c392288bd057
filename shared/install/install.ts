// `furnish install` and `furnish uninstall` against one cluster: the I/O around plan.ts and
// probes.ts. Install writes Furnish's namespace, CRDs, identities and relay, registers every
// webhook with failurePolicy Ignore, probes each function with server-side dry runs until it
// answers as it must, and only then lets each probed security webhook fail closed (an unprobed one
// stays Ignore, probes.ts says which and why). If a function never
// answers, the registrations stay Ignore and the install fails naming it: nothing is locked out.
// Uninstall removes the registrations first.
import { applyObject, createObject, deleteObject } from '../kube/api.ts';
import type { KubeClient } from '../kube/client.ts';
import { ResourceResolver, resourcePath, type ResourceInfo } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import type { Logger } from '../log.ts';
import { webhookRegistrations, type RegistrationOptions } from '../webhooks/registration.ts';
import { fillObject, isWebhookConfiguration, loadKustomization } from './manifests.ts';
import { failClosedConfigurations, failurePolicies, functionOf, imageReferenceProblem, installOrder, uninstallOrder, withFailurePolicy, type FailurePolicy } from './plan.ts';
import { isProbed, PROBE_RULES, PROBE_USER, PROBES, pendingNamespaceObject, unprobed, type Probe, type ProbeNames, type Unprobed } from './probes.ts';

export const INSTALL_FIELD_MANAGER = 'furnish-install';

export interface InstallTarget {
  /** The installer's own identity (cluster-admin: it writes CRDs, RBAC and registrations, and impersonates the probe user). */
  kube: KubeClient;
  /** The same API server as PROBE_USER (see probes.ts). */
  probeKube: KubeClient;
  log: Logger;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

export interface InstallOptions {
  registration: RegistrationOptions;
  /** Values of the `${FURNISH_*}` variables of infra/ (relay image, cluster id, project). */
  vars: Record<string, string>;
  /** How long the functions have to answer every probe. */
  timeoutMs: number;
  /** Between rounds of probes. */
  intervalMs?: number;
  /** A suffix for the probe objects' names (random by default). */
  probeId?: string;
}

export interface Installed {
  /** The webhooks whose manifest says Fail that no probe checks, left at Ignore, with why. */
  ignored: Unprobed[];
}

/** The install stopped; the registrations that exist are Ignore. */
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

async function apply(t: Pick<InstallTarget, 'kube' | 'log'>, resolver: ResourceResolver, o: KubeObject): Promise<void> {
  const res = await applyObject(t.kube, await resolve(resolver, o), o, { fieldManager: INSTALL_FIELD_MANAGER });
  if (!res.ok) throw new InstallError(`could not apply ${o.kind}/${o.metadata.name}: ${res.error ?? `HTTP ${res.status}`}`);
  t.log.log('INFO', 'applied', { kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) });
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
  for (const [gv, plurals] of byGroupVersion) {
    for (;;) {
      const r = await t.kube.call<{ resources?: { name: string }[] }>({ method: 'GET', path: `/apis/${gv}` });
      const served = new Set((r.data?.resources ?? []).map((x) => x.name));
      if (r.ok && plurals.every((p) => served.has(p))) break;
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
  if (res.ok) t.log.log('INFO', 'deleted', { kind: o.kind, name: o.metadata.name });
}

async function runProbe(t: InstallTarget, resolver: ResourceResolver, probe: Probe, names: ProbeNames): Promise<string | undefined> {
  const object = probe.object(names);
  const client = probe.as === 'probe-user' ? t.probeKube : t.kube;
  const res = await createObject(client, await resolve(resolver, object), object, { dryRun: true, fieldManager: probe.fieldManager ?? INSTALL_FIELD_MANAGER });
  return probe.judge({ status: res.status, data: res.data, error: res.error });
}

/** Rounds of probes until each has passed once, or the deadline; returns what still fails, by webhook. */
async function probeUntilAnswered(t: InstallTarget, resolver: ResourceResolver, webhooks: readonly string[], names: ProbeNames, deadline: number, intervalMs: number): Promise<Map<string, string>> {
  const sleep = t.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const now = t.now ?? Date.now;
  const waiting = new Map(PROBES.filter((p) => webhooks.includes(p.webhook)).map((p) => [p.webhook, p]));
  const why = new Map<string, string>();
  for (;;) {
    // A reconciler may have furnished the probe namespace since the last round: pending again (the installer holds `initialize`).
    let noPendingNamespace: string | undefined;
    if (waiting.has('guard-initializing')) {
      noPendingNamespace = await apply(t, resolver, pendingNamespaceObject(names.pendingNamespace)).then(() => undefined, (e: unknown) => `guard-initializing: its probe namespace: ${(e as Error).message}`);
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
  }
}

/** Installs Furnish in the cluster; resolves once every probed security webhook fails closed. */
export async function install(t: InstallTarget, o: InstallOptions): Promise<Installed> {
  const now = t.now ?? Date.now;
  const deadline = now() + o.timeoutMs;
  const image = o.vars.FURNISH_RELAY_IMAGE;
  const problem = image === undefined ? 'FURNISH_RELAY_IMAGE has no value' : imageReferenceProblem(image);
  if (problem) throw new InstallError(`relay image: ${problem}`);
  const resolver = new ResourceResolver(t.kube);
  const objects = clusterObjects(o.vars);
  const registrations = webhookRegistrations(o.registration) as KubeObject[];
  // Registrations left by an earlier install or a killed `npm start` may fail closed on functions
  // that are gone, and would refuse the writes below: Ignore first.
  const existing = await existingRegistrations(t, resolver, registrations);
  if (existing.length > 0) await register(t, resolver, existing, 'Ignore');
  for (const object of objects) {
    await apply(t, resolver, object);
    if (object.kind === 'CustomResourceDefinition' && objects.at(objects.indexOf(object) + 1)?.kind !== 'CustomResourceDefinition') {
      await waitForCrds(t, objects.filter((x) => x.kind === 'CustomResourceDefinition'), deadline);
    }
  }
  await register(t, resolver, registrations, 'Ignore');
  const manifest = failurePolicies(registrations);
  const webhooks = Object.keys(manifest).map(functionOf);
  const id = o.probeId ?? Math.random().toString(36).slice(2, 8);
  // Not furnish-*: Furnish reserves those names, and the probes must not be refused for their name.
  const names: ProbeNames = { dryRun: `install-dry-run-${id}`, pendingNamespace: `install-probe-${id}`, furnishNamespace: objects.find((x) => x.kind === 'Namespace')!.metadata.name! };
  const rbac = probeRole();
  for (const object of rbac) await apply(t, resolver, object);
  let failing: Map<string, string>;
  try {
    failing = await probeUntilAnswered(t, resolver, webhooks, names, deadline, o.intervalMs ?? 1000);
  } finally {
    for (const object of [...rbac, pendingNamespaceObject(names.pendingNamespace)]) await remove(t, resolver, object).catch((e: unknown) => t.log.log('WARNING', 'could not remove a probe object', { error: (e as Error).message }));
  }
  if (failing.size > 0) {
    const listed = [...failing.values()].map((w) => `  - ${w}`);
    const lockout = await namespaceCreateRefused(t, resolver, names);
    if (lockout === undefined) {
      throw new InstallError([
        `${failing.size} function${failing.size === 1 ? '' : 's'} did not answer as expected within ${Math.round(o.timeoutMs / 1000)} s, so every webhook stays registered with failurePolicy Ignore (nothing is locked out, but nothing is enforced when a function is down):`,
        ...listed,
        'Check the functions\' URL, CA bundle, credential and API access, then run furnish install again.',
      ].join('\n'));
    }
    // A function that answers with a refusal refuses under Ignore too: only removing it unlocks.
    for (const c of registrations) await remove(t, resolver, c);
    throw new InstallError([
      `${failing.size} function${failing.size === 1 ? '' : 's'} did not answer as expected within ${Math.round(o.timeoutMs / 1000)} s:`,
      ...listed,
      `and a namespace create was refused (${lockout}): a webhook that answers with a refusal refuses whatever its failurePolicy, so every registration was removed again (nothing is enforced).`,
      'Fix the functions (a first install: give them the furnish-webhook token, README Deploy), then run furnish install again.',
    ].join('\n'));
  }
  const ignored = unprobed(Object.entries(manifest).filter(([, policy]) => policy === 'Fail').map(([w]) => functionOf(w)));
  for (const { webhook, why } of ignored) t.log.log('WARNING', 'not probed: left at failurePolicy Ignore (not enforced while its function does not answer)', { webhook, why });
  await register(t, resolver, failClosedConfigurations(registrations, isProbed), 'as-planned');
  return { ignored };
}

/** Why the installer's own dry-run namespace create is refused, or undefined when it is admitted. */
async function namespaceCreateRefused(t: InstallTarget, resolver: ResourceResolver, names: ProbeNames): Promise<string | undefined> {
  const probe = PROBES.find((p) => p.webhook === 'mutate-namespace')!;
  const object = probe.object(names);
  const res = await createObject(t.kube, await resolve(resolver, object), object, { dryRun: true, fieldManager: INSTALL_FIELD_MANAGER });
  return res.ok ? undefined : `HTTP ${res.status}: ${res.error ?? ''}`;
}

async function existingRegistrations(t: InstallTarget, resolver: ResourceResolver, registrations: readonly KubeObject[]): Promise<KubeObject[]> {
  const found: KubeObject[] = [];
  for (const c of registrations) {
    const res = await t.kube.call({ method: 'GET', path: resourcePath(await resolve(resolver, c), undefined, c.metadata.name) });
    if (res.ok) found.push(c);
  }
  return found;
}

/** Removes the registrations first, then the rest of infra/ (CRDs, and with them every custom resource, only if `crds`). */
export async function uninstall(t: Pick<InstallTarget, 'kube' | 'log'>, o: { crds: boolean }): Promise<void> {
  const resolver = new ResourceResolver(t.kube);
  // Only the names matter here: no URL nor variable is filled in.
  const registrations = webhookRegistrations({ functionsUrl: 'https://unused' }) as KubeObject[];
  // The probe identity too, should an install have been interrupted while probing.
  for (const object of uninstallOrder([...registrations, ...clusterObjects(), ...probeRole()], { crds: o.crds })) await remove(t, resolver, object);
}
