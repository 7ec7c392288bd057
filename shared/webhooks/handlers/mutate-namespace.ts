// mutate-namespace: records the creator, marks the namespace pending, ensures the name label,
// restores what must not change. Clone–mutate–diff gives the patch.
import { allow, deny, mutateClone } from '../../admission/response.ts';
import { AdmissionError } from '../../admission/errors.ts';
import type { AdmissionHandler } from '../deps.ts';
import { judgesMetadataOf, namespaceInfoOf, requireObject, requireResource } from '../request.ts';
import { applyChanges, isChange, mutationsFor } from '../rules/mutate-namespace.ts';
import type { MetadataChange, MetadataMaps } from '../rules/mutate-namespace.ts';
import { organizationMutation, withChanges } from '../organizations.ts';

export const mutateNamespace: AdmissionHandler = (request, deps) => {
  requireResource(request, 'mutate-namespace', '', 'namespaces');
  const { operation } = request;
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || !judgesMetadataOf(request)) return allow(request);
  const object = requireObject(request, 'object');
  const namespace = namespaceInfoOf(object, request);
  const old = operation === 'UPDATE' ? namespaceInfoOf(requireObject(request, 'oldObject'), request) : undefined;
  const changes = mutationsFor({ operation, user: request.userInfo, namespace, old, settings: deps.settings }).filter(isChange);
  const respond = (all: MetadataChange[]) => {
    if (all.length === 0) return allow(request);
    // Only labels and annotations are ever changed: clone and diff just those (the patch paths are
    // rooted at /metadata), which keeps the decision in the microseconds.
    if (!object.metadata) throw new AdmissionError('invalid-request', 'request.object.metadata is required');
    const { labels, annotations } = object.metadata;
    const ours: MetadataMaps = {};
    if (labels) ours.labels = labels;
    if (annotations) ours.annotations = annotations;
    return mutateClone(request, ours, (draft) => applyChanges(draft, all), { auditAnnotations: { mutations: all.map((c) => c.reason).join('; ') } }, '/metadata');
  };
  const organization = organizationMutation(request, deps, withChanges(namespace, changes));
  if (!organization) return respond(changes);
  return organization.then(
    (o) => respond(isChange(o) ? [...changes, o] : changes),
    (e: unknown) => deny(request, `could not read Organizations (${(e as Error).message}); retry`, 503),
  );
};
