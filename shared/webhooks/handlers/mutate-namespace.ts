// mutate-namespace: records the creator, marks the namespace pending, ensures the name label,
// restores what must not change. Clone–mutate–diff gives the patch.
import { allow, mutateClone } from '../../admission/response.ts';
import { AdmissionError } from '../../admission/errors.ts';
import type { AdmissionHandler } from '../deps.ts';
import { judgesMetadataOf, namespaceInfoOf, requireObject, requireResource } from '../request.ts';
import { applyChanges, isChange, mutationsFor } from '../rules/mutate-namespace.ts';
import type { MetadataMaps } from '../rules/mutate-namespace.ts';

export const mutateNamespace: AdmissionHandler = (request, { settings }) => {
  requireResource(request, 'mutate-namespace', '', 'namespaces');
  const { operation } = request;
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || !judgesMetadataOf(request)) return allow(request);
  const object = requireObject(request, 'object');
  const old = operation === 'UPDATE' ? namespaceInfoOf(requireObject(request, 'oldObject'), request) : undefined;
  const outcomes = mutationsFor({ operation, user: request.userInfo, namespace: namespaceInfoOf(object, request), old, settings });
  const changes = outcomes.filter(isChange);
  if (changes.length === 0) return allow(request);
  // Only labels and annotations are ever changed: clone and diff just those (the patch paths are
  // rooted at /metadata), which keeps the decision in the microseconds.
  if (!object.metadata) throw new AdmissionError('invalid-request', 'request.object.metadata is required');
  const { labels, annotations } = object.metadata;
  const ours: MetadataMaps = {};
  if (labels) ours.labels = labels;
  if (annotations) ours.annotations = annotations;
  return mutateClone(request, ours, (draft) => applyChanges(draft, changes), { auditAnnotations: { mutations: changes.map((c) => c.reason).join('; ') } }, '/metadata');
};
