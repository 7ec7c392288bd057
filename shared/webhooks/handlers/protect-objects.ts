// protect-objects: refuses anyone but the reconciler changing whether an object is Furnish's or
// writing Furnish's ApplySet parent, and updates and deletions of a protecting template's objects
// by anyone but the reconciler and the system controllers. Everything that can allow without a read does so
// synchronously (the reconciler's own applies, status and no-op updates); otherwise the object's
// template is read fresh (a template that stops protecting stops at once) and decides. A scale
// (`<resource>/scale`) is judged as the update of the object's replicas, the object read fresh.
import { allow, deny } from '../../admission/response.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../admission/types.ts';
import type { PolicySettings } from '../../config/types.ts';
import { templateNamed, type AdmissionHandler, type WebhookDeps } from '../deps.ts';
import type { KubeObject } from '../../kube/types.ts';
import type { RuleOutcome } from '../rules/outcome.ts';
import { JUDGED_AS_OBJECT, protectFirstStep, protectOutcome, SCALE, scaledObject, type ProtectInput } from '../rules/protect-objects.ts';

/**
 * The object as the rules read it. The API server always sends metadata; a malformed review (never
 * the API server's) is judged as an object without any, rather than crashing the webhook.
 */
function objectOf(value: unknown): KubeObject | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const o = value as KubeObject;
  return typeof o.metadata === 'object' && o.metadata !== null && !Array.isArray(o.metadata) ? o : { ...o, metadata: {} };
}

function inputOf(request: AdmissionRequest, settings: PolicySettings): ProtectInput {
  return {
    operation: request.operation,
    user: request.userInfo,
    object: objectOf(request.object),
    oldObject: objectOf(request.oldObject),
    kind: request.kind.kind,
    name: request.name,
    namespace: request.namespace,
    fieldManager: request.options?.fieldManager,
    ...(request.subResource ? { subResource: request.subResource } : {}),
    settings,
  };
}

function respond(request: AdmissionRequest, outcome: RuleOutcome): AdmissionResponse {
  if ('allow' in outcome) return allow(request, { auditAnnotations: { protect: `${outcome.rule}: ${outcome.allow}` } });
  return deny(request, 'deny' in outcome ? outcome.deny : outcome.refused);
}

function judge(request: AdmissionRequest, deps: WebhookDeps, input: ProtectInput): AdmissionResponse | Promise<AdmissionResponse> {
  const first = protectFirstStep(input);
  if (!('lookup' in first)) return respond(request, first);
  const name = first.lookup;
  return templateNamed(deps.templates, name).then(
    (template) => respond(request, protectOutcome(input, name, template)),
    // Fails closed: without the template nobody can tell whether it protects the object.
    (e: unknown) => deny(request, `could not read NamespaceTemplate "${name}", which decides whether ${input.kind} "${request.name ?? ''}" is protected (${(e as Error).message}); retry`, 503),
  );
}

/**
 * A `/scale` carries a Scale, without the object's labels: the object is read fresh and the scale
 * judged as the update of its replicas (scaledObject). Fails closed when it cannot be read.
 */
async function judgeScale(request: AdmissionRequest, deps: WebhookDeps): Promise<AdmissionResponse> {
  const { resource, namespace = '', name = '' } = request;
  const what = `${resource.resource} "${name}" in namespace "${namespace}"`;
  let stored: KubeObject | undefined;
  try {
    if (!deps.objects) throw new Error('no cluster to read it from');
    stored = await deps.objects.get(resource, namespace, name);
  } catch (e) {
    return deny(request, `could not read ${what}, which decides whether scaling it is allowed (${(e as Error).message}); retry`, 503);
  }
  // Gone: nothing to protect (the scale itself then fails with 404).
  if (!stored) return allow(request);
  const input = { ...inputOf(request, deps.settings), kind: stored.kind ?? request.kind.kind, oldObject: stored, object: scaledObject(stored, request.object) };
  return judge(request, deps, input);
}

export const protectObjects: AdmissionHandler = (request, deps) => {
  if (request.subResource === SCALE) return judgeScale(request, deps);
  // Other subresources (status) leave the protected content alone; the registration sends only those judged here.
  if (request.subResource && !JUDGED_AS_OBJECT.includes(request.subResource)) return allow(request);
  return judge(request, deps, inputOf(request, deps.settings));
};
