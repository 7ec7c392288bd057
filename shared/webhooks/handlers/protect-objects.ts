// protect-objects: refuses updates and deletions of a protecting template's objects by anyone but
// the reconciler and the system controllers. Everything that can allow without a read does so
// synchronously (the reconciler's own applies, status and no-op updates); otherwise the object's
// template is read fresh (a template that stops protecting stops at once) and decides.
import { allow, deny } from '../../admission/response.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../admission/types.ts';
import type { PolicySettings } from '../../config/types.ts';
import { templateNamed, type AdmissionHandler } from '../deps.ts';
import type { RuleOutcome } from '../rules/outcome.ts';
import { protectFirstStep, protectOutcome, type ProtectInput } from '../rules/protect-objects.ts';

function inputOf(request: AdmissionRequest, settings: PolicySettings): ProtectInput {
  return {
    operation: request.operation,
    user: request.userInfo,
    object: request.object,
    oldObject: request.oldObject,
    kind: request.kind.kind,
    name: request.name,
    namespace: request.namespace,
    settings,
  };
}

function respond(request: AdmissionRequest, outcome: RuleOutcome): AdmissionResponse {
  if ('allow' in outcome) return allow(request, { auditAnnotations: { protect: `${outcome.rule}: ${outcome.allow}` } });
  return deny(request, 'deny' in outcome ? outcome.deny : outcome.refused);
}

export const protectObjects: AdmissionHandler = (request, deps) => {
  // Subresources (status, scale) are not the object's content: the registration never sends them.
  if (request.subResource) return allow(request);
  const input = inputOf(request, deps.settings);
  const first = protectFirstStep(input);
  if (!('lookup' in first)) return respond(request, first);
  const name = first.lookup;
  return templateNamed(deps.templates, name).then(
    (template) => respond(request, protectOutcome(input, name, template)),
    // Fails closed: without the template nobody can tell whether it protects the object.
    (e: unknown) => deny(request, `could not read NamespaceTemplate "${name}", which decides whether ${request.kind.kind} "${request.name ?? ''}" is protected (${(e as Error).message}); retry`, 503),
  );
};
