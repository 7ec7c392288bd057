// mutate-namespace: records the creator, marks the namespace pending, ensures the name label,
// restores what must not change. Clone–mutate–diff gives the patch.
import { allow, mutateClone } from '../../admission/response.ts';
import type { KubeObject } from '../../kube/types.ts';
import type { AdmissionHandler } from '../deps.ts';
import { namespaceInfoOf, requireObject, requireResource } from '../request.ts';
import { applyChanges, isChange, mutationsFor } from '../rules/mutate-namespace.ts';

export const mutateNamespace: AdmissionHandler = async (request, { settings }) => {
  requireResource(request, 'mutate-namespace', '', 'namespaces');
  const { operation } = request;
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || request.subResource) return allow(request);
  const object = requireObject(request, 'object');
  const old = operation === 'UPDATE' ? namespaceInfoOf(requireObject(request, 'oldObject'), request) : undefined;
  const outcomes = mutationsFor({ operation, user: request.userInfo, namespace: namespaceInfoOf(object, request), old, settings });
  const changes = outcomes.filter(isChange);
  if (changes.length === 0) return allow(request);
  return mutateClone<KubeObject>(request, object, (draft) => applyChanges((draft.metadata ??= {}), changes), {
    auditAnnotations: { mutations: changes.map((c) => c.reason).join('; ') },
  });
};
