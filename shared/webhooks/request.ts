// Reading what the handlers need out of a decoded AdmissionRequest. A request a webhook cannot
// judge (wrong resource, missing object) is an AdmissionError: a 400, never a decision.
import { AdmissionError } from '../admission/errors.ts';
import type { AdmissionRequest, GroupVersionResource } from '../admission/types.ts';
import type { KubeObject } from '../kube/types.ts';
import type { NamespaceInfo } from '../render/types.ts';

export function requireResource(request: AdmissionRequest, webhook: string, group: string, resource: string): void {
  const r: GroupVersionResource = request.resource;
  if (r.group === group && r.resource === resource) return;
  const expected = group ? `${resource}.${group}` : resource;
  const got = r.group ? `${r.resource}.${r.group}` : r.resource;
  throw new AdmissionError('unsupported-resource', `webhook ${webhook} judges ${expected}, not ${got} (kind ${request.kind.kind}): check its rules`);
}

export function requireObject(request: AdmissionRequest, field: 'object' | 'oldObject'): KubeObject {
  const o = request[field];
  if (!o) throw new AdmissionError('invalid-request', `request.${field} is required for ${request.operation}`);
  return o;
}

export function namespaceInfoOf(object: KubeObject, request: AdmissionRequest): NamespaceInfo {
  const meta = object.metadata ?? {};
  return { name: meta.name || request.name || '', labels: meta.labels ?? {}, annotations: meta.annotations ?? {} };
}

/**
 * Subresources through which a real API server keeps label and annotation changes: judged by the
 * same rules as the namespace itself, or metadata could be changed around them.
 */
export const METADATA_SUBRESOURCES: readonly string[] = ['status', 'finalize'];

/** Whether the request writes the namespace's metadata: the object itself or a subresource above. */
export function judgesMetadataOf(request: AdmissionRequest): boolean {
  return !request.subResource || METADATA_SUBRESOURCES.includes(request.subResource);
}
