// Pluggable namespace initializers, as decorators around the existing handlers (handlers/index.ts
// wraps them): each runs the wrapped handler unchanged and adds the initializer rules, so the
// namespace handlers stay as they are. Reads go through deps.initializers; without it (no
// cluster), there are no configured initializers and no stored namespace to look at.
import jsonpatch from 'fast-json-patch';
import type { Operation as PatchOperation } from 'fast-json-patch';
import { allow, allowWithPatch, decodePatch, deny } from '../../admission/response.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../admission/types.ts';
import type { KubeObject } from '../../kube/types.ts';
import type { PolicySettings } from '../../config/types.ts';
import { furnishInitializer, mergeConfigurations, validateInitializationConfiguration } from '../../initializers/config.ts';
import type { Initializer } from '../../initializers/config.ts';
import { CONFIG_KIND, CONFIG_RESOURCE } from '../../initializers/keys.ts';
import { GROUP } from '../../render/types.ts';
import type { AdmissionHandler, WebhookDeps } from '../deps.ts';
import { judgesMetadataOf, namespaceInfoOf, requireObject } from '../request.ts';
import { allowReconciler, allowSystemPrincipals } from '../rules/guard-initializing.ts';
import { initializerMutations } from '../rules/initializers-mutate.ts';
import { guardNeedsInitializers, writesWaitForInitializers } from '../rules/initializers-guard.ts';
import { initializerValidation, needsInitializers } from '../rules/initializers-validate.ts';
import { applyChanges, isChange } from '../rules/mutate-namespace.ts';
import type { MetadataMaps, NamespaceMutationInput } from '../rules/mutate-namespace.ts';
import { resolve } from '../rules/outcome.ts';
import type { RuleOutcome, Verdict } from '../rules/outcome.ts';
import { describeProblems } from './validate-template.ts';

type Response = AdmissionResponse | Promise<AdmissionResponse>;

const then = (r: Response, f: (r: AdmissionResponse) => Response): Response => (r instanceof Promise ? r.then(f) : f(r));

/** Configured initializers, merged; [] without a cluster. */
export async function configuredInitializers(deps: WebhookDeps): Promise<Initializer[]> {
  return mergeConfigurations((await deps.initializers?.configurations()) ?? []).initializers;
}

/** The built-in `furnish` first, then every configured initializer. */
export function knownInitializers(settings: PolicySettings, configured: readonly Initializer[]): Initializer[] {
  return [furnishInitializer(settings.guard.reconciler), ...configured];
}

const unavailable = (request: AdmissionRequest, e: unknown) => deny(request, `could not list ${CONFIG_KIND}s (${(e as Error).message}); retry`, 503);

/**
 * A namespace CREATE or UPDATE, through the object or a subresource that keeps metadata changes
 * (status, finalize): the list could be emptied around the rules otherwise.
 */
function isNamespaceWrite(request: AdmissionRequest): request is AdmissionRequest & { operation: 'CREATE' | 'UPDATE' } {
  return request.resource.group === '' && request.resource.resource === 'namespaces' && (request.operation === 'CREATE' || request.operation === 'UPDATE') && judgesMetadataOf(request);
}

function mutationInput(request: AdmissionRequest & { operation: 'CREATE' | 'UPDATE' }, object: KubeObject, settings: PolicySettings): NamespaceMutationInput {
  const old = request.operation === 'UPDATE' ? namespaceInfoOf(requireObject(request, 'oldObject'), request) : undefined;
  return { operation: request.operation, user: request.userInfo, namespace: namespaceInfoOf(object, request), old, settings };
}

/**
 * The wrapped handler's patch plus the initializer rules', as one patch over /metadata. The rules
 * judge the request's object: the keys they read (the list, the failure reports, the phase at
 * UPDATE, the opt-out) are ones the wrapped handler does not change.
 */
function addInitializerPatch(request: AdmissionRequest & { operation: 'CREATE' | 'UPDATE' }, base: AdmissionResponse, configured: readonly Initializer[], settings: PolicySettings): AdmissionResponse {
  if (!base.allowed) return base;
  const object = requireObject(request, 'object');
  const changes = initializerMutations({ ...mutationInput(request, object, settings), configured }).filter(isChange);
  if (changes.length === 0) return base;
  // Only labels and annotations: clone and diff just those, as mutate-namespace does.
  const { labels, annotations } = object.metadata ?? {};
  const ours: MetadataMaps = {};
  if (labels) ours.labels = labels;
  if (annotations) ours.annotations = annotations;
  // String maps: a copy of each map is a deep copy.
  const draft: MetadataMaps = { ...(labels ? { labels: { ...labels } } : {}), ...(annotations ? { annotations: { ...annotations } } : {}) };
  const baseOps = decodePatch(base).map((op) => ({ ...op, path: op.path.slice('/metadata'.length) })) as PatchOperation[];
  jsonpatch.applyPatch(draft, baseOps, false, true);
  applyChanges(draft, changes);
  const audit = { ...base.auditAnnotations, initializers: changes.map((c) => c.reason).join('; ') };
  return allowWithPatch(request, ours, draft, { warnings: base.warnings, auditAnnotations: audit }, '/metadata');
}

/** mutate-namespace plus the initializer list at CREATE and the phase it leads to at UPDATE. */
export function withInitializerMutations(handler: AdmissionHandler): AdmissionHandler {
  return (request, deps) => {
    const base = handler(request, deps);
    if (!isNamespaceWrite(request)) return base;
    // Without a cluster to read (no configurations) the answer needs no promise.
    if (request.operation === 'UPDATE' || !deps.initializers) return then(base, (r) => addInitializerPatch(request, r, [], deps.settings));
    // Read fresh at every CREATE: the list decides who may write into the new namespace.
    return then(base, (r) => (r.allowed ? configuredInitializers(deps).then((c) => addInitializerPatch(request, r, c, deps.settings), (e: unknown) => unavailable(request, e)) : r));
  };
}

function combine(request: AdmissionRequest, base: AdmissionResponse, verdict: Verdict): AdmissionResponse {
  if (verdict.allowed) return base;
  const denials = [...(base.allowed ? [] : [base.status?.message ?? '']), ...verdict.denials];
  return deny(request, denials.join('; '), verdict.unavailable || base.status?.code === 503 ? 503 : 403);
}

/** validate-namespace plus the rules on the initializer list and failure reports. */
export function withInitializerValidation(handler: AdmissionHandler): AdmissionHandler {
  return (request, deps) => {
    const base = handler(request, deps);
    if (!isNamespaceWrite(request)) return base;
    const input = mutationInput(request, requireObject(request, 'object'), deps.settings);
    const judge = (known: Initializer[]) => (r: AdmissionResponse): Response => {
      const verdict = resolve(initializerValidation({ ...input, known }), deps.authorizer);
      return verdict instanceof Promise ? verdict.then((v) => combine(request, r, v)) : combine(request, r, verdict);
    };
    if (!needsInitializers(input)) return then(base, judge(knownInitializers(deps.settings, [])));
    return configuredInitializers(deps).then((c) => then(base, judge(knownInitializers(deps.settings, c))), (e: unknown) => unavailable(request, e));
  };
}

async function guardOutcome(request: AdmissionRequest & { namespace: string }, deps: WebhookDeps): Promise<RuleOutcome | undefined> {
  const ns = await deps.initializers?.namespace(request.namespace);
  if (!ns) return undefined;
  const configured = guardNeedsInitializers(ns) ? await configuredInitializers(deps) : [];
  return writesWaitForInitializers({ user: request.userInfo, namespace: ns, known: knownInitializers(deps.settings, configured) });
}

/**
 * guard-initializing plus the initializers: the reconciler and the system controllers are let
 * through as before (no look-up); anyone else is judged by the namespace's pending initializers,
 * read fresh, and by the guard's own rules when the namespace has none.
 */
export function withInitializerGuard(handler: AdmissionHandler): AdmissionHandler {
  return (request, deps) => {
    const namespace = request.namespace;
    if (!namespace || request.operation === 'CONNECT' || !deps.initializers) return handler(request, deps);
    const input = { user: request.userInfo, namespace, settings: deps.settings };
    if (allowReconciler(input) ?? allowSystemPrincipals(input)) return handler(request, deps);
    return guardOutcome({ ...request, namespace }, deps).then(
      async (outcome) => {
        if (!outcome) return handler(request, deps);
        const verdict = await resolve([outcome], deps.authorizer);
        return verdict.allowed ? allow(request, { auditAnnotations: { initializers: verdict.reasons.join('; ') } }) : deny(request, verdict.denials.join('; '), verdict.unavailable ? 503 : 403);
      },
      (e: unknown) => deny(request, `could not read namespace "${namespace}" or its initializers (${(e as Error).message}); retry`, 503),
    );
  };
}

/** validate-template also judges NamespaceInitializationConfigurations: one denial listing every problem with its path. */
export function withConfigurationValidation(handler: AdmissionHandler): AdmissionHandler {
  return (request, deps) => {
    if (request.resource.group !== GROUP || request.resource.resource !== CONFIG_RESOURCE) return handler(request, deps);
    if ((request.operation !== 'CREATE' && request.operation !== 'UPDATE') || request.subResource) return allow(request);
    const object = requireObject(request, 'object');
    const problems = validateInitializationConfiguration(object);
    if (problems.length === 0) return allow(request);
    return deny(request, describeProblems(object.metadata?.name ?? request.name ?? '', problems, CONFIG_KIND), 422);
  };
}
